"""``ft.optim``: optimizers, pure and stateful, arrive with the nn shim (a later issue)."""
