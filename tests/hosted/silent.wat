;; Hostile module: returns from `_start` without printing anything.
;; The host must end the decision with cause `bad output` (no line) and play the seat's
;; default action.
(module
  (memory (export "memory") 1)
  (func (export "_start")))
