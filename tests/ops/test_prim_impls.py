"""Contract: every primitive's CPU impl agrees with numpy and with its abstract eval."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from fntorch.fx.core import Tensor
from tests.cases import all_cases
from tests.contract import as_list, assert_close, case_ids, to_np

CASES = all_cases()


@pytest.mark.parametrize("case", CASES, ids=case_ids)
@given(data=st.data())
def test_impl_matches_numpy(case, data):
    dtype = data.draw(st.sampled_from(case.dtypes), label="dtype")
    args, params = case.draw(data, dtype)
    avals = as_list(case.prim.abstract_eval(*args, **params))
    got = as_list(case.prim.bind(*[Tensor(a) for a in args], **params))
    expected = as_list(case.reference(*args, **params))
    assert len(got) == len(expected) == len(avals)
    for g, e, a in zip(got, expected, avals):
        g_np = to_np(g)
        assert g_np.shape == tuple(a.shape), (
            f"{case.name}: impl shape {g_np.shape} vs abstract {a.shape}"
        )
        if case.check_impl_dtype:
            assert g_np.dtype == a.dtype, (
                f"{case.name}: impl dtype {g_np.dtype} vs abstract {a.dtype}"
            )
        assert_close(
            g, np.asarray(e), rtol=case.rtol, atol=case.atol, exact=case.exact, what=case.name
        )
