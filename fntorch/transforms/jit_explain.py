"""Why ``jit`` traced again: the changes between two call signatures, by argument.

A signature is what ``JitFunction._compile`` keeps of each compiled call: its cache key
(tree structure, one ``(shape, dtype[, True | device])`` per leaf, the static values,
and the default device when no leaf has one), the leaves' names, and each dynamic
argument's own tree structure. ``changes(old, new)`` lists what differs; a miss is
explained against the earlier signature with the fewest changes (``closest``).
``retrace_warning`` words the warning past ``config.max_retraces``, with the fix for
the kind of change that keeps happening.
"""

from __future__ import annotations

import logging
import re
import warnings
from typing import NamedTuple

from ..fx.core import host_device
from .jit_config import config
from .jit_lowered import _aval_str

logger = logging.getLogger("fntorch.jit")


class Change(NamedTuple):
    """One difference: the argument (top-level name), the kind of change, and its text.

    >>> str(Change("x", "shape", "x: f32[3] -> f32[4] (shape)"))
    'x: f32[3] -> f32[4] (shape)'
    """

    arg: str
    kind: str
    text: str

    def __str__(self):
        return self.text


def _top(name: str) -> str:
    """The argument a leaf belongs to: ``"x['a'][0]"`` -> ``"x"``."""
    return re.split(r"[\[.]", name, maxsplit=1)[0] or name


def _type_name(t) -> str:
    """A static value's ``_type_key`` as a type name: ``int``, ``tuple[int, float]``."""
    if isinstance(t, tuple):
        return f"{t[0].__name__}[{', '.join(map(_type_name, t[1]))}]"
    return t.__name__


def _device(sig):
    if len(sig) == 2:
        return host_device()
    return None if sig[2] is True else sig[2]


def _leaf_changes(name: str, a, b) -> list[Change]:
    """One ``Change`` per kind of difference of leaf ``name``, all with one text:
    ``"x: f32[3] -> f64[4] (shape, dtype)"``."""
    arg = _top(name)
    kinds = []
    if tuple(a[0]) != tuple(b[0]):
        kinds.append(("shape", "shape"))
    if a[1] != b[1]:
        kinds.append(("dtype", "dtype"))
    weak_a, weak_b = (len(s) > 2 and s[2] is True for s in (a, b))
    if weak_a != weak_b:
        word = "a Python scalar -> a tensor" if weak_a else "a tensor -> a Python scalar"
        kinds.append(("weak type", f"weak type: {word}"))
    elif not weak_a and _device(a) is not _device(b):
        kinds.append(("device", f"device {_device(a)} -> {_device(b)}"))
    text = f"{name}: {_aval_str(a)} -> {_aval_str(b)} ({', '.join(w for _, w in kinds)})"
    return [Change(arg, kind, text) for kind, _ in kinds]


def changes(old, new, arg_name) -> list[Change]:
    """What differs from signature ``old`` to ``new`` (each ``(key, names, structures)``);
    ``arg_name(where)`` names a static argument's position or keyword.

    >>> from fntorch.fx import dtypes as dt
    >>> old = ((1, (((3,), dt.float32),), ()), ["x"], {"x": None})
    >>> new = ((1, (((4,), dt.float32),), ()), ["x"], {"x": None})
    >>> [str(c) for c in changes(old, new, str)]
    ['x: f32[3] -> f32[4] (shape)']
    """
    (okey, _, ostructs), (nkey, nnames, nstructs) = old, new
    out: list[Change] = []
    if okey[0] != nkey[0] or len(okey[1]) != len(nkey[1]):
        for name in dict.fromkeys([*ostructs, *nstructs]):
            a, b = ostructs.get(name), nstructs.get(name)
            if name not in ostructs or name not in nstructs or a != b:
                a = "(absent)" if name not in ostructs else a
                b = "(absent)" if name not in nstructs else b
                text = f"{name}: new pytree structure {a} -> {b}"
                out.append(Change(name, "tree structure", text))
        if not out:
            text = "new pytree structure of the arguments"
            out.append(Change("(arguments)", "tree structure", text))
    else:
        for name, a, b in zip(nnames, okey[1], nkey[1]):
            if a != b:
                out.extend(_leaf_changes(name, a, b))
    old_static = {w: (t, v) for w, t, v in okey[2]}
    new_static = {w: (t, v) for w, t, v in nkey[2]}
    for w in sorted(set(old_static) | set(new_static), key=str):
        a, b = old_static.get(w), new_static.get(w)
        if a is not None and b is not None and a[0] == b[0] and a[1] == b[1]:
            continue
        name = arg_name(w)
        ra = "(absent)" if a is None else repr(a[1])
        rb = "(absent)" if b is None else repr(b[1])
        if a is None or b is None or a[1] != b[1]:
            kind, how = "static value", "value"
        else:
            kind, how = "static type", f"type {_type_name(a[0])} -> {_type_name(b[0])}"
        out.append(Change(name, kind, f"static argument {name}: {ra} -> {rb} ({how})"))
    old_dev, new_dev = (k[3] if len(k) > 3 else host_device() for k in (okey, nkey))
    if old_dev is not new_dev:
        out.append(Change("(default device)", "device", f"default device: {old_dev} -> {new_dev}"))
    return out


