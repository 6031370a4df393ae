"""One module per workload; importing this package registers them all."""

from . import (  # noqa: F401
    w1_dispatch,
    w2_gelu,
    w3_softmax,
    w4_layernorm,
    w5_mlp_step,
    w6_per_example_grads,
    w7_hessian,
    w8_scan_rnn,
    w9_matmul,
    w10_digits_cnn,
    w11_gpt_step,
    w11_new_process,
    w12_solve,
    w13_fft,
    w14_ddp_digits,
)
