"""``ft.linalg``: the Array API standard's linear algebra extension (2023.12), plus
``torch.linalg``'s ``solve_triangular``, ``lstsq``, ``lu_factor``, ``lu_solve``, ``norm``
``multi_dot``, ``eig`` and ``eigvals`` (complex results). Every function but
``lu_solve`` takes complex matrices too, differentiably (JAX's rules; ``eig``'s
eigenvectors have no derivative, as in JAX).

Batched over leading dims, differentiable, batchable and compiled by ``ft.jit`` through
the decomposition primitives of ``_prims_decomp`` (library steps under ``jit``).

>>> import fntorch as ft
>>> ft.linalg.det(ft.linalg.inv(ft.asarray([[2.0, 0.0], [0.0, 4.0]]))).item()
0.125
"""

from ._api_linalg import matmul, matrix_transpose, outer, tensordot, vecdot
from ._api_linalg_eig import EigResult, eig, eigvals
from ._api_linalg_ext import (
    EighResult,
    LstsqResult,
    LUFactorResult,
    QRResult,
    SlogdetResult,
    SVDResult,
    cholesky,
    det,
    eigh,
    eigvalsh,
    inv,
    lstsq,
    lu_factor,
    lu_solve,
    matrix_power,
    matrix_rank,
    pinv,
    qr,
    slogdet,
    solve,
    solve_triangular,
    svd,
    svdvals,
)
from ._api_linalg_norms import (
    cross,
    diagonal,
    matrix_norm,
    multi_dot,
    norm,
    trace,
    vector_norm,
)

__all__ = [
    "cholesky", "cross", "det", "diagonal", "eigh", "eigvalsh", "inv", "matmul",
    "matrix_norm", "matrix_power", "matrix_rank", "matrix_transpose", "outer", "pinv", "qr",
    "slogdet", "solve", "svd", "svdvals", "tensordot", "trace", "vecdot", "vector_norm",
    "solve_triangular", "lstsq", "lu_factor", "lu_solve", "norm", "multi_dot", "eig",
    "eigvals", "EigResult", "EighResult", "QRResult", "SVDResult", "SlogdetResult",
    "LUFactorResult", "LstsqResult",
]  # fmt: skip