def closest(history, new, arg_name) -> tuple[int, list[Change]]:
    """(index, changes) of the earlier signature in ``history`` that differs least from
    ``new`` (the latest one among equals). A tree structure change weighs more than any
    number of leaf changes: a signature of the same structure explains leaf by leaf."""
    best, best_changes, best_cost = -1, None, None
    for i in range(len(history) - 1, -1, -1):
        c = changes(history[i], new, arg_name)
        cost = sum(1000 if x.kind == "tree structure" else 1 for x in c)
        if best_cost is None or cost < best_cost:
            best, best_changes, best_cost = i, c, cost
    return best, best_changes or []


_FIXES = {
    "shape": (
        "pad {arg} to a few fixed sizes (bucketing) so that one trace serves many shapes; "
        "if a Python number sets a size, mark it static with static_argnums/static_argnames"
    ),
    "dtype": "cast {arg} to one dtype before the call (e.g. x.to(ft.float32))",
    "weak type": (
        "pass {arg} always as a Python scalar or always as a tensor (ft.asarray), not both"
    ),
    "static value": (
        "each new value of static argument {arg} traces again: if the function only "
        "computes with it, make it a traced argument (drop it from static_argnums/"
        "static_argnames)"
    ),
    "static type": "pass static argument {arg} with one type (int or float, not both)",
    "tree structure": (
        "keep {arg}'s pytree structure the same on every call (the same keys, lengths and "
        "None entries; pad lists to a fixed length)"
    ),
    "device": "keep {arg} on one device",
}


def retrace_warning(name: str, retraces: int, limit: int, counts) -> str:
    """The warning past ``limit`` retraces; ``counts``: a Counter of (arg, kind) over the
    retraces so far.

    >>> from collections import Counter
    >>> print(retrace_warning("f", 9, 8, Counter({("x", "shape"): 9})))  # doctest: +ELLIPSIS
    jit(f) was traced again 9 times (more than ft.config.max_retraces = 8): argument x ...
    """
    by_arg: dict = {}
    for (arg, _), n in counts.items():
        by_arg[arg] = by_arg.get(arg, 0) + n
    if not by_arg:
        return (
            f"jit({name}) was traced again {retraces} times (more than "
            f"ft.config.max_retraces = {limit}); the cache was cleared in between"
        )
    arg = max(by_arg, key=by_arg.get)
    kind = max((k for a, k in counts if a == arg), key=lambda k: counts[(arg, k)])
    return (
        f"jit({name}) was traced again {retraces} times (more than ft.config.max_retraces "
        f"= {limit}): argument {arg} keeps changing ({kind}, in {by_arg[arg]} of the "
        f"retraces). Each trace compiles anew; {_FIXES[kind].format(arg=arg)}. Set "
        'ft.config.update("explain_cache_misses", True) to log every change.'
    )


def why(found) -> str:
    """The changes' texts, each once (a leaf's kinds of change share one text)."""
    return "; ".join(dict.fromkeys(map(str, found))) or "the cache was cleared"


def explain_miss(jitted, key, names, structs) -> None:
    """Logs a miss of ``jitted`` (a ``JitFunction``; ``log_compiles``,
    ``explain_cache_misses``) against the closest signature in its ``_history``, and
    warns once past ``config.max_retraces`` retraces, naming the argument that keeps
    changing (``_changed`` counts them)."""
    history = jitted._history
    if not history:
        if config.log_compiles:
            logger.warning("jit(%s): tracing because it is called for the first time", jitted._name)
        return
    i, found = closest(history, (key, names, structs), jitted._arg_name)
    jitted._changed.update({(c.arg, c.kind) for c in found})
    retraces = len(history)
    if config.log_compiles or config.explain_cache_misses:
        logger.warning(
            "jit(%s): tracing again (retrace %d) because %s (against signature %d of %d "
            "compiled before, the closest)",
            jitted._name,
            retraces,
            why(found),
            i + 1,
            retraces,
        )
    if retraces > config.max_retraces and not jitted._warned:
        jitted._warned = True
        warnings.warn(
            retrace_warning(jitted._name, retraces, config.max_retraces, jitted._changed),
            UserWarning,
            stacklevel=5,  # explain_miss, _compile, _dispatch, __call__: then the caller
        )
