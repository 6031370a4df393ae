"""Workloads that wait for a feature: each prints one 'not yet available' row and
measures nothing. When the feature lands, replace the entry with a module of its own
(and add the jit variants of W6 and W7 to their modules with ``mode="jit"``)."""

from .._harness import Workload, register

_JIT = "needs ft.jit (issue 4)"

for _id, _title, _why in [
    ("W2", "fused tanh-GELU on 4,194,304 elements, jit", _JIT),
    ("W3", "softmax over the last axis of (4096, 1024), jit", _JIT),
    ("W4", "layernorm over the last axis of (4096, 1024), jit", _JIT),
    ("W5", "MLP 784-512-512-10 jit'ed SGD training step", _JIT),
    ("W8", "tanh RNN, scan forward + gradient, jit", "needs ft.scan (issue 5) and ft.jit"),
    ("W10", "digits CNN, one epoch through the nn.Module shim", "needs the ft.nn shim"),
]:
    register(Workload(_id, _title, pending=_why))
