"""``ft.linalg.eig`` and ``eigvals``: eigenvalues (and right eigenvectors) of general
square matrices, as ``torch.linalg.eig``/``eigvals`` and ``jnp.linalg.eig``: complex
results (complex64 for float32 or complex64 input, complex128 for float64 or
complex128), through the ``eig`` primitive (numpy's LAPACK geev). Derivatives are JAX's:
of the eigenvalues only (``diag(V^-1 dA V)``, infinite where two eigenvalues meet);
differentiating ``eig``'s eigenvectors raises ``NotImplementedError``, as in JAX.
"""

from __future__ import annotations

from typing import NamedTuple

from ..fx.core import Tensor
from . import _prims_decomp as d
from ._api_linalg_ext import as_float_matrix

__all__ = ["EigResult", "eig", "eigvals"]


class EigResult(NamedTuple):
    """``eig``'s result: ``eigenvalues`` and ``eigenvectors`` (columns), complex.

    >>> import fntorch as ft
    >>> ft.linalg.eig(ft.eye(2)).eigenvalues.tolist()
    [(1+0j), (1+0j)]
    """

    eigenvalues: Tensor
    eigenvectors: Tensor


def eig(x, /) -> EigResult:
    """Eigenvalues and right eigenvectors (unit-norm columns, ``x @ v = v * w``) of a
    square ``x``, complex, in LAPACK's order.

    >>> import fntorch as ft
    >>> ft.linalg.eig(ft.asarray([[0.0, -1.0], [1.0, 0.0]])).eigenvalues.tolist()
    [1j, -1j]
    """
    x = as_float_matrix("eig", x, square=True, complex_ok=True)
    w, v = d.eig(x, vectors=True)
    return EigResult(w, v)


def eigvals(x, /) -> Tensor:
    """Eigenvalues of a square ``x``, complex (differentiable, as JAX's).

    >>> import fntorch as ft
    >>> ft.linalg.eigvals(ft.asarray([[2.0, 1.0], [0.0, 3.0]])).tolist()
    [(2+0j), (3+0j)]
    """
    x = as_float_matrix("eigvals", x, square=True, complex_ok=True)
    return d.eig(x, vectors=False)[0]
