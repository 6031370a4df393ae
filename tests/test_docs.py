"""The public surface documents itself and matches ../shared/API.md.

STYLE.md: every public function has a docstring carrying one runnable example (the
examples themselves run under ``pytest --doctest-modules``). API.md: the names and
signatures it lists exist as written. Each check walks the surface rather than a
hand-kept list, so a new public name without an example fails here.
"""

from __future__ import annotations

import doctest
import inspect
import sys
import types

import pytest

import fntorch as ft

# --------------------------------------------------------------------------- allowlists


def _names(owner: str, names: str) -> dict:
    """``{name: the file that owns it}`` for the whitespace-separated ``names``."""
    return dict.fromkeys(names.split(), owner)


# Public members whose docstrings are missing in files this audit did not own; each is
# reported for the owner of that file. Remove a name when its docstring lands.
NO_EXAMPLE_YET: dict = {}

# Public callables of ft.nn, ft.nn.functional, ... whose docstrings have no '>>>' example,
# in files this audit did not own: the debt the walk over the shim found. Remove a name
# when its example lands (test_every_public_callable_has_an_example fails on a listed name
# that has one).
SHIM_NO_EXAMPLE_YET: dict = {}


# ------------------------------------------------------------------------- the surface


def _public(module) -> list[str]:
    names = getattr(module, "__all__", None)
    if names is None:  # fntorch.fx re-exports its names without an __all__
        names = [n for n in vars(module) if not n.startswith("_")]
    return [n for n in names if not isinstance(getattr(module, n), types.ModuleType)]


def _surface():
    """(qualified name, object) for every public callable of the namespaces API.md names."""
    for prefix, module in [
        ("ft", ft),
        ("ft.random", ft.random),
        ("ft.fx", ft.fx),
        ("ft.tree", ft.tree),
        # the stateful shim and torch.func's names
        ("ft.nn", ft.nn),
        ("ft.nn.functional", ft.nn.functional),
        ("ft.nn.init", ft.nn.init),
        ("ft.nn.utils", ft.nn.utils),
        ("ft.optim", ft.optim),
        ("ft.optim.functional", ft.optim.functional),
        ("ft.optim.lr_scheduler", ft.optim.lr_scheduler),
        ("ft.utils.data", ft.utils.data),
        ("ft.utils.data.distributed", ft.utils.data.distributed),
        ("ft.distributed", ft.distributed),
        ("ft.nn.parallel", ft.nn.parallel),
        ("ft.func", ft.func),
    ]:
        for name in _public(module):
            obj = getattr(module, name)
            if callable(obj):  # dtypes and constants are values, not callables
                yield f"{prefix}.{name}", obj


def _doc(obj) -> str:
    if isinstance(obj, property):
        obj = obj.fget
    return getattr(obj, "__doc__", None) or ""


SURFACE = sorted(_surface())


def test_the_top_level_namespace_declares_its_public_names():
    # `ft.__all__` is the explicit public surface (STYLE.md: Equinox's explicit names).
    assert "grad" in ft.__all__ and "sum" in ft.__all__ and "random" not in ft.__all__
    for name in ft.__all__:
        assert hasattr(ft, name), f"ft.__all__ lists {name!r}, which fntorch lacks"
    missing = {
        n
        for n, v in vars(ft).items()
        if not n.startswith("_") and not isinstance(v, types.ModuleType)
    } - set(ft.__all__)
    assert not missing, f"public names left out of ft.__all__: {sorted(missing)}"


@pytest.mark.parametrize("qualname,obj", SURFACE, ids=[q for q, _ in SURFACE])
def test_every_public_callable_has_an_example(qualname, obj):
    doc = _doc(obj)
    if qualname in SHIM_NO_EXAMPLE_YET:
        assert ">>>" not in doc, f"{qualname} has its example now: unlist it"
        return
    assert doc.strip(), f"{qualname} has no docstring"
    assert ">>>" in doc, f"{qualname}'s docstring has no runnable '>>>' example"


