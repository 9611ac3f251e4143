"""The host tool's layers: every import of tools/cleanroom_host (function-local ones included, and the
families that reports/families.py loads by name) goes down, never up, and no modules import each other
in a circle. From the bottom: records (the protocol, results files, units, text), stats (intervals),
machines (emulators, runs, the machine, the estimate, LAVA), reports (the frame, the shared kit, compare
and one module per benchmark family), and the top-level modules (cli). A family's module imports the
shared kit and the layers below, never another family's module nor the frame. tests/test_layers.py
does the same for the C sources; docs/LAYOUT.md says the same."""

from __future__ import annotations

import ast
import functools
import shutil
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PACKAGE = "cleanroom_host"
LAYERS = ("records", "stats", "machines", "reports", "")  # "": the package's top-level modules (cli)
RANK = {name: i for i, name in enumerate(LAYERS)}
FAMILIES_MODULE = f"{PACKAGE}.reports.families"
# what a family's module may import of reports/ (the shared kit), besides the layers below
KIT = {"answers", "context", "cells", "plotkit", "paper", "derive", "decisions"}


def modules(root: Path) -> dict[str, Path]:
    """Every module of the package under root (tools/), by dotted name ("cleanroom_host.reports.smp")."""
    out = {}
    for path in sorted((root / PACKAGE).rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path
    return out


@functools.cache
def parsed(text: str) -> ast.Module:
    """A module's syntax tree, parsed once a session for each text: the planted trees below are copies of
    the package, and each test builds the graph of one (parsing was most of this file's 5 s of CPU)."""
    return ast.parse(text)


def family_names(path: Path) -> list[str]:
    """The module names of families.py's FAMILIES table: Family("name", ...) calls."""
    tree = parsed(path.read_text())
    return [node.args[0].value for node in ast.walk(tree)
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Family"
            and node.args and isinstance(node.args[0], ast.Constant)]


def imports(name: str, path: Path, known: set[str]) -> list[tuple[str, int]]:
    """The package's modules `name` imports, with the line: `from . import a` names module a, `from .a import
    f` module a, absolute imports of the package likewise."""
    is_package = path.name == "__init__.py"
    here = name.split(".") if is_package else name.split(".")[:-1]
    out = []
    for node in ast.walk(parsed(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = here[:len(here) - node.level + 1] if node.level > 1 else here
                target = ".".join(base + ([node.module] if node.module else []))
            elif node.module and node.module.split(".")[0] == PACKAGE:
                target = node.module
            else:
                continue
            for a in node.names:
                sub = f"{target}.{a.name}"
                out.append((sub if sub in known else target, node.lineno))
        elif isinstance(node, ast.Import):
            out += [(a.name, node.lineno) for a in node.names if a.name.split(".")[0] == PACKAGE]
    if name == FAMILIES_MODULE:
        out += [(f"{PACKAGE}.reports.{f}", 0) for f in family_names(path)]
    return [(t, line) for t, line in out if t in known and t != name and t != PACKAGE]


def layer(name: str) -> str:
    parts = name.split(".")
    return parts[1] if len(parts) > 2 or (len(parts) == 2 and parts[1] in RANK) else ""


def graph(root: Path) -> dict[str, list[tuple[str, int]]]:
    mods = modules(root)
    return {name: imports(name, path, set(mods)) for name, path in mods.items()}


def upward(root: Path) -> list[str]:
    """Every import of a higher layer, or of another family's module (or the frame) by a family, as
    'reports/smp.py:12: imports cleanroom_host.reports.aspace (...)'."""
    mods = modules(root)
    fams = {f"{PACKAGE}.reports.{f}" for f in family_names(mods[FAMILIES_MODULE])}
    problems = []
    for name, targets in graph(root).items():
        where = mods[name].relative_to(root / PACKAGE).as_posix()
        for target, line in targets:
            a, b = layer(name), layer(target)
            if RANK[b] > RANK[a]:
                problems.append(f"{where}:{line}: imports {target}: {a or 'the top'} is below {b or 'the top'}")
            elif name in fams and target.startswith(f"{PACKAGE}.reports.") and target.rsplit(".", 1)[1] not in KIT:
                problems.append(f"{where}:{line}: imports {target}: a family imports only the shared kit "
                                f"({', '.join(sorted(KIT))}) of reports/")
    return problems


def circles(root: Path) -> list[str]:
    """Every set of modules that import each other, as 'a -> b -> a' (the shortest loop from its first
    member by name)."""
    g = {name: sorted({t for t, _ in targets}) for name, targets in graph(root).items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in g[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(g):
        if v not in index:
            visit(v)
    out = []
    for comp in found:
        start, members = comp[0], set(comp)
        paths = {start: [start]}
        queue = [start]
        loop = None
        while queue and loop is None:
            v = queue.pop(0)
            for w in g[v]:
                if w == start:
                    loop = paths[v] + [start]
                    break
                if w in members and w not in paths:
                    paths[w] = paths[v] + [w]
                    queue.append(w)
        out.append(" -> ".join(m.removeprefix(f"{PACKAGE}.") for m in loop or comp))
    return out


def test_every_module_is_in_a_layer() -> None:
    mods = modules(REPO / "tools")
    assert f"{PACKAGE}.cli" in mods and FAMILIES_MODULE in mods
    assert {layer(m) for m in mods} <= set(RANK), sorted({layer(m) for m in mods} - set(RANK))


def test_no_import_goes_up() -> None:
    problems = upward(REPO / "tools")
    assert not problems, "upward imports:\n" + "\n".join(problems)


def test_no_import_circle() -> None:
    found = circles(REPO / "tools")
    assert not found, "import circles:\n" + "\n".join(found)


def copy_of_tool(tmp_path: Path) -> Path:
    shutil.copytree(REPO / "tools" / PACKAGE, tmp_path / PACKAGE, ignore=shutil.ignore_patterns("__pycache__"))
    return tmp_path


def plant(root: Path, rel: str, line: str) -> None:
    """A line added after a module's `from __future__` import, as a careless edit would add it."""
    path = root / PACKAGE / rel
    text = path.read_text()
    anchor = "from __future__ import annotations\n"
    assert anchor in text, rel
    path.write_text(text.replace(anchor, anchor + line + "\n", 1))


def test_a_planted_circle_is_named(tmp_path: Path) -> None:
    """The test of the test: interval importing the emulator table, which imports text, which (planted)
    imports interval: one circle, named from its first module; a function-local import counts."""
    root = copy_of_tool(tmp_path)
    path = root / PACKAGE / "records" / "text.py"
    path.write_text(path.read_text() + "\n\ndef _planted() -> None:\n    from ..stats import interval  # noqa\n")
    assert circles(root) == ["records.text -> stats.interval -> records.text"]


def test_a_planted_upward_import_is_named(tmp_path: Path) -> None:
    root = copy_of_tool(tmp_path)
    plant(root, "machines/machine.py", "from ..reports import paper  # noqa")
    line = (root / PACKAGE / "machines" / "machine.py").read_text().split("\n").index("from ..reports import paper  # noqa")
    assert upward(root) == [f"machines/machine.py:{line + 1}: imports cleanroom_host.reports.paper: "
                            "machines is below reports"]


def test_a_family_importing_another_family_is_named(tmp_path: Path) -> None:
    root = copy_of_tool(tmp_path)
    plant(root, "reports/smp.py", "from . import aspace  # noqa")
    problems = upward(root)
    assert len(problems) == 1 and problems[0].startswith("reports/smp.py:") and "reports.aspace" in problems[0]
    assert "a family imports only the shared kit" in problems[0]


def test_the_families_table_counts_as_imports(tmp_path: Path) -> None:
    """families.py loads its families by name: the graph sees them, so a family importing the registry is a
    circle."""
    root = copy_of_tool(tmp_path)
    assert (f"{PACKAGE}.reports.smp", 0) in graph(root)[FAMILIES_MODULE]
    plant(root, "reports/smp.py", "from . import families  # noqa")
    assert any("reports.families" in c and "reports.smp" in c for c in circles(root))
