"""``ft.profiler.profile()``: where the time goes, as PyTorch's profiler shows it.

While a profile is active, every thread's eager primitives, the kernels and library
steps of compiled programs, and ``jit`` calls (cache hit or miss, with the trace and
compile they caused) are recorded with their wall time, start and thread id.
``key_averages().table()`` sums them by name; ``export_chrome_trace(path)`` writes the
Trace Event Format JSON that Perfetto (ui.perfetto.dev) and ``chrome://tracing`` open.

No profile, no cost: the instrumented versions are swapped in on the classes when the
first profile starts and swapped out when the last one stops (``EvalTrace.
process_primitive``, ``Program.__call__``, ``JitFunction.__call__``, and the CPU's
``* + - /`` fast paths, which step aside so those operators are seen as primitives).
The normal paths carry no check at all. Indexing with concrete indices (numpy's own
indexing on the CPU) is not recorded.

>>> import fntorch as ft
>>> with ft.profiler.profile() as prof:
...     _ = ft.exp(ft.ones(3))
>>> [e.name for e in prof.events()]
['exp']
"""

from __future__ import annotations

import inspect
import json
import threading
import time
from typing import NamedTuple

from .fx.core import EvalTrace, Tensor
from .lowering.program import Program
from .transforms import jit as _jit_module
from .transforms.jit import JitFunction

__all__ = ["profile", "Event", "EventAverage", "KeyAverages"]

_clock = time.perf_counter


class Event(NamedTuple):
    """One recorded interval: ``start`` and ``end`` in seconds (``time.perf_counter``),
    ``cat`` one of ``"eager"``, ``"kernel"``, ``"library"``, ``"view"``, ``"program"``,
    ``"jit"``, ``"trace"``, ``"compile"``; ``tid`` the thread's native id.

    >>> Event("exp", "eager", 1.0, 1.5, 7, {}).duration
    0.5
    """

    name: str
    cat: str
    start: float
    end: float
    tid: int
    args: dict

    @property
    def duration(self) -> float:
        return self.end - self.start


# ------------------------------------------------------------------ recording

_active: list[profile] = []
_lock = threading.Lock()
_originals: dict = {}


def _record(name: str, cat: str, start: float, end: float, args=None) -> None:
    ev = Event(name, cat, start, end, threading.get_native_id(), args or {})
    for p in _active:
        p._events.append(ev)  # list.append is atomic under the GIL


def _timed_process_primitive(self, prim, args, params):
    t0 = _clock()
    try:
        return _originals["process_primitive"](self, prim, args, params)
    finally:
        _record(prim.name, "eager", t0, _clock())


def _step_label(program, step) -> tuple[str, str]:
    """(label, category) of one step of ``program``, read off the closure its builder
    made (``lowering/steps.py``): kernels take their ``listing`` label."""
    qual = step.__qualname__
    cells = [c.cell_contents for c in (step.__closure__ or ())]
    if qual.startswith(("_view_step", "_unary_step")):
        return "view", "view"
    if qual.startswith("_matmul_step"):
        return "dot_general (blas)", "library"
    labels = {id(k): label for label, k in program.listing}
    if qual.startswith("_template_step"):
        # the bound kernel's template is listed under the primitive's name
        for c in cells:
            label = labels.get(id(getattr(c, "kernel", None)))
            if label is not None:
                return f"kernel {label}", "kernel"
        return "template kernel", "kernel"
    for c in cells:
        if id(c) in labels:
            return f"kernel {labels[id(c)]}", "kernel"
    for c in cells:
        fn = getattr(c, "func", c)
        if callable(fn) and not isinstance(c, (list, tuple, int)):
            inner = [x.cell_contents for x in (getattr(fn, "__closure__", None) or ())]
            fn = next((getattr(x, "func", x) for x in inner if callable(x)), fn)
            return getattr(fn, "__name__", type(fn).__name__).strip("_"), "library"
    return qual.split(".")[0].strip("_"), "library"


def _labels(program) -> list:
    labels = program.__dict__.get("_profile_labels")
    if labels is None:
        labels = [_step_label(program, s) for s in program._steps]
        program._profile_labels = labels
    return labels


def _timed_program_call(self, *bufs):
    pool = self._pool
    tpl = pool.pop() if pool else self.new_frame()
    t_start = _clock()
    try:
        env = [*bufs, *tpl]
        for f, (label, cat) in zip(self._steps, _labels(self)):
            t0 = _clock()
            f(env)
            _record(label, cat, t0, _clock())
        return self._get_outputs(env)
    finally:
        pool.append(tpl)
        _record("program", "program", t_start, _clock(), {"steps": len(self._steps)})


