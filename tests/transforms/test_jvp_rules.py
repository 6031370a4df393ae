"""Contracts: jvp rules against central finite differences; transpose rules by
<ct, J t> == <J^T ct, t>. Both in float64, over every Case that declares them."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import fntorch as ft
from fntorch.fx import dtypes as dt
from fntorch.fx.core import Tensor
from tests.cases import all_cases
from tests.contract import as_list, case_ids, to_np

CASES = all_cases()
JVP_CASES = [c for c in CASES if c.diff_args and dt.float64 in c.dtypes]
LINEAR_CASES = [c for c in CASES if c.linear_args is not None and dt.float64 in c.dtypes]


def _closed(case, args, params, positions):
    def f(*xs):
        full = [Tensor(a) for a in args]
        for i, x in zip(positions, xs):
            full[i] = x
        return case.prim.bind(*full, **params)

    return f


@pytest.mark.parametrize("case", JVP_CASES, ids=case_ids)
@given(data=st.data())
def test_jvp_matches_finite_differences(case, data):
    args, params = case.draw(data, dt.float64)
    rng = np.random.default_rng(data.draw(st.integers(0, 2**31 - 1), label="tangent seed"))
    pos = case.diff_args
    tangents = [rng.standard_normal(np.shape(args[i])) for i in pos]
    f = _closed(case, args, params, pos)
    _, tout = ft.jvp(
        f, tuple(Tensor(np.array(args[i])) for i in pos), tuple(Tensor(t) for t in tangents)
    )

    def ref_at(sign):
        moved = list(args)
        for i, t in zip(pos, tangents):
            moved[i] = np.asarray(args[i]) + sign * case.fd_eps * t
        return [np.asarray(o, np.float64) for o in as_list(case.reference(*moved, **params))]

    plus, minus = ref_at(1.0), ref_at(-1.0)
    for got, p, m in zip(as_list(tout), plus, minus):
        fd = (p - m) / (2 * case.fd_eps)
        g = to_np(got)
        if g.dtype == dt.float0:
            continue
        np.testing.assert_allclose(
            g, fd, rtol=case.fd_rtol, atol=case.fd_atol, equal_nan=True, err_msg=case.name
        )


@pytest.mark.parametrize("case", LINEAR_CASES, ids=case_ids)
@given(data=st.data())
def test_transpose_by_dot_product(case, data):
    args, params = case.draw(data, dt.float64)
    rng = np.random.default_rng(data.draw(st.integers(0, 2**31 - 1), label="seed"))
    pos = case.linear_args
    f = _closed(case, args, params, pos)
    primals = tuple(Tensor(np.array(args[i])) for i in pos)
    t = [rng.standard_normal(np.shape(args[i])) for i in pos]
    _, jt = ft.jvp(f, primals, tuple(Tensor(x) for x in t))
    out, vjp_fn = ft.vjp(f, *primals)
    outs = as_list(out)
    cts = [rng.standard_normal(o.shape) for o in outs]
    ct_arg = [Tensor(c) for c in cts] if isinstance(out, list) else Tensor(cts[0])
    jtct = vjp_fn(ct_arg)
    lhs = sum(float(np.sum(c * to_np(j))) for c, j in zip(cts, as_list(jt)))
    rhs = sum(float(np.sum(to_np(g) * x)) for g, x in zip(jtct, t))
    assert np.isclose(lhs, rhs, rtol=1e-8, atol=1e-8), (
        f"{case.name}: <ct, J t> = {lhs} but <J^T ct, t> = {rhs}"
    )
