;; Hostile module: floods stdout, 4 KiB per call, forever.
;; The host must stop it once stdout passes 64 KiB (cause `bad output`) without buffering the
;; rest, and play the seat's default action.
(module
  (import "wasi_snapshot_preview1" "fd_write"
    (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  ;; One iovec at 0: 4096 bytes from address 4096 (zeros: the contents do not matter).
  (data (i32.const 0) "\00\10\00\00\00\10\00\00")
  (func (export "_start")
    (loop $again
      (drop (call $fd_write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 8)))
      (br $again))))
