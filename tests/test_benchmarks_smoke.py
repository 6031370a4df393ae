"""The benchmark harness runs W1, W2 (jit) and W7 end to end on fntorch (numbers, not speed)."""

import math

import numpy as np
import pytest

from benchmarks import _harness as h

TINY = h.Settings(min_runs=2, min_time=0.0, warmup=0)


def _run(workload_id, frameworks):
    workload = h.all_workloads()[workload_id]
    results = {r.base: r for r in h.run_workload(workload, frameworks, TINY)}
    for r in results.values():
        assert not r.error, r.error
        assert len(r.times) >= 2 and all(math.isfinite(t) and t > 0 for t in r.times)
        assert all(np.isfinite(a).all() for a in r.output)
    return results


def test_w1_fntorch_matches_numpy():
    results = _run("W1", ("fntorch", "numpy"))
    (ours,), (ref,) = results["fntorch"].output, results["numpy"].output
    assert ours.shape == ref.shape == (16,)
    np.testing.assert_allclose(ours, ref, rtol=1e-5)
    assert "MISMATCH" not in results["fntorch"].note


def test_w7_fntorch_hessian_matches_closed_form():
    results = _run("W7", ("fntorch", "numpy"))
    (ours,), (ref,) = results["fntorch"].output, results["numpy"].output
    assert ours.shape == ref.shape == (100, 100)
    np.testing.assert_allclose(ours, ref, rtol=1e-3, atol=1e-4)


def test_w2_jit_runs_and_matches_numpy():
    results = _run("W2", ("fntorch", "numpy"))
    ours = results["fntorch"]
    assert ours.mode == "jit" and math.isfinite(ours.first_call)
    assert "MISMATCH" not in ours.note and "GB/s" in ours.note
    assert "kernels" in ours.first_note  # trace/compile/kernel note for the first-call row
    np.testing.assert_allclose(ours.output[0], results["numpy"].output[0], rtol=1e-4, atol=1e-5)


def test_w10_tape_epoch_runs():
    pytest.importorskip("sklearn")
    w = h.all_workloads()["W10"]
    (r,) = h.run_workload(w, ("fntorch",), h.Settings(min_runs=1, min_time=0.0, warmup=0))[:1]
    assert r.mode == "eager" and not r.error and r.times
    assert 0.5 < float(r.output[0]) < 2.5  # an epoch's mean cross-entropy over 10 classes


def test_torch_compile_rows_are_skipped_by_quick():
    w = h.all_workloads()["W2"]
    slow = [i for i in w.impls if i.slow]
    if not slow or not h.available("torch"):
        return
    quick = h.Settings(min_runs=1, min_time=0.0, warmup=0, skip_slow=True)
    results = h.run_workload(w, ("torch",), quick)
    compiled = [r for r in results if "torch.compile" in r.framework]
    assert compiled and all(r.error.startswith("skipped") and not r.times for r in compiled)


def test_registry_lists_every_benchmark_workload():
    ids = set(h.all_workloads())
    assert {f"W{i}" for i in range(1, 12)} <= ids
    pending = {w.id for w in h.all_workloads().values() if w.pending}
    assert not pending
    for w in h.all_workloads().values():
        assert bool(w.pending) != bool(w.impls), w.id  # a row measures something or says why not


def _toy(fntorch_result):
    import fntorch as ft

    w = h.Workload("W99", "toy", make_inputs=lambda: {"x": np.arange(3, dtype=np.float32)})
    w.impl("numpy")(lambda inputs: lambda: inputs["x"] * 2)
    w.impl("fntorch", mode="jit")(lambda inputs: lambda: ft.asarray(fntorch_result))
    return w


def test_a_wrong_result_is_flagged_and_jit_gets_a_first_call_row():
    from benchmarks import _report

    wrong = _toy([0.0, 2.0, 5.0])
    results = h.run_workload(wrong, ("fntorch", "numpy"), TINY)
    assert "MISMATCH" in next(r for r in results if r.base == "fntorch").note
    right = _toy([0.0, 2.0, 4.0])
    results = h.run_workload(right, ("fntorch", "numpy"), TINY)
    assert all("MISMATCH" not in r.note for r in results)
    names = [row[1] for row in _report.rows(right, results)]
    assert names == ["numpy", "fntorch", "fntorch first call"]


