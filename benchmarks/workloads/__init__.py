"""One module per workload; importing this package registers them all."""

from . import pending, w1_dispatch, w6_per_example_grads, w7_hessian, w9_matmul  # noqa: F401
