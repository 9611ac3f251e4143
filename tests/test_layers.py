"""The layers of the C and assembly sources: nothing includes a higher one.

From the bottom: lib (portable code the host also compiles and tests;
lib/freestanding is what a C library would give the kernel), arch (IA-32
specifics; boot's entry is at the same level), kernel (platform services),
runtime (fibers, synchronisation, isolated threads), bench (the harness and
the benchmarks), app (the program's top). hosted/ is the Linux build: it
implements lower interfaces for a process and is its own program's top, so
it sits above app and nothing includes it. README's "Layout" says the same."""

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


def test_no_include_reaches_a_higher_layer() -> None:
    assert sources(REPO), "no sources found"
    problems = include_problems(REPO)
    assert not problems, "upward or unknown includes:\n" + "\n".join(problems)


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