def _classes():
    """Public classes, and the classes of the objects API.md says functions return."""
    f = ft.jit(lambda x: x + 1.0)
    lowered = f.lower(ft.ones(2))
    found: dict = {}
    for name, obj in SURFACE:
        if isinstance(obj, type):
            short = name.rsplit(".", 1)[1]
            # two classes of one name (ft.optim.Optimizer, ft.optim.functional.Optimizer):
            # the second goes by its path without "ft."
            found[short if found.get(short, obj) is obj else name[3:]] = obj
    found.update(
        JitFunction=type(f),
        Lowered=type(lowered),
        Compiled=type(lowered.compile()),
        custom_jvp=ft.custom_jvp,
        custom_vjp=ft.custom_vjp,
        Device=type(ft.device("cpu")),
    )
    return sorted(found.items(), key=lambda kv: kv[0])


CLASSES = [(n, c) for n, c in _classes() if not issubclass(c, BaseException)]


@pytest.mark.parametrize("name,cls", CLASSES, ids=[n for n, _ in CLASSES])
def test_public_classes_document_their_members(name, cls):
    # a class listed in SHIM_NO_EXAMPLE_YET is checked (and kept fresh) there
    if not any(q.rsplit(".", 1)[1] == name for q in SHIM_NO_EXAMPLE_YET):
        assert ">>>" in _doc(cls), f"class {name} has no runnable example"
    for member, raw in vars(cls).items():
        if member.startswith("_") and member != "__call__":
            continue
        if isinstance(raw, (staticmethod, classmethod)):
            raw = raw.__func__
        if not (isinstance(raw, property) or inspect.isfunction(raw)):
            continue
        if f"{name}.{member}" in NO_EXAMPLE_YET:
            continue
        assert _doc(raw).strip(), f"{name}.{member} has no docstring"


def _tensor_members():
    for name in sorted(dir(ft.Tensor)):
        if name.startswith("_") and name not in ("__array_namespace__", "__dlpack__"):
            continue
        yield name, inspect.getattr_static(ft.Tensor, name)


def test_tensor_members_are_documented():
    # Methods are many thin PyTorch spellings: every one needs a docstring with an example
    # (unless allowlisted above).
    no_doc, no_example = [], []
    for name, raw in _tensor_members():
        if not (isinstance(raw, property) or inspect.isfunction(raw)):
            continue
        doc = _doc(raw)
        if not doc.strip():
            no_doc.append(name)
        elif ">>>" not in doc and f"Tensor.{name}" not in NO_EXAMPLE_YET:
            no_example.append(name)
    assert not no_doc, f"Tensor members without a docstring: {no_doc}"
    assert not no_example, f"Tensor members without an example: {no_example}"


def _uncollected_tensor_examples():
    """(name, docstring) of Tensor members whose examples ``--doctest-modules`` never runs:
    those made in a loop (the tables of _tensor_methods_math.py and
    _tensor_methods_convert.py) or copied for an alias, which are no module's global. One per
    distinct docstring."""
    seen = set()
    for name, raw in _tensor_members():
        fn = raw.fget if isinstance(raw, property) else raw
        if not inspect.isfunction(fn):
            continue
        doc = fn.__doc__ or ""
        module = sys.modules[fn.__module__]
        if ">>>" not in doc or doc in seen or any(v is fn for v in vars(module).values()):
            continue
        seen.add(doc)
        yield name, doc


UNCOLLECTED = sorted(_uncollected_tensor_examples())


def test_generated_tensor_examples_run():
    # The examples of generated methods are checked here, as doctest would.
    assert len(UNCOLLECTED) > 50  # the tables' methods (sum, float, mm, new_zeros, ...)
    parser, failures = doctest.DocTestParser(), []
    for name, doc in UNCOLLECTED:
        test = parser.get_doctest(doc, {}, f"Tensor.{name}", None, 0)
        runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
        runner.run(test, out=failures.append)
    assert not failures, "".join(failures)


