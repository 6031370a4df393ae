"""A/B of two checkouts: ``python -m benchmarks.ab OLD_ROOT NEW_ROOT [--rounds N] [...]``.

Each round runs ``python -m benchmarks`` once in each checkout, in its own process (so
each imports its own fntorch), the order alternating between rounds; the table gives,
per workload row of fntorch, the median over the rounds of each checkout's medians and
their ratio (new / old: above 1, the new checkout is slower). Options after the roots
are passed to ``python -m benchmarks`` (default: ``--quick --frameworks fntorch,numpy
--no-malloc-env``).
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys

# workload | framework | median | min | max | unit | ...
_ROW = re.compile(
    r"^(W\d+)\s*\|\s*(fntorch[^|]*?)\s*\|\s*([0-9.]+)\s*\|[^|]*\|[^|]*\|\s*(\S+)\s*\|"
)


def fntorch_rows(root: str, args: list[str]) -> dict[str, tuple[float, str]]:
    """``(workload, row) -> (median, unit)`` of one ``python -m benchmarks`` run in ``root``."""
    env = {**os.environ, "PYTHONPATH": root}
    out = subprocess.run(
        [sys.executable, "-m", "benchmarks", *args],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    rows = {}
    for line in out.splitlines():
        m = _ROW.match(line)
        if m and "first call" not in m.group(2):
            rows[f"{m.group(1)} {m.group(2)}"] = (float(m.group(3)), m.group(4))
    return rows


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("old")
    p.add_argument("new")
    p.add_argument("--rounds", type=int, default=3)
    ns, rest = p.parse_known_args(argv)
    rest = rest or ["--quick", "--frameworks", "fntorch,numpy", "--no-malloc-env"]
    runs = {"old": [], "new": []}
    for r in range(ns.rounds):
        for side in ("old", "new") if r % 2 == 0 else ("new", "old"):
            runs[side].append(fntorch_rows(getattr(ns, side), rest))
            print(f"round {r + 1}/{ns.rounds}: {side} done", file=sys.stderr)
    print("| row | unit | old | new | new / old |")
    print("| --- | --- | --- | --- | --- |")
    for row in runs["old"][0]:
        if not all(row in run for run in runs["old"] + runs["new"]):
            continue
        old = statistics.median(run[row][0] for run in runs["old"])
        new = statistics.median(run[row][0] for run in runs["new"])
        unit = runs["old"][0][row][1]
        print(f"| {row} | {unit} | {old:.4g} | {new:.4g} | {new / old:.3f} |")


if __name__ == "__main__":
    main()
