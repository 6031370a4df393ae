"""Running a measurement in a new Python process (first calls, peak memory)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run_python(code: str) -> dict:
    """Runs ``code`` in a new interpreter from the project root; returns the JSON object it
    printed last, or ``{"error": its last stderr line}``."""
    # Python writes bytecode caches (as after an install); a sandbox setting
    # PYTHONDONTWRITEBYTECODE would make every new process recompile fntorch's own
    # sources (~80 ms), which no installed library pays.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    proc = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**env, "JAX_PLATFORMS": "cpu"},
    )
    if proc.returncode != 0:
        return {"error": (proc.stderr.strip().splitlines() or ["?"])[-1][:120]}
    return json.loads(proc.stdout.strip().splitlines()[-1])
