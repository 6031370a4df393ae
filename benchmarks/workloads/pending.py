"""Workloads that wait for a feature: each prints one 'not yet available' row and
measures nothing. When the feature lands, replace the entry with a module of its own.
(W8 registers itself as pending in ``w8_scan_rnn`` while ``ft.scan`` is missing.)"""

from .._harness import Workload, register

for _id, _title, _why in []:
    register(Workload(_id, _title, pending=_why))
