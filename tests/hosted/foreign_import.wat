;; Hostile module: imports a function from outside `wasi_snapshot_preview1` (`env.steal`),
;; as a module built for another host would.
;; The host must refuse it when it is submitted, naming the import `env::steal`.
(module
  (import "env" "steal" (func $steal (result i32)))
  (memory (export "memory") 1)
  (func (export "_start")
    (drop (call $steal))))
