;; Hostile module: tries to read a file of the host for real. It asks for a preopened directory
;; (fd_prestat_get on fd 3), opens etc/passwd under fd 3 and /etc/passwd under fd 0 with
;; path_open, and reads fd 3; it logs each errno on stderr. It answers "0" only if every call
;; was refused, "escaped" otherwise.
;; The host must link these calls (the module loads) and answer each with ENOSYS (52) or EBADF
;; (8), never a host resource; so the decision plays action 0 and the log shows the errnos.
(module
  (import "wasi_snapshot_preview1" "fd_write"
    (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_prestat_get"
    (func $fd_prestat_get (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "path_open"
    (func $path_open (param i32 i32 i32 i32 i32 i64 i64 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_read"
    (func $fd_read (param i32 i32 i32 i32) (result i32)))
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
  (data (i32.const 64) "fd_prestat_get(3)=\00")
  (data (i32.const 96) " path_open(3, etc/passwd)=\00")
  (data (i32.const 128) " path_open(0, /etc/passwd)=\00")
  (data (i32.const 160) " fd_read(3)=\00")
  (data (i32.const 192) "escaped\n\00")
  (data (i32.const 224) "etc/passwd\00")
  (data (i32.const 256) "/etc/passwd\00")
  ;; Whether an errno is one of the two the host may answer.
  (func $refused (param $errno i32) (result i32)
    (i32.or (i32.eq (local.get $errno) (i32.const 8)) (i32.eq (local.get $errno) (i32.const 52))))
  (func (export "_start")
    (local $r i32) (local $ok i32)
    (local.set $ok (i32.const 1))
    (call $say (i32.const 64))
    (local.set $r (call $fd_prestat_get (i32.const 3) (i32.const 512)))
    (call $num (i64.extend_i32_u (local.get $r)))
    (local.set $ok (i32.and (local.get $ok) (call $refused (local.get $r))))
    (call $say (i32.const 96))
    ;; rights: fd_read (bit 1); the opened fd would be written at 520
    (local.set $r (call $path_open (i32.const 3) (i32.const 1) (i32.const 224) (i32.const 10)
      (i32.const 0) (i64.const 2) (i64.const 0) (i32.const 0) (i32.const 520)))
    (call $num (i64.extend_i32_u (local.get $r)))
    (local.set $ok (i32.and (local.get $ok) (call $refused (local.get $r))))
    (call $say (i32.const 128))
    (local.set $r (call $path_open (i32.const 0) (i32.const 1) (i32.const 256) (i32.const 11)
      (i32.const 0) (i64.const 2) (i64.const 0) (i32.const 0) (i32.const 520)))
    (call $num (i64.extend_i32_u (local.get $r)))
    (local.set $ok (i32.and (local.get $ok) (call $refused (local.get $r))))
    (call $say (i32.const 160))
    ;; one iovec at 528: 256 bytes at 600; the count read at 536
    (i32.store (i32.const 528) (i32.const 600))
    (i32.store (i32.const 532) (i32.const 256))
    (local.set $r (call $fd_read (i32.const 3) (i32.const 528) (i32.const 1) (i32.const 536)))
    (call $num (i64.extend_i32_u (local.get $r)))
    (local.set $ok (i32.and (local.get $ok) (call $refused (local.get $r))))
    (call $flush)
    (if (local.get $ok)
      (then (call $write (i32.const 1) (i32.const 16) (i32.const 2)))
      (else (call $write (i32.const 1) (i32.const 192) (i32.const 8))))))