def test_allowlist_is_not_stale():
    # An allowlisted name that has since gained its example must leave the list.
    for qual in NO_EXAMPLE_YET:
        owner, member = qual.rsplit(".", 1)
        cls = ft.Tensor if owner == "Tensor" else dict(_classes())[owner]
        doc = _doc(inspect.getattr_static(cls, member))
        needed = ">>>" if owner == "Tensor" else ""
        assert not (doc.strip() and needed in doc), f"{qual} is documented now: unlist it"


# ------------------------------------------------------------------- API.md signatures

_ = inspect.Parameter.empty
# name -> the parameters API.md writes, in order, with their defaults (`_`: required).
# Extra trailing parameters are allowed when they have defaults (e.g. randint's dtype).
API_SIGNATURES = {
    "ft.asarray": [("obj", _), ("dtype", None), ("device", None), ("copy", None)],
    "ft.tensor": [("obj", _), ("dtype", None), ("device", None), ("copy", None)],
    "ft.grad": [("fun", _), ("argnums", 0), ("has_aux", False)],
    "ft.value_and_grad": [("fun", _), ("argnums", 0), ("has_aux", False)],
    "ft.vjp": [("fun", _), ("*primals", _), ("has_aux", False)],
    "ft.jvp": [("fun", _), ("primals", _), ("tangents", _)],
    "ft.linearize": [("fun", _), ("*primals", _)],
    "ft.jacfwd": [("fun", _), ("argnums", 0)],
    "ft.jacrev": [("fun", _), ("argnums", 0)],
    "ft.hessian": [("fun", _), ("argnums", 0)],
    "ft.vmap": [
        ("fun", _),
        ("in_axes", 0),
        ("out_axes", 0),
        ("axis_size", None),
        ("axis_name", None),
    ],
    "ft.shard_map": [("f", _), ("mesh", _), ("in_specs", _), ("out_specs", _)],
    "ft.psum": [("x", _), ("axis_name", _)],
    "ft.distributed.init_process_group": [("backend", None), ("init_method", None)],
    "ft.distributed.all_reduce": [("tensor", _), ("op", ft.distributed.ReduceOp.SUM)],
    "ft.distributed.broadcast": [("tensor", _), ("src", 0)],
    "ft.jit": [
        ("fun", _),
        ("static_argnums", ()),
        ("static_argnames", ()),
        ("donate_argnums", ()),
    ],
    "ft.make_graph": [("fun", _), ("static_argnums", ())],
    "ft.stop_gradient": [("x", _)],
    "ft.checkpoint": [("fun", _)],
    "ft.custom_jvp": [("fun", _)],
    "ft.custom_vjp": [("fun", _)],
    "ft.cond": [("pred", _), ("true_fun", _), ("false_fun", _), ("*operands", _)],
    "ft.switch": [("index", _), ("branches", _), ("*operands", _)],
    "ft.while_loop": [("cond_fun", _), ("body_fun", _), ("init_val", _)],
    "ft.fori_loop": [("lower", _), ("upper", _), ("body_fun", _), ("init_val", _)],
    "ft.scan": [("f", _), ("init", _), ("xs", None), ("length", None), ("reverse", False)],
    "ft.gelu": [("x", _), ("approximate", False)],
    "ft.pad": [("x", _), ("pad_width", _), ("mode", "constant"), ("constant_values", 0)],
    "ft.cumsum": [("x", _), ("axis", None)],
    "ft.top_k": [("x", _), ("k", _)],
    "ft.take_along_axis": [("x", _), ("indices", _)],
    "ft.from_dlpack": [("x", _)],
    "ft.result_type": [("*arrays_and_dtypes", _)],
    "ft.device": [("spec", _)],
    "ft.devices": [],
    "ft.device_put": [("tree", _), ("device", None)],  # None: the default device, as JAX
    "ft.fx.eval_graph": [("graph", _), ("*args", _)],
    "ft.fx.Primitive": [("name", _)],
    "ft.random.key": [("seed", _)],
    "ft.random.split": [("key", _), ("num", 2)],
    "ft.random.fold_in": [("key", _), ("data", _)],
    "ft.random.uniform": [
        ("key", _),
        ("shape", ()),
        ("dtype", ft.float32),
        ("minval", 0.0),
        ("maxval", 1.0),
    ],
    "ft.random.normal": [("key", _), ("shape", ()), ("dtype", ft.float32)],
    "ft.random.truncated_normal": [
        ("key", _),
        ("lower", _),
        ("upper", _),
        ("shape", None),
        ("dtype", ft.float32),
    ],
    "ft.random.bernoulli": [("key", _), ("p", 0.5), ("shape", None)],
    "ft.random.randint": [("key", _), ("shape", _), ("minval", _), ("maxval", _)],
    "ft.random.categorical": [("key", _), ("logits", _), ("axis", -1)],
    "ft.random.permutation": [("key", _), ("x", _)],
    "ft.tree.map": [("f", _), ("tree", _), ("*rest", _)],
    "ft.tree.leaves": [("tree", _)],
    "ft.tree.flatten": [("tree", _)],
    "ft.tree.unflatten": [("treedef", _), ("leaves", _)],
    "ft.tree.structure": [("tree", _)],
    "ft.tree.register_dataclass": [("cls", _)],
}
# Where a parameter's name does not matter (a varargs name, a positional-only one).
_NAME_FREE = {"*arrays_and_dtypes", "*args", "*rest", "*primals", "*operands"}