def test_a_call_that_fails_after_the_first_is_reported_and_the_others_measured():
    # W10 on a GPU once failed at its eager row's second epoch, after the compiled row
    # had run: the whole run ended and every workload's table was lost.
    w = h.Workload("WX", "a late failure", make_inputs=dict)
    calls = []

    @w.impl("numpy", label="breaks")
    def _breaks(inputs):
        def run():
            calls.append(1)
            if len(calls) > 2:
                raise RuntimeError("the third call breaks")
            return np.zeros(1)

        return run

    @w.impl("numpy", label="works")
    def _works(inputs):
        return lambda: np.zeros(1)

    broken, fine = h.run_workload(w, ("numpy",), h.Settings(min_runs=4, min_time=0.0, warmup=0))
    assert broken.error.startswith("RuntimeError at call 3: the third call breaks")
    assert not broken.times and not fine.error and len(fine.times) >= 4


def test_each_implementation_follows_every_other():
    calls = []
    w = h.Workload("WX", "call order", make_inputs=dict)
    for name in "abc":

        @w.impl("numpy", label=name)
        def build(inputs, name=name):
            return lambda: calls.append(name)

    h.run_workload(w, ("numpy",), h.Settings(min_runs=6, min_time=0.0, warmup=0))
    timed = "".join(calls)[3:]  # after the three first calls (no warm-up)
    pairs = {timed[i : i + 2] for i in range(len(timed) - 1)}
    assert {"ab", "ba", "bc", "cb", "ca", "ac"} <= pairs


def test_each_goal_line_says_which_references_it_holds_fntorch_to():
    from benchmarks import _report

    def result(name, base, ms):
        return h.Result("W8", name, base, "jit", [ms / 1e3], [0], ms / 1e3)

    rows = [result("fntorch", "fntorch", 10.0), result("jax (jax.jit)", "jax", 9.5)]
    lines = _report.goals({"W8": rows})
    assert len(lines) == 2 and len(set(lines)) == 2  # W8's two goals, told apart
    assert lines[0].startswith("W8: ") and lines[1].startswith("W8 vs jax: ")
    assert all(line.endswith("met") for line in lines)


def test_w5_grad_of_jit_and_deserialized_rows_match_numpy():
    workload = h.all_workloads()["W5"]
    results = h.run_workload(workload, ("fntorch", "numpy"), TINY)
    by_mode = {r.mode: r for r in results if r.base == "fntorch"}
    ref = next(r for r in results if r.base == "numpy").output
    for mode in ("jit", "grad(jit)", "jit(grad)", "deserialized"):
        ours = by_mode[mode]
        assert not ours.error and "MISMATCH" not in ours.note, (mode, ours.error, ours.note)
        assert len(ours.output) == len(ref) == 6
        for a, b in zip(ours.output, ref):
            np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


def test_the_deserialized_goal_holds_the_row_to_fntorchs_jit_step():
    from benchmarks import _report

    def result(mode, ms):
        return h.Result("W5", f"fntorch ({mode})", "fntorch", mode, [ms / 1e3], [0], ms / 1e3)

    rows = [result("jit", 2.0), result("deserialized", 2.2), result("grad(jit)", 2.3)]
    rows.append(result("jit(grad)", 1.9))
    lines = [line for line in _report.goals({"W5": rows}) if "vs fntorch jit" in line]
    assert len(lines) == 2
    assert lines[0].startswith("W5 grad(jit) vs fntorch jit(grad): ")
    assert lines[0].endswith("1.21x (goal <= 1.2x): MISSED")
    assert lines[1].startswith("W5 deserialized vs fntorch jit: ")
    assert lines[1].endswith("1.10x (goal <= 1.05x): MISSED")


def test_w11_new_process_child_reports_first_call_and_peak_rss(tmp_path):
    from benchmarks.workloads import w11_new_process as w11np

    path = str(tmp_path / "inputs.npz")
    w11np._save_inputs(path)
    report = w11np._new_process("functional", path)
    assert "error" not in report, report
    assert report["first_call_s"] > 0 and 50 < report["peak_mb"] < 4096, report


def test_device_cuda_without_a_gpu_says_why(monkeypatch):
    import fntorch as ft
    from benchmarks.__main__ import main

    if ft.cuda.is_available():
        pytest.skip("this machine has a GPU")
    with pytest.raises(SystemExit, match="--device cuda: .*not available"):
        main(["--device", "cuda", "--only", "W1"])
    assert h.DEVICE == "cuda"
    h.set_device("cpu")


