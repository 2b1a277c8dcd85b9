;; Hostile module: tries the network for real. It accepts a connection on fd 3 (sock_accept),
;; receives and sends on fd 3 (sock_recv, sock_send) and shuts it down (sock_shutdown); it logs
;; each errno on stderr. It answers "0" only if every call was refused, "escaped" otherwise.
;; The host must link these calls (the module loads) and answer each with ENOSYS (52) or EBADF
;; (8), never a socket; so the decision plays action 0 and the log shows the errnos.
(module
  (import "wasi_snapshot_preview1" "fd_write"
    (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "sock_accept"
    (func $sock_accept (param i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "sock_recv"
    (func $sock_recv (param i32 i32 i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "sock_send"
    (func $sock_send (param i32 i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "sock_shutdown"
    (func $sock_shutdown (param i32 i32) (result i32)))
  (memory (export "memory") 1)
  ;; A log line built at 1024.. ($say appends a NUL-terminated string, $num a decimal number),
  ;; written to stderr by $flush; digits are made at 960..1000.
  (global $at (mut i32) (i32.const 1024))
  (func $say (param $p i32)
    (block $done
      (loop $next
        (br_if $done (i32.eqz (i32.load8_u (local.get $p))))
        (i32.store8 (global.get $at) (i32.load8_u (local.get $p)))
        (global.set $at (i32.add (global.get $at) (i32.const 1)))
        (local.set $p (i32.add (local.get $p) (i32.const 1)))
        (br $next))))
  (func $num (param $v i64)
    (local $p i32)
    (local.set $p (i32.const 1000))
    (loop $digit
      (local.set $p (i32.sub (local.get $p) (i32.const 1)))
      (i64.store8 (local.get $p) (i64.add (i64.const 48) (i64.rem_u (local.get $v) (i64.const 10))))
      (local.set $v (i64.div_u (local.get $v) (i64.const 10)))
      (br_if $digit (i64.ne (local.get $v) (i64.const 0))))
    (memory.copy (global.get $at) (local.get $p) (i32.sub (i32.const 1000) (local.get $p)))
    (global.set $at (i32.add (global.get $at) (i32.sub (i32.const 1000) (local.get $p)))))
  ;; Writes `len` bytes at `ptr` to `fd` through the iovec at 0.
  (func $write (param $fd i32) (param $ptr i32) (param $len i32)
    (i32.store (i32.const 0) (local.get $ptr))
    (i32.store (i32.const 4) (local.get $len))
    (drop (call $fd_write (local.get $fd) (i32.const 0) (i32.const 1) (i32.const 8))))
  (func $flush
    (call $say (i32.const 48))
    (call $write (i32.const 2) (i32.const 1024) (i32.sub (global.get $at) (i32.const 1024))))
  (data (i32.const 16) "0\n")
  (data (i32.const 48) "\n\00")
  (data (i32.const 64) "sock_accept(3)=\00")
  (data (i32.const 96) " sock_recv(3)=\00")
  (data (i32.const 128) " sock_send(3)=\00")
  (data (i32.const 160) " sock_shutdown(3)=\00")
  (data (i32.const 192) "escaped\n\00")
  ;; Whether an errno is one of the two the host may answer.
  (func $refused (param $errno i32) (result i32)
    (i32.or (i32.eq (local.get $errno) (i32.const 8)) (i32.eq (local.get $errno) (i32.const 52))))
  (func (export "_start")
    (local $r i32) (local $ok i32)
    (local.set $ok (i32.const 1))
    ;; one iovec at 528: 256 bytes at 600
    (i32.store (i32.const 528) (i32.const 600))
    (i32.store (i32.const 532) (i32.const 256))
    (call $say (i32.const 64))
    (local.set $r (call $sock_accept (i32.const 3) (i32.const 0) (i32.const 520)))
    (call $num (i64.extend_i32_u (local.get $r)))
    (local.set $ok (i32.and (local.get $ok) (call $refused (local.get $r))))
    (call $say (i32.const 96))
    (local.set $r (call $sock_recv (i32.const 3) (i32.const 528) (i32.const 1) (i32.const 0)
      (i32.const 540) (i32.const 544)))
    (call $num (i64.extend_i32_u (local.get $r)))
    (local.set $ok (i32.and (local.get $ok) (call $refused (local.get $r))))
    (call $say (i32.const 128))
    (local.set $r (call $sock_send (i32.const 3) (i32.const 528) (i32.const 1) (i32.const 0)
      (i32.const 540)))
    (call $num (i64.extend_i32_u (local.get $r)))
    (local.set $ok (i32.and (local.get $ok) (call $refused (local.get $r))))
    (call $say (i32.const 160))
    (local.set $r (call $sock_shutdown (i32.const 3) (i32.const 3)))
    (call $num (i64.extend_i32_u (local.get $r)))
    (local.set $ok (i32.and (local.get $ok) (call $refused (local.get $r))))
    (call $flush)
    (if (local.get $ok)
      (then (call $write (i32.const 1) (i32.const 16) (i32.const 2)))
      (else (call $write (i32.const 1) (i32.const 192) (i32.const 8))))))
