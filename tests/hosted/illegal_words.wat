;; Hostile module: answers an action in words that is never legal ("fly to the moon").
;; The host must end the decision with cause `bad output` (quoting what it printed) and play
;; the seat's default action.
(module
  (import "wasi_snapshot_preview1" "fd_write"
    (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  (data (i32.const 0) "\10\00\00\00\10\00\00\00")
  (data (i32.const 16) "fly to the moon\n")
  (func (export "_start")
    (drop (call $fd_write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 8)))))
