;; A component for another world than a hosted bot's: a WASI command (it exports wasi:cli/run).
;; Submit refuses it, naming what it exports and the world expected.
(component
  (core module $m (func (export "run") (result i32) i32.const 0))
  (core instance $i (instantiate $m))
  (func $run (result (result)) (canon lift (core func $i "run")))
  (instance $cli (export "run" (func $run)))
  (export "wasi:cli/run@0.2.0" (instance $cli)))