def test_gpu_sizes_and_rows_follow_the_device():
    from benchmarks.workloads import w2_gelu

    every = h.all_workloads()
    assert {"W1", "W2", "W3", "W4", "W5", "W6", "W9", "W9.copy"} <= {
        wid for wid, w in every.items() if w.gpu
    }
    copy = every["W9.copy"]
    try:
        h.set_device("cuda")
        assert w2_gelu.n() == 2**28 and every["W3"].make_inputs()["x"].shape == (65536, 1024)
        gpu_rows = [i.name for i in copy.impls if i.gpu and i.framework in h.GPU_FRAMEWORKS]
        assert gpu_rows == ["torch (copy 1 GiB on the GPU)"]
    finally:
        h.set_device("cpu")
    assert w2_gelu.n() == 4_194_304 and every["W3"].make_inputs()["x"].shape == (4096, 1024)
    # on the CPU the GPU-only copy row is left out, numpy's stays
    results = h.run_workload(copy, ("numpy", "torch"), TINY)
    assert [r.framework for r in results] == ["numpy (copy 64 MiB)"]


def test_w10_w11_fntorch_rows_run_on_the_runs_device(monkeypatch):
    # --device cuda places the models and batches with on_run_device / fntorch_array;
    # here the fake second device stands in for the GPU, and every row must run there.
    pytest.importorskip("sklearn")
    import fntorch as ft
    from tests.devices.fake import FakeBuffer, fake_device

    devices = fake_device()
    dev = next(devices)
    try:
        monkeypatch.setattr(h, "DEVICE", dev)
        monkeypatch.setattr(h, "on_gpu", lambda: True)
        assert h.fntorch_array(np.ones(2, np.float32)).device is dev
        net = h.on_run_device(ft.nn.Linear(2, 3))
        assert isinstance(net.weight._value, FakeBuffer)
        from fntorch.ops._prims_linalg import dot_general_p

        products = []
        inner = dev.impls[dot_general_p]
        monkeypatch.setitem(
            dev.impls, dot_general_p, lambda *a, **k: products.append(1) or inner(*a, **k)
        )
        for wid in ("W10", "W11"):
            w = h.all_workloads()[wid]
            inputs = w.make_inputs()
            rows = [i for i in w.impls if i.framework == "fntorch" and i.gpu]
            assert {i.mode for i in rows} == {"eager", "compile", "jit"}, wid
            for impl in rows:
                products.clear()
                loss = float(np.asarray(impl.build(inputs)()))
                assert 0.0 < loss < 10.0, (wid, impl.mode, loss)
                if impl.mode == "eager":  # compiled programs call BLAS themselves
                    assert products, (wid, impl.mode)  # the fake device's products ran
    finally:
        next(devices, None)


def test_on_the_gpu_the_goals_are_the_cuda_issues(monkeypatch):
    from benchmarks import _report

    monkeypatch.setattr(h, "DEVICE", "cuda")  # the GPU sizes: W2 2^28, W9.copy 1 GiB

    def result(wid, base, mode, ms, name=""):
        return h.Result(wid, name or f"{base} ({mode})", base, mode, [ms / 1e3], [0], ms / 1e3)

    rows = {
        "W1": [result("W1", "fntorch", "eager", 23.8), result("W1", "torch", "eager", 23.6)],
        "W2": [result("W2", "fntorch", "jit", 0.77)],
        "W9.copy": [result("W9.copy", "torch", "eager", 0.75)],
        "W5": [result("W5", "fntorch", "jit", 0.29), result("W5", "jax", "jit", 0.25)],
        "W6": [result("W6", "fntorch", "jit", 0.24), result("W6", "jax", "jit", 0.21)],
        "W11": [
            result("W11", "fntorch", "compile", 2.1), result("W11", "fntorch", "jit", 3.5),
            result("W11", "torch", "jit", 9.2), result("W11", "jax", "jit", 3.4),
        ],
    }  # fmt: skip
    lines = _report.goals(rows, "cuda")
    assert lines[0].startswith("W1 vs torch: ") and lines[0].endswith("1.01x (goal <= 1x): MISSED")
    assert lines[1].startswith("W5 vs jax: ") and lines[1].endswith("(goal <= 1.2x): met")
    # jax.jit's TF32 products mismatch PyTorch's on a GPU: still the reference, and said
    rows["W6"][1].note = "MISMATCH vs torch (torch.func): max |diff| 0.000964"
    w6 = next(line for line in _report.goals(rows, "cuda") if line.startswith("W6"))
    assert w6.endswith("1.14x (goal <= 1.2x): met (the reference's output MISMATCHes: see its row)")
    w11 = [line for line in lines if line.startswith("W11")]
    assert len(w11) == 4 and all(line.endswith("met") for line in w11)
    assert w11[0].startswith("W11 compile vs torch jit: ")
    # 2 GiB in 0.77 ms against 2 GiB copied in 0.75: 97% of the copy
    assert lines[-1].startswith("W2 vs the copy: ") and lines[-1].endswith("97% (goal >= 90%): met")
    assert not any("first call" in line for line in lines)  # the CPU issues' goals stay out
