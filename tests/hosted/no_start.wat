;; Hostile module: a library (a "reactor"), not a command: it exports no `_start`.
;; The host must refuse it when it is submitted, saying that `_start` is missing.
(module
  (memory (export "memory") 1)
  (func (export "decide") (result i32)
    (i32.const 0)))