def _resolve(qualname: str):
    obj = ft
    for part in qualname.split(".")[1:]:
        obj = getattr(obj, part)
    return obj


def _params(fn) -> list[tuple[str, object, inspect.Parameter]]:
    out = []
    for p in inspect.signature(fn).parameters.values():
        if p.kind is p.VAR_KEYWORD:
            continue
        name = "*" + p.name if p.kind is p.VAR_POSITIONAL else p.name
        out.append((name, p.default, p))
    return out


@pytest.mark.parametrize("qualname", sorted(API_SIGNATURES))
def test_api_md_signatures(qualname):
    fn = _resolve(qualname)
    want = API_SIGNATURES[qualname]
    got = _params(fn)
    assert len(got) >= len(want), f"{qualname}{inspect.signature(fn)}: API.md has {want}"
    for (wname, wdefault), (gname, gdefault, p) in zip(want, got):
        if wname.startswith("*"):
            assert gname.startswith("*"), f"{qualname}: expected {wname}, got {gname}"
            continue
        if wname not in _NAME_FREE and p.kind is not p.POSITIONAL_ONLY:
            assert gname == wname, f"{qualname}{inspect.signature(fn)}: expected {wname!r}"
        assert gdefault == wdefault, (
            f"{qualname}: {wname} defaults to {gdefault!r}, API.md says {wdefault!r}"
        )
    for gname, gdefault, p in got[len(want) :]:
        assert gname.startswith("*") or gdefault is not _, (
            f"{qualname}: extra parameter {gname} beyond API.md's must have a default"
        )


# The core function names of the Array API standard, 2023.12 (complex dtypes and the
# optional linalg/fft extensions are not in API.md's scope yet).
ARRAY_API_2023_12 = """
abs acos acosh add asin asinh atan atan2 atanh bitwise_and bitwise_left_shift
bitwise_invert bitwise_or bitwise_right_shift bitwise_xor ceil clip conj copysign cos cosh
divide equal exp expm1 floor floor_divide greater greater_equal hypot imag isfinite isinf
isnan less less_equal log log1p log2 log10 logaddexp logical_and logical_not logical_or
logical_xor maximum minimum multiply negative not_equal positive pow real remainder round
sign signbit sin sinh square sqrt subtract tan tanh trunc
arange asarray empty empty_like eye from_dlpack full full_like linspace meshgrid ones
ones_like tril triu zeros zeros_like
astype can_cast finfo iinfo isdtype result_type
take
matmul matrix_transpose tensordot vecdot
broadcast_arrays broadcast_to concat expand_dims flip moveaxis permute_dims repeat reshape
roll squeeze stack tile unstack
argmax argmin nonzero searchsorted where
unique_all unique_counts unique_inverse unique_values
argsort sort
cumulative_sum max mean min prod std sum var
all any
__array_namespace_info__
""".split()
ARRAY_API_CONSTANTS_AND_DTYPES = """
e inf nan newaxis pi bool int8 int16 int32 int64 uint8 uint16 uint32 uint64 float32 float64
complex64 complex128
""".split()
API_MD_EXTRAS = """
sigmoid erf logsumexp softmax log_softmax relu gelu einsum pad take_along_axis cumsum top_k
cat tensor float16 bfloat16 result_type devices device default_device device_put
grad value_and_grad vjp jvp linearize jacfwd jacrev hessian vmap jit make_graph custom_jvp
custom_vjp stop_gradient checkpoint cond switch while_loop fori_loop scan Tensor
ConcretizationError
""".split()


