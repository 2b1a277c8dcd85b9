;; Hostile module: traps at once (`unreachable`) without printing.
;; The host must end the decision with cause `trap` and play the seat's default action.
(module
  (memory (export "memory") 1)
  (func (export "_start")
    unreachable))
