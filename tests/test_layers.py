"""The layers of the C and assembly sources: nothing includes a higher one.

From the bottom: lib (portable code the host also compiles and tests;
lib/freestanding is what a C library would give the kernel), arch (IA-32
specifics; boot's entry is at the same level), kernel (platform services),
runtime (fibers, synchronisation, isolated threads), bench (the harness and
the benchmarks), app (the program's top). hosted/ is the Linux build: it
implements lower interfaces for a process and is its own program's top, so
it sits above app and nothing includes it. docs/LAYOUT.md says the same.

Within and across layers, modules (a .c with its .h) include each other's
headers without a circle, so that they too stand one above another."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
LAYERS = ("lib", "arch", "kernel", "runtime", "bench", "app", "hosted")
RANK = {name: i for i, name in enumerate(LAYERS)} | {"boot": LAYERS.index("arch")}
INCLUDE = re.compile(r'^\s*(?:#\s*include|%include)\s+"([^"]+)"', re.M)


def sources(root: Path) -> list[Path]:
    return sorted(p for top in RANK for p in (root / top).rglob("*")
                  if p.suffix in (".c", ".h", ".asm", ".inc") and p.is_file())


def layer_of(rel: str) -> str | None:
    top = rel.split("/", 1)[0]
    return top if top in RANK else None


def include_problems(root: Path) -> list[str]:
    """Every include that reaches up a layer, or names a file that is not
    in a layer, as 'file:line: includes "x" (layer a below layer b)'."""
    problems = []
    for path in sources(root):
        rel = path.relative_to(root).as_posix()
        text = path.read_text()
        for m in INCLUDE.finditer(text):
            target, line = m.group(1), text.count("\n", 0, m.start()) + 1
            where = f"{rel}:{line}: includes \"{target}\""
            to = layer_of(target)
            if to is None or not (root / target).is_file():
                problems.append(f"{where}, which is not a file of any layer ({', '.join(LAYERS)})")
            elif RANK[to] > RANK[layer_of(rel) or "lib"]:
                problems.append(f"{where}: {layer_of(rel)} is below {to}")
    return problems


def module_of(rel: str) -> str:
    """A source's module: its path without the suffix (arch/lapic.h and
    arch/lapic.c are both arch/lapic: one header per source)."""
    return rel.rsplit(".", 1)[0]


def include_graph(root: Path) -> dict[str, set[str]]:
    """Module X -> the modules whose headers X's files include."""
    graph: dict[str, set[str]] = {}
    for path in sources(root):
        rel = path.relative_to(root).as_posix()
        edges = graph.setdefault(module_of(rel), set())
        for m in INCLUDE.finditer(path.read_text()):
            if layer_of(m.group(1)) is not None:
                edges.add(module_of(m.group(1)))
    for module, edges in graph.items():
        edges.discard(module)  # arch/lapic.c including arch/lapic.h is no circle
    return graph


def reachable(graph: dict[str, set[str]], start: str) -> set[str]:
    """The modules that start's includes lead to, directly or not."""
    seen: set[str] = set()
    todo = list(graph.get(start, ()))
    while todo:
        module = todo.pop()
        if module not in seen:
            seen.add(module)
            todo.extend(graph.get(module, ()))
    return seen


def shortest_way_back(graph: dict[str, set[str]], start: str) -> list[str]:
    """The modules from start along the shortest way back to it (start first,
    ties broken by name)."""
    came_from: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following = []
        for module in frontier:
            for nxt in sorted(graph.get(module, ())):
                if nxt == start:
                    way = [module]
                    while way[-1] != start:
                        way.append(came_from[way[-1]])
                    return way[::-1]
                if nxt not in came_from:
                    came_from[nxt] = module
                    following.append(nxt)
        frontier = following
    raise ValueError(f"{start} is on no circle")


def include_circles(root: Path) -> list[str]:
    """Modules that reach each other through includes, one circle per such
    set as 'a -> b -> c -> a': from the set's first module by name along the
    shortest way back, followed by the whole set when it holds more."""
    graph = include_graph(root)
    reach = {module: reachable(graph, module) for module in graph}
    circles = []
    for module in sorted(graph):
        if module not in reach[module]:
            continue
        knot = {m for m in reach[module] if module in reach.get(m, ())}
        if module != min(knot):
            continue
        way = shortest_way_back(graph, module)
        circle = " -> ".join(way + [module])
        if len(knot) > len(way):
            circle += f" (of {len(knot)} that reach each other: {', '.join(sorted(knot))})"
        circles.append(circle)
    return circles


def test_no_include_reaches_a_higher_layer() -> None:
    assert sources(REPO), "no sources found"
    problems = include_problems(REPO)
    assert not problems, "upward or unknown includes:\n" + "\n".join(problems)


def test_no_include_circle() -> None:
    """Inside one layer too, modules stand one above another: a circle (as
    arch/lapic -> arch/msr -> arch/trap -> arch/lapic was) leaves none of its
    modules below the others, to read or to test first."""
    circles = include_circles(REPO)
    assert not circles, "modules that include each other's headers in a circle:\n" + "\n".join(circles)


def test_every_source_folder_is_a_layer() -> None:
    """A new top-level folder of C must be placed in the order, not missed."""
    folders = {p.relative_to(REPO).parts[0] for p in REPO.glob("*/**/*.[ch]")
               if p.relative_to(REPO).parts[0] not in ("tests", "tools", "build", ".venv", "results")}
    assert folders <= set(RANK), f"folders of C outside the layers: {sorted(folders - set(RANK))}"


@pytest.fixture()
def tree(tmp_path: Path) -> Path:
    for top in RANK:
        if (REPO / top).is_dir():
            shutil.copytree(REPO / top, tmp_path / top)
    return tmp_path


def test_a_planted_upward_include_is_named(tree: Path) -> None:
    assert include_problems(tree) == []
    victim = tree / "arch" / "cpu.c"
    victim.write_text('#include "bench/harness.h"\n' + victim.read_text())
    problems = include_problems(tree)
    assert problems == ['arch/cpu.c:1: includes "bench/harness.h": arch is below bench']


def test_a_planted_include_of_hosted_or_a_missing_file_is_named(tree: Path) -> None:
    (tree / "bench" / "x.c").write_text('#include "lib/fmt.h"\n#include "hosted/platform.h"\n')
    (tree / "kernel" / "y.asm").write_text('%include "arch/nothing.inc"\n')
    problems = include_problems(tree)
    assert problems == ['bench/x.c:2: includes "hosted/platform.h": bench is below hosted',
                        'kernel/y.asm:1: includes "arch/nothing.inc", which is not a file of any layer '
                        '(lib, arch, kernel, runtime, bench, app, hosted)']


def test_a_planted_circle_is_named(tree: Path) -> None:
    assert include_circles(tree) == []
    trap = tree / "arch" / "trap.c"
    trap.write_text('#include "arch/lapic.h"\n' + trap.read_text())
    assert include_circles(tree) == ["arch/lapic -> arch/msr -> arch/trap -> arch/lapic"]


def test_a_planted_circle_across_layers_is_named_whole(tree: Path) -> None:
    (tree / "lib" / "a.h").write_text('#include "kernel/b.h"\n')
    (tree / "kernel" / "b.c").write_text('#include "kernel/b.h"\n#include "runtime/c.h"\n')
    (tree / "kernel" / "b.h").write_text("")
    (tree / "runtime" / "c.h").write_text('#include "lib/a.h"\n#include "kernel/b.h"\n')
    assert include_circles(tree) == [
        "kernel/b -> runtime/c -> kernel/b (of 3 that reach each other: kernel/b, lib/a, runtime/c)"]