def _timed_jit_call(self, *args, **kwargs):
    misses = self.stats["misses"]
    t0 = _clock()
    try:
        return _originals["jit_call"](self, *args, **kwargs)
    finally:
        hit = self.stats["misses"] == misses
        _record(
            f"jit({self._name})",
            "jit",
            t0,
            _clock(),
            {"cache": "hit" if hit else "miss"},
        )


def _fast_operators() -> dict:
    """Tensor's dunders that are the CPU's fast paths, with the general operator each
    falls back to (its closure's ``general``)."""
    found = {}
    for name, fn in vars(Tensor).items():
        if (
            name.startswith("__")
            and inspect.isfunction(fn)
            and "general" in fn.__code__.co_freevars
        ):
            general = inspect.getclosurevars(fn).nonlocals.get("general")
            if general is not None:
                found[name] = (fn, general)
    return found


def _install() -> None:
    _originals["process_primitive"] = EvalTrace.process_primitive
    _originals["program_call"] = Program.__call__
    _originals["jit_call"] = JitFunction.__call__
    _originals["fast"] = _fast_operators()
    EvalTrace.process_primitive = _timed_process_primitive
    Program.__call__ = _timed_program_call
    JitFunction.__call__ = _timed_jit_call
    for name, (_, general) in _originals["fast"].items():
        setattr(Tensor, name, general)
    _jit_module._profile_hook = _record


def _uninstall() -> None:
    EvalTrace.process_primitive = _originals.pop("process_primitive")
    Program.__call__ = _originals.pop("program_call")
    JitFunction.__call__ = _originals.pop("jit_call")
    for name, (fast, _) in _originals.pop("fast").items():
        setattr(Tensor, name, fast)
    _jit_module._profile_hook = None


# ------------------------------------------------------------------ summaries


class EventAverage(NamedTuple):
    """The events of one name summed: ``total`` and ``self_time`` (total less the time
    of events nested inside them on the same thread) in seconds.

    >>> EventAverage("exp", "eager", 2, 1.0, 0.8).avg
    0.5
    """

    name: str
    cat: str
    count: int
    total: float
    self_time: float

    @property
    def avg(self) -> float:
        return self.total / self.count


def _self_times(events) -> list[float]:
    """Each event's duration less its direct children's (same thread, inside it)."""
    self_t = [e.duration for e in events]
    order = sorted(
        range(len(events)), key=lambda i: (events[i].tid, events[i].start, -events[i].end)
    )
    stack: list[int] = []
    tid = None
    for i in order:
        e = events[i]
        if e.tid != tid:
            stack, tid = [], e.tid
        while stack and events[stack[-1]].end <= e.start:
            stack.pop()
        if stack:
            self_t[stack[-1]] -= e.duration
        stack.append(i)
    return self_t


_SORT_KEYS = {
    "total": lambda a: a.total,
    "self": lambda a: a.self_time,
    "avg": lambda a: a.avg,
    "count": lambda a: a.count,
    "calls": lambda a: a.count,
    "name": lambda a: a.name,
}