@pytest.mark.parametrize("name", ARRAY_API_2023_12 + ARRAY_API_CONSTANTS_AND_DTYPES + API_MD_EXTRAS)
def test_api_md_names_exist_and_are_public(name):
    assert name in ft.__all__, f"fntorch lacks the public name {name!r}"


def test_array_api_namespace_info():
    info = ft.__array_namespace_info__()
    assert ft.__array_api_version__ == "2023.12"
    assert set(info.default_dtypes()) == {
        "real floating",
        "complex floating",
        "integral",
        "indexing",
    }
    assert info.dtypes()["float32"] == ft.float32
    assert ft.device("cpu") in info.devices()
    assert info.capabilities()["boolean indexing"] is True


def test_fx_and_tree_names():
    for name in ["Graph", "Eqn", "Primitive", "eval_graph"]:
        assert hasattr(ft.fx, name)
    for name in ["map", "leaves", "flatten", "unflatten", "structure", "register_dataclass"]:
        assert name in ft.tree.__all__


# ------------------------------------------------------------------ errors of the surface
# STYLE.md / the project standard: a specific exception whose message names the function,
# the argument, what was expected and what came.

_X = ft.ones(3)
NOT_A_FUNCTION = [
    ("grad", "fun", lambda: ft.grad(3)),
    ("value_and_grad", "fun", lambda: ft.value_and_grad(3)),
    ("jacfwd", "fun", lambda: ft.jacfwd(3)),
    ("jacrev", "fun", lambda: ft.jacrev(3)),
    ("hessian", "fun", lambda: ft.hessian(3)),
    ("vmap", "fun", lambda: ft.vmap(3)),
    ("make_graph", "fun", lambda: ft.make_graph(3)),
    ("vjp", "fun", lambda: ft.vjp(3, _X)),
    ("jvp", "fun", lambda: ft.jvp(3, (_X,), (_X,))),
    ("linearize", "fun", lambda: ft.linearize(3, _X)),
    ("cond", "true_fun", lambda: ft.cond(True, 3, lambda: 1.0)),
    ("cond", "false_fun", lambda: ft.cond(True, lambda: 1.0, 3)),
    ("switch", "branches[1]", lambda: ft.switch(0, [lambda: 1.0, 3])),
    ("while_loop", "cond_fun", lambda: ft.while_loop(3, lambda c: c, 0.0)),
    ("while_loop", "body_fun", lambda: ft.while_loop(lambda c: c < 1, 3, 0.0)),
    ("fori_loop", "body_fun", lambda: ft.fori_loop(0, 3, 3, 0.0)),
    ("scan", "f", lambda: ft.scan(3, 0.0, _X)),
]


@pytest.mark.parametrize(
    "where,arg,call", NOT_A_FUNCTION, ids=[w + "-" + a for w, a, _ in NOT_A_FUNCTION]
)
def test_a_non_callable_function_argument_names_function_and_argument(where, arg, call):
    with pytest.raises(TypeError) as e:
        call()
    assert str(e.value) == f"{where}: {arg} must be a function (a callable), got int 3"


def test_switch_branches_errors():
    with pytest.raises(
        TypeError, match=r"switch: branches must be a sequence of functions, got function"
    ):
        ft.switch(0, lambda: 1.0)
    with pytest.raises(ValueError, match=r"switch: branches must be a non-empty .* got \(\)"):
        ft.switch(0, [])


