;; Hostile module: sleeps. It asks poll_oneoff to wait one hour on the monotonic clock, then
;; logs on stderr how long the clock says it waited, and answers "0".
;; The host must return from poll_oneoff at once (every subscription ready): no thread waits,
;; the decision plays action 0 within its fuel, and the virtual clock shows far less than an
;; hour (it advances with the fuel used, 1 ns per unit).
(module
  (import "wasi_snapshot_preview1" "fd_write"
    (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "poll_oneoff"
    (func $poll_oneoff (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "clock_time_get"
    (func $clock_time_get (param i32 i64 i32) (result i32)))
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
  (data (i32.const 64) "poll_oneoff=\00")
  (data (i32.const 96) " events=\00")
  (data (i32.const 128) " waited_ns=\00")
  (func (export "_start")
    (local $before i64) (local $r i32)
    (drop (call $clock_time_get (i32.const 1) (i64.const 1) (i32.const 600)))
    (local.set $before (i64.load (i32.const 600)))
    ;; One subscription at 512 (48 bytes): userdata 7, tag 0 (clock), monotonic clock (1),
    ;; timeout 3600 s, precision 1 ns, flags 0 (relative). The event goes to 576.
    (i64.store (i32.const 512) (i64.const 7))
    (i32.store8 (i32.const 520) (i32.const 0))
    (i32.store (i32.const 528) (i32.const 1))
    (i64.store (i32.const 536) (i64.const 3600000000000))
    (i64.store (i32.const 544) (i64.const 1))
    (i32.store16 (i32.const 552) (i32.const 0))
    (local.set $r (call $poll_oneoff (i32.const 512) (i32.const 576) (i32.const 1) (i32.const 608)))
    (drop (call $clock_time_get (i32.const 1) (i64.const 1) (i32.const 600)))
    (call $say (i32.const 64))
    (call $num (i64.extend_i32_u (local.get $r)))
    (call $say (i32.const 96))
    (call $num (i64.extend_i32_u (i32.load (i32.const 608))))
    (call $say (i32.const 128))
    (call $num (i64.sub (i64.load (i32.const 600)) (local.get $before)))
    (call $flush)
    (call $write (i32.const 1) (i32.const 16) (i32.const 2))))
