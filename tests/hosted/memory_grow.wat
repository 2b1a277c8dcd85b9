;; Hostile module: a memory bomb. Grows its memory 1 MiB at a time until the host refuses
;; (memory.grow answers -1), then aborts as a program whose allocator failed does.
;; The host must refuse growth past the ladder's memory per instance (64 MiB by default) and
;; end the decision with cause `memory`, playing the seat's default action.
(module
  (memory (export "memory") 1)
  (func (export "_start")
    (loop $more
      (br_if $more (i32.ne (memory.grow (i32.const 16)) (i32.const -1))))
    unreachable))
