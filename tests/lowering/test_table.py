"""The lowering table tells the truth: every entry of kind "elementwise" or
"reduction" is compiled into a kernel by ``jit`` and matches eager; the others are not
kernel ops."""

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from fntorch.fx import dtypes as dt
from fntorch.fx.core import Tensor, primitives
from fntorch.lowering.fusion import KernelStep
from fntorch.lowering.rules import complex_rules, lowering_rules, reduction_rules
from fntorch.lowering.table import KINDS, Lowering, lowering_table
from fntorch.ops import lax
from fntorch.transforms.jit import jit
from tests.cases import all_cases
from tests.contract import as_list, assert_close

_CASES = {}
for _c in all_cases():
    _CASES.setdefault(_c.prim, _c)
KERNEL_ENTRIES = sorted(
    (p for p, e in lowering_table.items() if e.kind in ("elementwise", "reduction")),
    key=lambda p: p.name,
)
PREFERRED = (dt.float32, dt.int32, dt.bool_)


def test_entries_are_lowerings_of_known_kinds():
    assert set(lowering_table) == set(primitives.values())
    for p, e in lowering_table.items():
        assert isinstance(e, Lowering) and e.kind in KINDS, p
        if e.kind == "elementwise":
            assert (p.name in lowering_rules or p.name in complex_rules) and e.kernel, p
        if e.kind == "reduction":
            assert p.name in reduction_rules and e.kernel, p
        if e.kind not in ("elementwise", "reduction", "erased"):
            assert not e.kernel, p


def test_entries_say_what_the_passes_ask():
    t = lowering_table
    assert t[lax.lgamma_p].kind == t[lax.digamma_p].kind == "library"
    assert t[lax.copy_p].kind == t[lax.stop_gradient_p].kind == "erased"
    assert t[lax.transpose_p].view == "transpose" and t[lax.iota_p].kind == "view"
    assert [p.name for p, e in t.items() if e.matmul] == ["dot_general"]
    assert [p.name for p, e in t.items() if e.sum] == ["reduce_sum"]
    assert [p.name for p, e in t.items() if e.adds] == ["add"]
    collectives = {"psum", "pmax", "pmin", "all_gather", "psum_scatter", "all_to_all"}
    collectives |= {"ppermute", "axis_index", "pvary"}  # they run when the program does
    assert {p.name for p, e in t.items() if not e.foldable} <= {
        "custom_lin",
        "debug_callback",
    } | collectives
    assert [p.name for p, e in t.items() if e.effects] == ["debug_callback"]


def test_identity_rules_name_registered_primitives_and_sit_in_their_entries():
    from fntorch.lowering.identities import identity_rules

    assert set(identity_rules) <= set(primitives)
    for name, rule in identity_rules.items():
        assert lowering_table[primitives[name]].identity is rule, name
    assert lowering_table[lax.exp_p].identity is None


@pytest.mark.parametrize("prim", KERNEL_ENTRIES, ids=lambda p: p.name)
@settings(max_examples=4, deadline=None, database=None)
@given(data=st.data())
def test_kernel_entries_compile_to_kernels(prim, data):
    case = _CASES[prim]
    dtypes = [d for d in case.dtypes if d in PREFERRED] or list(case.dtypes)
    dtype = data.draw(st.sampled_from(dtypes), label="dtype")
    args, params = case.draw(data, dtype)
    args = [np.asarray(a) for a in args]
    assume(all(0 not in a.shape for a in args))

    def f(*xs):
        return prim.bind(*xs, **params)

    fn = jit(f)
    lo = fn.lower(*[Tensor(a) for a in args])
    # passes may remove it (an identity: no axes, a no-op convert, ...): nothing to lower
    assume(any(e.primitive is prim for e in lo.graph.eqns))
    assume(all(0 not in v.aval.shape for e in lo.graph.eqns for v in e.outputs))
    kernels = [s for s in lo.plan.steps if isinstance(s, KernelStep)]
    assert any(e.primitive is prim for s in kernels for e in s.eqns), lo.plan.summary()
    eager = as_list(f(*[Tensor(a) for a in args]))
    got = as_list(fn(*[Tensor(a) for a in args]))
    for g, e in zip(got, eager):
        assert g.shape == e.shape and g.dtype == e.dtype
        exact = case.exact or not dt.is_float(e.dtype)
        assert_close(g, e._value, rtol=max(case.rtol, 1e-5), atol=case.atol, exact=exact,
                     what=prim.name)  # fmt: skip
