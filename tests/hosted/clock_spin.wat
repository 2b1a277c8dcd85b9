;; Hostile module: waits on the clock the hard way. It reads the realtime clock, then spins
;; calling clock_time_get until ten seconds have passed, then answers "0".
;; The host's clock is virtual (the logged record's time plus the fuel used), so the ten
;; seconds would cost ten billion units of fuel: the host must end the decision with cause
;; `fuel` and play the seat's default action, the same on every rerun.
(module
  (import "wasi_snapshot_preview1" "fd_write"
    (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "clock_time_get"
    (func $clock_time_get (param i32 i64 i32) (result i32)))
  (memory (export "memory") 1)
  (data (i32.const 16) "0\n")
  (func (export "_start")
    (local $start i64)
    (drop (call $clock_time_get (i32.const 0) (i64.const 1) (i32.const 600)))
    (local.set $start (i64.load (i32.const 600)))
    (loop $spin
      (drop (call $clock_time_get (i32.const 0) (i64.const 1) (i32.const 600)))
      (br_if $spin (i64.lt_u (i64.sub (i64.load (i32.const 600)) (local.get $start))
                             (i64.const 10000000000))))
    (i32.store (i32.const 0) (i32.const 16))
    (i32.store (i32.const 4) (i32.const 2))
    (drop (call $fd_write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 8)))))
