"""``ft.profiler.profile``: events, the summary table, the Chrome trace, threads, and no
instrumentation left behind."""

import json
import threading

import fntorch as ft
from fntorch.fx.core import EvalTrace, Tensor
from fntorch.lowering.program import Program
from fntorch.transforms.jit import JitFunction


def _mm(a, b):
    return ft.sort(ft.exp(a @ b), axis=-1) + 1.0


def _profiled():
    x = ft.asarray([1.0, 2.0, 3.0])
    m = ft.ones((3, 3))
    f = ft.jit(_mm)
    with ft.profiler.profile() as prof:
        _ = x * 2.0
        _ = ft.sin(x)
        f(m, m)  # a miss: trace, compile, run
        f(m, m)  # a hit
    return prof


def test_records_eager_primitives_kernels_library_steps_and_the_cache():
    prof = _profiled()
    by_cat: dict = {}
    for e in prof.events():
        by_cat.setdefault(e.cat, []).append(e)
    eager = [e.name for e in by_cat["eager"]]
    assert "mul" in eager and "sin" in eager  # the CPU's fast `*` is seen too
    assert {"kernel exp", "kernel add"} <= {e.name for e in by_cat["kernel"]}
    assert {"dot_general (blas)", "sort"} <= {e.name for e in by_cat["library"]}
    assert [e.args["cache"] for e in by_cat["jit"]] == ["miss", "hit"]
    assert [e.name for e in by_cat["jit"]] == ["jit(_mm)", "jit(_mm)"]
    assert [e.name for e in by_cat["trace"]] == ["trace jit(_mm)"]
    assert [e.name for e in by_cat["compile"]] == ["compile jit(_mm)"]
    assert all(e.end >= e.start and isinstance(e.tid, int) for e in prof.events())


def test_table_lists_them_with_counts_and_sorts():
    prof = _profiled()
    avgs = prof.key_averages()
    assert [a.total for a in avgs] == sorted((a.total for a in avgs), reverse=True)
    row = {a.name: a for a in avgs}
    assert row["jit(_mm)"].count == 2 and row["kernel exp"].count == 2
    assert row["jit(_mm)"].self_time < row["jit(_mm)"].total  # its kernels are children
    text = avgs.table()
    for word in ("Name", "Calls", "Total", "Self", "Avg", "%", "mul", "sin", "kernel exp",
                 "sort", "jit(_mm)", "trace jit(_mm)", "compile jit(_mm)"):  # fmt: skip
        assert word in text
    short = avgs.table(sort_by="calls", row_limit=2)
    assert len(short.splitlines()) == 2 + 2 + 2  # header, rule, 2 rows, rule, total
    assert short.splitlines()[2].split()[0] == "view"  # the most frequent step
    by_name = avgs.table(sort_by="name").splitlines()[2:-2]
    assert by_name == sorted(by_name)


def test_chrome_trace_is_json_with_the_fields_and_children_nest(tmp_path):
    prof = _profiled()
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    events = json.loads(path.read_text())["traceEvents"]
    assert events
    for ev in events:
        assert ev["ph"] == "X"
        assert {"name", "cat", "ts", "dur", "pid", "tid", "args"} <= set(ev)
        assert ev["dur"] >= 0 and ev["ts"] >= 0
    eps = 1e-3  # microseconds
    for a in events:
        for b in events:
            if a is b or a["tid"] != b["tid"]:
                continue
            if a["ts"] <= b["ts"] < a["ts"] + a["dur"]:  # b starts inside a: it ends inside
                assert b["ts"] + b["dur"] <= a["ts"] + a["dur"] + eps, (a, b)
    jits = [e for e in events if e["cat"] == "jit"]
    kernels = [e for e in events if e["cat"] == "kernel"]
    for k in kernels:
        assert any(
            j["ts"] <= k["ts"] and k["ts"] + k["dur"] <= j["ts"] + j["dur"] + eps for j in jits
        )
    (trace,) = [e for e in events if e["cat"] == "trace"]
    miss = next(j for j in jits if j["args"]["cache"] == "miss")
    assert (
        miss["ts"] <= trace["ts"] and trace["ts"] + trace["dur"] <= miss["ts"] + miss["dur"] + eps
    )


def test_two_threads_are_recorded_with_their_ids():
    f = ft.jit(lambda x: ft.exp(x) * 3.0)
    x = ft.ones(4)
    f(x)
    tids = {}

    def work(name):
        tids[name] = threading.get_native_id()
        for _ in range(3):
            f(x)
            ft.cos(x)

    with ft.profiler.profile() as prof:
        threads = [threading.Thread(target=work, args=(n,)) for n in ("a", "b")]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    seen = {e.tid for e in prof.events()}
    assert set(tids.values()) <= seen
    for tid in tids.values():
        names = {e.name for e in prof.events() if e.tid == tid}
        assert {"cos", "jit(<lambda>)"} <= names and any(n.startswith("kernel") for n in names)


def test_nothing_is_left_instrumented_and_nothing_recorded_outside():
    before = (EvalTrace.process_primitive, Program.__call__, JitFunction.__call__, Tensor.__mul__)
    with ft.profiler.profile() as outer:
        with ft.profiler.profile() as inner:
            ft.exp(ft.ones(2))
        ft.sin(ft.ones(2))
    ft.cos(ft.ones(2))
    after = (EvalTrace.process_primitive, Program.__call__, JitFunction.__call__, Tensor.__mul__)
    assert before == after
    assert [e.name for e in inner.events()] == ["exp"]
    assert [e.name for e in outer.events()] == ["exp", "sin"]


def test_a_profile_records_nested_jit_programs_of_control_flow():
    f = ft.jit(lambda x: ft.fori_loop(0, 3, lambda i, c: ft.exp(c) - 1.0, x))
    x = ft.ones(2)
    f(x)
    with ft.profiler.profile() as prof:
        f(x)
    programs = [e for e in prof.events() if e.cat == "program"]
    assert len(programs) >= 2  # the function's and its loop body's
    assert any(e.name.startswith("kernel exp") for e in prof.events())


def test_the_module_is_fntorch_profiler_as_api_md_names_it():
    import importlib

    mod = importlib.import_module("fntorch.profiler")
    assert ft.profiler is mod and mod.__name__ == "fntorch.profiler"
    assert mod.profile.__module__ == "fntorch.profiler"