class KeyAverages(list):
    """``EventAverage``s by name, most total time first; ``table()`` prints them.

    >>> import fntorch as ft
    >>> with ft.profiler.profile() as prof:
    ...     _ = ft.sin(ft.ones(3))
    >>> [a.name for a in prof.key_averages()]
    ['sin']
    """

    def table(self, sort_by: str = "total", row_limit: int = 100) -> str:
        """A text table: name, category, calls, total, self, avg (ms), and each row's
        share of all self time. ``sort_by``: ``"total"``, ``"self"``, ``"avg"``,
        ``"calls"`` or ``"name"`` (PyTorch's ``"cpu_time_total"`` etc. also work);
        ``row_limit``: at most that many rows (negative: all).

        >>> import fntorch as ft
        >>> with ft.profiler.profile() as prof:
        ...     _ = ft.cos(ft.ones(3))
        >>> "cos" in prof.key_averages().table(sort_by="calls", row_limit=5)
        True
        """
        key = sort_by.replace("cpu_time_", "").replace("self_cpu_time_total", "self")
        if key not in _SORT_KEYS:
            raise ValueError(f"table: sort_by must be one of {sorted(_SORT_KEYS)}, got {sort_by!r}")
        rows = sorted(self, key=_SORT_KEYS[key], reverse=key != "name")
        if row_limit >= 0:
            rows = rows[:row_limit]
        all_self = sum(a.self_time for a in self) or 1.0
        width = max([len("Name"), *(len(a.name) for a in rows)])
        head = (
            f"{'Name':<{width}}  {'Category':<8}  {'Calls':>7}  {'Total ms':>10}  "
            f"{'Self ms':>10}  {'Avg us':>10}  {'Self %':>7}"
        )
        lines = [head, "-" * len(head)]
        for a in rows:
            lines.append(
                f"{a.name:<{width}}  {a.cat:<8}  {a.count:>7}  {a.total * 1e3:>10.3f}  "
                f"{a.self_time * 1e3:>10.3f}  {a.avg * 1e6:>10.2f}  "
                f"{100 * a.self_time / all_self:>6.1f}%"
            )
        lines.append("-" * len(head))
        lines.append(f"Self time total: {all_self * 1e3:.3f} ms")
        return "\n".join(lines)

    def __str__(self):
        return self.table()


# ------------------------------------------------------------------ profile


class profile:
    """Records what runs while the context is open, on every thread (see the module).

    ``events()``: the ``Event``s; ``key_averages()``: sums by name; ``export_chrome_trace
    (path)``: a Trace Event Format file. Profiles may nest and overlap; each sees the
    events of its own lifetime.

    >>> import fntorch as ft
    >>> f = ft.jit(lambda x: ft.exp(x) + 1.0)
    >>> with ft.profiler.profile() as prof:
    ...     _ = f(ft.ones(3)); _ = f(ft.ones(3))
    >>> sorted({e.args["cache"] for e in prof.events() if e.cat == "jit"})
    ['hit', 'miss']
    """

    def __init__(self):
        self._events: list[Event] = []
        self._start = None
        self._end = None

    def start(self) -> None:
        with _lock:
            if self in _active:
                raise RuntimeError("profile: this profile is already running")
            self._start = _clock()
            if not _active:
                _install()
            _active.append(self)

    def stop(self) -> None:
        with _lock:
            if self in _active:
                _active.remove(self)
                if not _active:
                    _uninstall()
            self._end = _clock()

    def __enter__(self) -> profile:
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def events(self) -> list[Event]:
        """The recorded events, by start time."""
        return sorted(self._events, key=lambda e: (e.start, -e.end))

    def key_averages(self) -> KeyAverages:
        """The events summed by (name, category), most total time first."""
        events = list(self._events)
        acc: dict = {}
        for e, s in zip(events, _self_times(events)):
            a = acc.get((e.name, e.cat))
            acc[(e.name, e.cat)] = (
                EventAverage(e.name, e.cat, 1, e.duration, s)
                if a is None
                else a._replace(
                    count=a.count + 1, total=a.total + e.duration, self_time=a.self_time + s
                )
            )
        return KeyAverages(sorted(acc.values(), key=lambda a: -a.total))

    def chrome_trace(self) -> dict:
        """The Trace Event Format object (``export_chrome_trace`` writes it): "X"
        complete events, ``ts``/``dur`` in microseconds from the profile's start."""
        import os

        base = self._start if self._start is not None else 0.0
        pid = os.getpid()
        out = []
        for e in self.events():
            out.append(
                {
                    "ph": "X",
                    "name": e.name,
                    "cat": e.cat,
                    "ts": (e.start - base) * 1e6,
                    "dur": (e.end - e.start) * 1e6,
                    "pid": pid,
                    "tid": e.tid,
                    "args": dict(e.args),
                }
            )
        return {"traceEvents": out, "displayTimeUnit": "ms"}

    def export_chrome_trace(self, path) -> None:
        """Writes the trace as JSON to ``path``; open it in ui.perfetto.dev or
        ``chrome://tracing``.

        >>> import fntorch as ft, json, os, tempfile
        >>> with ft.profiler.profile() as prof:
        ...     _ = ft.exp(ft.ones(3))
        >>> path = os.path.join(tempfile.mkdtemp(), "trace.json")
        >>> prof.export_chrome_trace(path)
        >>> json.load(open(path))["traceEvents"][0]["name"]
        'exp'
        """
        with open(path, "w") as f:
            json.dump(self.chrome_trace(), f)
