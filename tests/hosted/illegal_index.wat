;; Hostile module: answers "1000000", an index far past the end of `legal_actions`.
;; The host must end the decision with cause `bad output` (quoting what it printed) and play
;; the seat's default action.
(module
  (import "wasi_snapshot_preview1" "fd_write"
    (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  (data (i32.const 0) "\10\00\00\00\08\00\00\00")
  (data (i32.const 16) "1000000\n")
  (func (export "_start")
    (drop (call $fd_write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 8)))))
