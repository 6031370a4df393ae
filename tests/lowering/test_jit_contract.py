"""Contract: ``jit(prim.bind)`` equals eager ``prim.bind`` for every primitive Case.

Two variants per case: the operands passed straight in, and every operand reversed
inside the function (so kernels read negative-stride views). Tolerance: the case's own
(at least rtol 1e-5 for float32, the documented accuracy of the kernels' math
library); integer, bool and exact cases bit for bit.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fntorch.fx import dtypes as dt
from fntorch.fx.core import Tensor
from fntorch.ops import lax
from fntorch.transforms.jit import jit
from tests.cases import all_cases
from tests.contract import as_list, assert_close, case_ids

CASES = all_cases()


def _check(case, f, args):
    eager = as_list(f(*[Tensor(np.asarray(a)) for a in args]))
    got = as_list(jit(f)(*[Tensor(np.asarray(a)) for a in args]))
    assert len(got) == len(eager)
    for g, e in zip(got, eager):
        assert g.shape == e.shape and g.dtype == e.dtype, case.name
        exact = case.exact or not dt.is_inexact(e.dtype)
        assert_close(
            g, e._value, rtol=max(case.rtol, 1e-5), atol=case.atol, exact=exact, what=case.name
        )


@pytest.mark.parametrize("case", CASES, ids=case_ids)
@settings(max_examples=5)  # each example compiles; the kernel cache keeps reruns fast
@given(data=st.data())
def test_jit_matches_eager(case, data):
    dtype = data.draw(st.sampled_from(case.dtypes), label="dtype")
    args, params = case.draw(data, dtype)
    reverse = data.draw(st.booleans(), label="reverse operands")

    def f(*xs):
        if reverse:
            xs = [lax.rev(x, tuple(range(x.ndim))) if x.ndim else x for x in xs]
        return case.prim.bind(*xs, **params)

    _check(case, f, args)
