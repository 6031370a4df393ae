"""What ``ft.jit(f).lower(*args)`` gives: ``Lowered`` (the graph, the fusion plan, the
kernels' IR) and its ``compile()``, ``Compiled``; and ``_aval_str``, how a jit
signature's leaf is written in messages.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..fx.core import ShapedArray

if TYPE_CHECKING:
    from .jit import JitFunction, _Entry


def _aval_str(sig) -> str:
    s = ShapedArray(sig[0], sig[1]).str_short()
    if len(sig) > 2 and sig[2] is True:
        s += "{weak}"
    elif len(sig) > 2 and sig[2] is not False:
        s += f"@{sig[2]}"
    return s


class Lowered:
    """The result of ``ft.jit(f).lower(*args)``.

    ``graph``: the fx Graph after the passes; ``plan``: the fusion plan (its
    ``summary()`` lists the kernels and library calls); ``as_text()``: the IR of every
    kernel; ``compile()``: a callable with ``f``'s signature, for these argument types.

    >>> import fntorch as ft
    >>> lo = ft.jit(lambda x: x + 1.0).lower(ft.ones(2))
    >>> print(lo.graph)
    { lambda a:f32[2]. let
        b:f32[2] = add a 1.0
      in (b) }
    """

    def __init__(self, jitted: JitFunction, entry: _Entry):
        self._jitted = jitted
        self._entry = entry
        self.graph = entry.graph
        self.plan = entry.plan

    def as_text(self) -> str:
        """The xDSL IR of every kernel the program runs, each under a ``// kernel i:``
        line naming what it computes: fused kernels, template kernels (gather, scatter,
        cumulative ops, windows) and those of control flow's compiled sub-programs.

        >>> import fntorch as ft
        >>> f = ft.jit(lambda x: ft.fori_loop(0, 3, lambda i, c: ft.exp(c) - 1.0, x))
        >>> [l for l in f.lower(ft.ones(2)).as_text().splitlines() if l.startswith("//")]
        ['// scan body > kernel 0: add', '// scan body > kernel 1: exp sub']
        """
        return "\n\n".join(_kernel_texts(self._entry.program, ""))

    def compile(self) -> Compiled:
        """The compiled callable for these argument types (see ``Compiled``)."""
        return Compiled(self._jitted, self._entry)


def _kernel_texts(program, where: str):
    n = 0
    for label, item in getattr(program, "listing", ()):
        if hasattr(item, "listing"):  # a compiled sub-program: a loop body, a branch
            yield from _kernel_texts(item, f"{where}{label} > ")
        else:
            yield f"// {where}kernel {n}: {label}\n{item.as_text()}"
            n += 1


class Compiled:
    """A compiled function for one argument signature; other signatures raise TypeError.

    >>> import fntorch as ft
    >>> c = ft.jit(lambda x: x + 1.0).lower(ft.ones(2)).compile()
    >>> c(ft.zeros(2)).tolist()
    [1.0, 1.0]
    """

    def __init__(self, jitted: JitFunction, entry: _Entry):
        self._jitted = jitted
        self._entry = entry

    def __call__(self, *args, **kwargs):
        """Runs the program with arguments of the signature it was lowered for."""
        got = self._jitted._signature(args, kwargs)
        if got is None or got[0] != self._entry.key:
            came = (
                "traced arguments (a compiled function does not run under a transform)"
                if got is None
                else f"({', '.join(_aval_str(s) for s in got[0][1])})"
            )
            raise TypeError(
                f"jit({self._jitted._name}).lower(...).compile(): it was lowered for other "
                f"argument types: ({', '.join(_aval_str(s) for s in self._entry.key[1])}), "
                f"with one tree structure and static values; got {came}. Call the jit "
                "function itself to compile for new ones"
            )
        return self._jitted._run(self._entry, got[1], got[2])
