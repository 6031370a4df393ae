"""``ft.nn``: for now only ``functional`` (the Module shim, layers and losses come later)."""

from . import functional
