;; Hostile module: writes 1 MiB to stderr (256 calls of 4 KiB), then answers "0" (a legal
;; action) on stdout.
;; The host must keep only the first 16 KiB of stderr as the bot's log, and play action 0:
;; a long log is not a failure.
(module
  (import "wasi_snapshot_preview1" "fd_write"
    (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  ;; iovec at 0: 4096 bytes of 'x' from address 4096; iovec at 16: "0\n" at address 32.
  (data (i32.const 0) "\00\10\00\00\00\10\00\00")
  (data (i32.const 16) "\20\00\00\00\02\00\00\00")
  (data (i32.const 32) "0\n")
  (func (export "_start")
    (local $n i32)
    (memory.fill (i32.const 4096) (i32.const 120) (i32.const 4096))
    (loop $again
      (drop (call $fd_write (i32.const 2) (i32.const 0) (i32.const 1) (i32.const 8)))
      (local.set $n (i32.add (local.get $n) (i32.const 1)))
      (br_if $again (i32.lt_u (local.get $n) (i32.const 256))))
    (drop (call $fd_write (i32.const 1) (i32.const 16) (i32.const 1) (i32.const 8)))))
