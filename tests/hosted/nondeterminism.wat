;; Probe of everything a module could read that might differ between two runs: 16 bytes of
;; random_get, the realtime and monotonic clocks (twice: before and after some work), the
;; clocks' resolution, the argument and environment sizes. It logs them all on stderr as one
;; line and answers "0".
;; The host must give the same line on every rerun of the same decision (same module, seed,
;; bot, seat and seq), a different random draw for another seq, one argument and an empty
;; environment.
(module
  (import "wasi_snapshot_preview1" "fd_write"
    (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "random_get"
    (func $random_get (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "clock_time_get"
    (func $clock_time_get (param i32 i64 i32) (result i32)))
  (import "wasi_snapshot_preview1" "clock_res_get"
    (func $clock_res_get (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "args_sizes_get"
    (func $args_sizes_get (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "environ_sizes_get"
    (func $environ_sizes_get (param i32 i32) (result i32)))
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
  (data (i32.const 64) "random=\00")
  (data (i32.const 96) " \00")
  (data (i32.const 128) " realtime=\00")
  (data (i32.const 160) " monotonic=\00")
  (data (i32.const 192) " later=\00")
  (data (i32.const 224) " resolution=\00")
  (data (i32.const 256) " args=\00")
  (data (i32.const 288) " args_bytes=\00")
  (data (i32.const 320) " environ=\00")
  ;; Appends clock `id`'s time.
  (func $time (param $id i32)
    (drop (call $clock_time_get (local.get $id) (i64.const 1) (i32.const 600)))
    (call $num (i64.load (i32.const 600))))
  (func (export "_start")
    (local $i i32)
    (drop (call $random_get (i32.const 512) (i32.const 16)))
    (call $say (i32.const 64))
    (call $num (i64.load (i32.const 512)))
    (call $say (i32.const 96))
    (call $num (i64.load (i32.const 520)))
    (call $say (i32.const 128))
    (call $time (i32.const 0))
    (call $say (i32.const 160))
    (call $time (i32.const 1))
    ;; some work, so that the later reading has fuel behind it
    (loop $work
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $work (i32.lt_u (local.get $i) (i32.const 100000))))
    (call $say (i32.const 192))
    (call $time (i32.const 1))
    (call $say (i32.const 224))
    (drop (call $clock_res_get (i32.const 1) (i32.const 600)))
    (call $num (i64.load (i32.const 600)))
    (drop (call $args_sizes_get (i32.const 608) (i32.const 612)))
    (call $say (i32.const 256))
    (call $num (i64.extend_i32_u (i32.load (i32.const 608))))
    (call $say (i32.const 288))
    (call $num (i64.extend_i32_u (i32.load (i32.const 612))))
    (drop (call $environ_sizes_get (i32.const 608) (i32.const 612)))
    (call $say (i32.const 320))
    (call $num (i64.extend_i32_u (i32.load (i32.const 608))))
    (call $flush)
    (call $write (i32.const 1) (i32.const 16) (i32.const 2))))
