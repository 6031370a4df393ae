"""Every primitive has an entry in every rule table, and a test case."""

import fntorch  # noqa: F401  (registers every rule)
from fntorch.devices import cpu_impls
from fntorch.fx.core import Primitive, abstract_eval_rules
from fntorch.fx.device import universal_impls
from fntorch.lowering.table import Lowering, lowering_table
from fntorch.transforms.ad import jvp_rules, transpose_rules
from fntorch.transforms.batching import batch_rules
from tests.cases import all_cases

# Primitives linear in (some of) their operands: they appear in linear graphs, so
# they need transpose rules.
LINEAR = {
    "neg", "add", "sub", "mul", "div", "select_n", "convert_element_type", "broadcast_in_dim",
    "reshape", "transpose", "squeeze", "expand_dims", "rev", "slice", "dynamic_slice",
    "dynamic_update_slice", "concatenate", "pad", "copy", "reduce_sum", "cumsum", "gather",
    "scatter", "scatter_add", "dot_general", "conv_general_dilated", "reduce_window_sum",
    "custom_lin", "cond", "scan", "triangular_solve", "lu_solve", "solve",
    "psum", "pvary", "all_gather", "psum_scatter", "all_to_all", "ppermute",
}  # fmt: skip


def all_primitives():
    """Every Primitive object defined anywhere in the fntorch package, found by walking
    its modules (so a primitive added in a new module cannot escape this test)."""
    import importlib
    import pkgutil

    import fntorch as package

    prims = {}
    for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
        if info.name.endswith(".demo"):
            continue
        module = importlib.import_module(info.name)
        for v in vars(module).values():
            if isinstance(v, Primitive):
                prims[v.name] = v
    return prims


TABLES = {
    "abstract_eval": abstract_eval_rules,
    "cpu impl": cpu_impls,
    "jvp": jvp_rules,
    "batch": batch_rules,
    "lowering": lowering_table,
}


def test_every_primitive_has_every_rule():
    gaps = []
    for name, p in sorted(all_primitives().items()):
        for table_name, table in TABLES.items():
            if p not in table and not (table is cpu_impls and p in universal_impls):
                gaps.append(f"{name}: {table_name}")
        if p in lowering_table and not isinstance(lowering_table[p], Lowering):
            gaps.append(f"{name}: lowering (not a Lowering entry)")
        if name in LINEAR and p not in transpose_rules:
            gaps.append(f"{name}: transpose")
    assert not gaps, "missing rules:\n" + "\n".join(gaps)


def test_linear_set_names_real_primitives():
    assert LINEAR <= set(all_primitives())


def test_every_primitive_has_a_test_case():
    covered = {c.prim.name for c in all_cases()}
    missing = sorted(set(all_primitives()) - covered - {"custom_lin"})
    assert not missing, f"primitives without a Case in tests/cases: {missing}"
