"""Workloads that wait for a feature: each prints one 'not yet available' row and
measures nothing. When the feature lands, replace the entry with a module of its own
."""

from .._harness import Workload, register

for _id, _title, _why in [
    ("W8", "tanh RNN, scan forward + gradient, jit", "needs ft.scan (issue 5)"),
    ("W10", "digits CNN, one epoch through the nn.Module shim", "needs the ft.nn shim"),
]:
    register(Workload(_id, _title, pending=_why))
