"""Cases of the debugging primitive ``debug_callback`` (see tests/cases/__init__.py).

Its result is a token (a 0-d bool ``True``); the case's callback records nothing and
prints nothing, so the contracts check the token and that every table runs it.
"""

from __future__ import annotations

import numpy as np

from fntorch.ops._prims_debug import debug_callback_p

from . import Case, array, shapes


def _quiet(*arrays):
    """A callback that checks it gets host arrays and prints nothing."""
    assert all(isinstance(a, np.ndarray) for a in arrays)


def _draw(data, dtype):
    x = array(data, data.draw(shapes(0, 2, 0, 3), label="shape"), dtype)
    return [x], dict(callback=_quiet)


CASES = [
    Case(
        debug_callback_p,
        _draw,
        lambda x, callback: np.asarray(True),
        exact=True,
        extra={"export": False},  # a Python callback: the export format holds none
    ),
]
