;; Hostile module: loops forever in `_start` and never prints.
;; The host must stop it when the decision's fuel runs out (cause `fuel`), play the seat's
;; default action, and keep running other decisions meanwhile.
(module
  (memory (export "memory") 1)
  (func (export "_start")
    (loop $forever (br $forever))))
