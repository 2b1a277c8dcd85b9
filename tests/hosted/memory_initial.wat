;; Hostile module: asks for 128 MiB of memory up front (2048 pages), twice the default memory
;; per instance, so it cannot even be instantiated within the budget.
;; The host must refuse it when it is submitted (the validation run fails with cause `memory`),
;; and if it ever runs, end the decision with cause `memory`.
(module
  (memory (export "memory") 2048)
  (func (export "_start")))
