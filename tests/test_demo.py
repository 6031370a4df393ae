"""``python -m fntorch.demo`` runs, trains, and says so."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_demo_trains_and_reports_accuracy():
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    proc = subprocess.run(
        [sys.executable, "-m", "fntorch.demo"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    losses = [float(v) for v in re.findall(r"^step\s+\d+\s+loss (\S+)$", out, re.M)]
    assert len(losses) >= 3, out
    assert losses[-1] < 0.5 * losses[0], losses
    accuracy = float(re.search(r"final accuracy: (\S+)", out).group(1))
    assert accuracy > 0.9, out
    for heading in ("== tensors", "== graphs", "== training", "== per-example gradients", "== jit"):
        assert heading in out
    assert "lambda" in out  # a make_graph printout
    error_line = re.search(r"^x\[0\] = 10.0 raises TypeError: (.*)$", out, re.M)
    assert error_line and ".at[" in error_line.group(1), out  # the error names the fix
    assert "shape (256,)" in out  # one gradient norm per example
    # jit: the compiled step gives eager's numbers, and lower() shows fused kernels
    same = re.search(
        r"^jit step == eager step: loss (\S+) vs (\S+), max \|param diff\| (\S+)$", out, re.M
    )
    assert same, out
    assert float(same.group(1)) == pytest.approx(float(same.group(2)), rel=1e-4)
    assert float(same.group(3)) < 1e-4
    fused = re.search(r"-> (\d+) fused kernels \+ (\d+) library calls", out)
    assert fused and int(fused.group(1)) >= 1, out
    assert re.search(r"^first call: \S+ ms \(trace", out, re.M), out
    # PyTorch-style: the digits CNN, eager on the tape and compiled
    cnn = dict(re.findall(r"^(eager|compiled) +3 epochs: test accuracy (\S+),", out, re.M))
    assert set(cnn) == {"eager", "compiled"}, out
    assert all(float(a) > 0.9 for a in cnn.values()), cnn
