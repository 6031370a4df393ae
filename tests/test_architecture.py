"""The architecture is a test: rooms import one way, as docs/DESIGN.md lists.

Every module of the package is parsed (no import runs); each ``import`` and
``from ... import`` statement, including those inside functions, is resolved to the module
it names. An import from one room into another must be an arrow that the table
"Allowed imports" in docs/DESIGN.md names, and that table itself must have no circle.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "fntorch"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def room_of(module: str) -> str:
    """``fntorch.ops._tensor`` -> ``ops``; the package's own top level is ``fntorch``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "fntorch"


def imported_modules(path: Path) -> list[tuple[int, str]]:
    """(line, absolute module name) of every fntorch import in ``path``, at any depth."""
    module = module_name(path)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0:
                found.append((node.lineno, node.module))
                continue
            base = package.split(".")
            base = ".".join(base[: len(base) - node.level + 1])
            if node.module:
                found.append((node.lineno, f"{base}.{node.module}"))
            else:  # from . import a, b: each name is a module of the package
                found += [(node.lineno, f"{base}.{a.name}") for a in node.names]
    return [(line, m) for line, m in found if m == "fntorch" or m.startswith("fntorch.")]


def allowed_arrows() -> dict[str, set[str]]:
    """The table under "Allowed imports" in docs/DESIGN.md: room -> rooms it may import."""
    text = (ROOT / "docs" / "DESIGN.md").read_text()
    section = text.split("### Allowed imports", 1)[1].split("\n#", 1)[0]
    table = {}
    for row in re.findall(r"^\| `(\w+)` \|(.*)\|$", section, flags=re.M):
        room, targets = row
        table[room] = set(re.findall(r"`(\w+)`", targets))
    assert table, "docs/DESIGN.md: no rows under '### Allowed imports'"
    return table


def rooms() -> set[str]:
    names = {p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    names |= {p.stem for p in PACKAGE.glob("*.py") if p.stem != "__init__"}
    return names | {"fntorch"}


def test_every_room_is_in_the_table():
    table = allowed_arrows()
    assert rooms() <= set(table), f"rooms missing from DESIGN.md: {rooms() - set(table)}"
    for room, targets in table.items():
        assert targets <= set(table), f"{room} names unknown rooms {targets - set(table)}"


def test_the_allowed_arrows_have_no_circle():
    table = allowed_arrows()
    done, path = set(), []

    def visit(room):
        if room in path:
            raise AssertionError("circle in DESIGN.md: " + " -> ".join([*path, room]))
        if room in done:
            return
        path.append(room)
        for t in table[room] - {room}:
            visit(t)
        path.pop()
        done.add(room)

    for room in table:
        visit(room)


def test_imports_follow_the_allowed_arrows():
    table = allowed_arrows()
    bad = []
    for path in sorted(PACKAGE.rglob("*.py")):
        src = room_of(module_name(path))
        for line, target in imported_modules(path):
            dst = room_of(target)
            if dst != src and dst not in table.get(src, set()):
                bad.append(f"{path.relative_to(ROOT)}:{line}: {src} -> {dst} ({target})")
    assert not bad, "imports against docs/DESIGN.md's arrows:\n" + "\n".join(bad)


def test_the_checker_sees_imports_inside_functions():
    mod = PACKAGE / "fx" / "core.py"
    found = dict((m, line) for line, m in imported_modules(mod))
    assert "fntorch.fx.dtypes" in found and "fntorch.fx.device" in found
    nested = ROOT / "fntorch" / "ops" / "api.py"  # imports the device registry in a method
    assert any(m == "fntorch.fx.device" for _, m in imported_modules(nested))
