"""Pure numerical kernels: no estimator imports, no I/O, no warnings in hot loops."""
