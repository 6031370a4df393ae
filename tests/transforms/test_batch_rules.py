"""Contract: every batching rule agrees with a Python loop over the batch and stack."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import fntorch as ft
from fntorch.fx.core import Tensor
from tests.cases import all_cases
from tests.contract import as_list, assert_close, case_ids

CASES = [c for c in all_cases() if c.batch]


@pytest.mark.parametrize("case", CASES, ids=case_ids)
@given(data=st.data())
def test_batch_matches_loop(case, data):
    dtype = data.draw(st.sampled_from(case.dtypes), label="dtype")
    args, params = case.draw(data, dtype)
    if not args:
        return
    size = data.draw(st.integers(1, 3), label="batch size")
    rng = np.random.default_rng(data.draw(st.integers(0, 2**31 - 1), label="seed"))
    dims = [
        data.draw(st.one_of(st.none(), st.integers(0, np.ndim(a))), label=f"bdim{i}")
        for i, a in enumerate(args)
    ]
    if all(d is None for d in dims):
        dims[data.draw(st.integers(0, len(args) - 1), label="forced")] = 0
    # Each example along the batch is a permutation of the drawn values, so value
    # constraints (index ranges, domains) still hold.
    examples = []
    for k in range(size):
        ex = []
        for a, d in zip(args, dims):
            a = np.asarray(a)
            if d is None or k == 0 or a.size == 0:
                ex.append(a)
            else:
                ex.append(rng.permutation(a.reshape(-1)).reshape(a.shape))
        examples.append(ex)
    batched = []
    for i, (a, d) in enumerate(zip(args, dims)):
        if d is None:
            batched.append(Tensor(np.asarray(a)))
        else:
            batched.append(Tensor(np.stack([ex[i] for ex in examples], axis=d)))

    def f(*xs):
        return case.prim.bind(*xs, **params)

    got = as_list(ft.vmap(f, in_axes=tuple(dims))(*batched))
    per = [as_list(case.prim.bind(*[Tensor(x) for x in ex], **params)) for ex in examples]
    for j, g in enumerate(got):
        expected = np.stack([np.asarray(p[j]._value) for p in per])
        assert_close(
            g,
            expected,
            rtol=case.rtol,
            atol=case.atol,
            exact=True if case.exact else False,
            what=f"{case.name} dims={dims}",
        )
