"""Contracts: jvp rules against central finite differences; transpose rules by
<ct, J t> == <J^T ct, t>. Both in float64 and complex128 (the dtypes of the two a Case
has), over every Case that declares them.

For complex values the pairing is ``Re(sum(a * b))``, the real inner product of (re, im)
pairs without conjugation: JAX's transpose of a complex-linear map is its transpose,
and the real-linear ``real``, ``imag`` and ``conj`` transpose under this pairing."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import fntorch as ft
from fntorch.fx import dtypes as dt
from fntorch.fx.core import Tensor
from tests.cases import all_cases
from tests.contract import as_list, derivative_dtypes, standard_normal, to_np

CASES = all_cases()
JVP_CASES = [
    pytest.param(c, d, id=f"{c.name}-{d}")
    for c in CASES
    if c.diff_args
    for d in derivative_dtypes(c)
]
LINEAR_CASES = [
    pytest.param(c, d, id=f"{c.name}-{d}")
    for c in CASES
    if c.linear_args is not None
    for d in derivative_dtypes(c)
]


def _pair(a, b) -> float:
    return float(np.real(np.sum(np.asarray(a) * np.asarray(b))))


def _closed(case, args, params, positions):
    def f(*xs):
        full = [Tensor(a) for a in args]
        for i, x in zip(positions, xs):
            full[i] = x
        return case.prim.bind(*full, **params)

    return f


@pytest.mark.parametrize("case, dtype", JVP_CASES)
@given(data=st.data())
def test_jvp_matches_finite_differences(case, dtype, data):
    args, params = case.draw(data, dtype)
    rng = np.random.default_rng(data.draw(st.integers(0, 2**31 - 1), label="tangent seed"))
    pos = case.diff_args
    tangents = [standard_normal(rng, np.shape(args[i]), np.asarray(args[i]).dtype) for i in pos]
    f = _closed(case, args, params, pos)
    _, tout = ft.jvp(
        f, tuple(Tensor(np.array(args[i])) for i in pos), tuple(Tensor(t) for t in tangents)
    )

    def ref_at(sign):
        moved = list(args)
        for i, t in zip(pos, tangents):
            moved[i] = np.asarray(args[i]) + sign * case.fd_eps * t
        outs = as_list(case.reference(*moved, **params))
        return [np.asarray(o, np.result_type(o, np.float64)) for o in outs]

    plus, minus = ref_at(1.0), ref_at(-1.0)
    for got, p, m in zip(as_list(tout), plus, minus):
        fd = (p - m) / (2 * case.fd_eps)
        g = to_np(got)
        if g.dtype == dt.float0:
            continue
        np.testing.assert_allclose(
            g, fd, rtol=case.fd_rtol, atol=case.fd_atol, equal_nan=True, err_msg=case.name
        )


@pytest.mark.parametrize("case, dtype", LINEAR_CASES)
@given(data=st.data())
def test_transpose_by_dot_product(case, dtype, data):
    args, params = case.draw(data, dtype)
    rng = np.random.default_rng(data.draw(st.integers(0, 2**31 - 1), label="seed"))
    pos = case.linear_args
    f = _closed(case, args, params, pos)
    primals = tuple(Tensor(np.array(args[i])) for i in pos)
    t = [standard_normal(rng, np.shape(args[i]), np.asarray(args[i]).dtype) for i in pos]
    _, jt = ft.jvp(f, primals, tuple(Tensor(x) for x in t))
    out, vjp_fn = ft.vjp(f, *primals)
    outs = as_list(out)
    cts = [standard_normal(rng, o.shape, o.dtype) for o in outs]
    ct_arg = [Tensor(c) for c in cts] if isinstance(out, list) else Tensor(cts[0])
    jtct = vjp_fn(ct_arg)
    lhs = sum(_pair(c, to_np(j)) for c, j in zip(cts, as_list(jt)))
    rhs = sum(_pair(to_np(g), x) for g, x in zip(jtct, t))
    assert np.isclose(lhs, rhs, rtol=1e-8, atol=1e-8), (
        f"{case.name}: <ct, J t> = {lhs} but <J^T ct, t> = {rhs}"
    )