def test_argnums_of_the_wrong_type_name_the_transform():
    with pytest.raises(
        TypeError, match=r"grad: argnums must be an int or a tuple of ints, got 1\.5"
    ):
        ft.grad(lambda x: x.sum(), argnums=1.5)(_X)
    with pytest.raises(TypeError, match=r"jacrev: argnums .* got \('a',\)"):
        ft.jacrev(lambda x: x, argnums=("a",))(_X)
    # Sequences other than tuples still work, as in JAX.
    assert ft.grad(lambda x, y: (x * y).sum(), argnums=[1])(_X, _X)[0].tolist() == [1.0] * 3


@pytest.mark.parametrize("size", [-1, 2.0, "3"])
def test_vmap_axis_size_is_checked(size):
    with pytest.raises(
        ValueError, match=rf"vmap: axis_size must be a non-negative int or None, got {size!r}"
    ):
        ft.vmap(lambda a: a, in_axes=None, axis_size=size)(_X)
    assert ft.vmap(lambda a: a, in_axes=None, axis_size=2)(_X).shape == (2, 3)


def test_jvp_primals_not_a_tuple_names_the_argument_and_type():
    with pytest.raises(
        TypeError, match=r"jvp: primals must be a tuple \(or list\) of arguments, got Tensor"
    ):
        ft.jvp(ft.sin, _X, (_X,))
    with pytest.raises(TypeError, match=r"jvp: tangents must be .* got float"):
        ft.jvp(ft.sin, (_X,), 1.0)


def test_eval_graph_and_tree_check_their_argument_types():
    with pytest.raises(TypeError, match=r"eval_graph: graph must be an ft.fx.Graph .* got int"):
        ft.fx.eval_graph(3, _X)
    with pytest.raises(
        TypeError, match=r"tree.unflatten: treedef must be a tree structure .* got list"
    ):
        ft.tree.unflatten([1], [1])
    with pytest.raises(TypeError, match=r"tree.register_dataclass: expected a class .* got int"):
        ft.tree.register_dataclass(3)


def test_compiled_with_other_argument_types_says_what_came():
    compiled = ft.jit(lambda x: x + 1.0).lower(ft.ones(2)).compile()
    with pytest.raises(TypeError) as e:
        compiled(ft.ones(3, dtype=ft.float64))
    msg = str(e.value)
    assert msg.startswith("jit(<lambda>).lower(...).compile():")
    assert "f32[2]" in msg and "got (f64[3]" in msg
    with pytest.raises(TypeError, match="traced arguments"):
        ft.vmap(compiled)(ft.ones((2, 2)))


# The array object's attributes and methods in the Array API standard (2023.12).
ARRAY_OBJECT = ["dtype", "device", "mT", "ndim", "shape", "size", "T"]
ARRAY_OBJECT += ["__array_namespace__", "__dlpack__", "__dlpack_device__", "to_device"]


@pytest.mark.parametrize("name", ARRAY_OBJECT)
def test_array_api_array_object_members(name):
    assert hasattr(ft.ones((2, 2)), name), f"ft.Tensor lacks the Array API member {name!r}"


@pytest.mark.parametrize(
    "kwargs,message",
    [
        ({"static_argnums": 1.5}, "static_argnums must be an int or a tuple of them, got 1.5"),
        ({"static_argnums": ("n",)}, "static_argnums must be an int .* got \\('n',\\)"),
        ({"static_argnames": 3}, "static_argnames must be a str or a tuple of them, got 3"),
        ({"donate_argnums": "x"}, "donate_argnums must be an int .* got 'x'"),
    ],
)
def test_jit_argnums_of_the_wrong_type_name_jit_and_the_argument(kwargs, message):
    with pytest.raises(TypeError, match=r"jit\(<lambda>\): " + message):
        ft.jit(lambda x, n: x, **kwargs)
    # The spellings JAX takes still work: one item, or a list of them.
    assert ft.jit(lambda x, n: x * n, static_argnums=[1], static_argnames="n")(_X, 2).shape == (3,)
