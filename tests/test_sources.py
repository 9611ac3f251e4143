"""Rules of the code base that a reviewer would otherwise check by hand."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
KERNEL_DIRS = ["boot", "lib", "lib/freestanding", "arch", "kernel", "runtime", "bench", "app"]


def c_files() -> list[Path]:
    return [p for d in KERNEL_DIRS for p in sorted((REPO / d).glob("*.[ch]"))]


def test_inline_asm_only_in_arch() -> None:
    offenders = [str(p.relative_to(REPO)) for p in c_files()
                 if p.parts[-2] != "arch" and re.search(r"\b__asm__\b|\basm\s*\(", p.read_text())]
    assert not offenders, f"inline asm outside arch/: {offenders}"


def test_assembly_selectors_match_c() -> None:
    c = dict(re.findall(r"#define (SEL_\w+) (0x[0-9a-f]+)", (REPO / "arch" / "mmu.h").read_text()))
    inc = dict(re.findall(r"(SEL_\w+) equ (0x[0-9a-f]+)", (REPO / "arch" / "selectors.inc").read_text()))
    assert inc and all(c[k] == v for k, v in inc.items())


def test_every_source_has_its_header_with_a_guard() -> None:
    headers = [p for p in c_files() if p.suffix == ".h"]
    for h in headers:
        text = h.read_text()
        guard = re.search(r"#ifndef (\w+_H)\n#define \1", text)
        assert guard, f"{h.relative_to(REPO)} has no include guard"
    # the C library's string functions and the kernel's string helpers share one header
    exempt = {"lib/strutil.c": "lib/string.h", "lib/freestanding/string.c": "lib/string.h"}
    for c in (p for p in c_files() if p.suffix == ".c"):
        rel = str(c.relative_to(REPO))
        header = exempt.get(rel, rel[:-2] + ".h")
        if rel.startswith("bench/") and re.search(r"^const struct bench \w+ =", c.read_text(), re.M):
            continue  # a benchmark's only interface is its registry line
        assert (REPO / header).exists(), f"{rel} has no header {header}"


def test_every_benchmark_is_registered_once() -> None:
    registry = (REPO / "bench" / "registry.def").read_text()
    registered = re.findall(r"^BENCH\((\w+)\)", registry, re.M)
    defined = {}
    for p in (REPO / "bench").glob("*.c"):
        for sym in re.findall(r"^const struct bench (\w+) =", p.read_text(), re.M):
            defined[sym] = p.name
    assert sorted(registered) == sorted(defined), (registered, defined)
    assert len(set(registered)) == len(registered)


# `cond ? a - b : 0` (or `cond ? 0 : a - b`): a difference clamped to zero.
# On a measured value that turns noise into a measured 0 (a report of
# "0 (0-1117) cycles"); a sample is signed and kept as measured (lib/stats.h).
MINUS = r"[\w)\]]\s*-(?![-=>])\s*[\w(]"  # a binary minus: not --, -=, ->, nor a sign
CLAMP = re.compile(rf"\?[^:;?]*?{MINUS}[^:;?]*?:\s*0\b|\?\s*0\s*:[^;]*?{MINUS}")
# The clamps that are not on measured values, each with why it is legitimate.
CLAMP_ALLOWED = {
    ("runtime/iaheap_user.c", "pages > 1 ? (pages - 1) / (IA_SUBHEAPS + 1) : 0"):
        "pages per sub-heap of an arena: page 0 is the header, an arena of one page has none to share",
    ("runtime/aspace.c", "shared_region_index(va) < 0 ? 0 : (void *)(shared.base + (va - U_SHARED))"):
        "an address, not a difference: NULL (0) for a virtual address outside the shared regions",
}
CLAMP_DIRS = ["bench", "runtime"]


def strip_comments(text: str) -> str:
    return re.sub(r"/\*.*?\*/|//[^\n]*", lambda m: re.sub(r"[^\n]", " ", m.group(0)), text, flags=re.S)


def clamps() -> dict[tuple[str, str], int]:
    """(file, the clamp's statement) -> its line, for every clamp pattern in CLAMP_DIRS."""
    found = {}
    for p in (p for d in CLAMP_DIRS for p in sorted((REPO / d).glob("*.[ch]"))):
        text = strip_comments(p.read_text())
        for m in CLAMP.finditer(text):
            start = max(text.rfind("=", 0, m.start()), text.rfind("return", 0, m.start()), text.rfind("\n", 0, m.start()))
            stmt = text[start:text.find(";", m.end() - 1)].lstrip("=").strip()
            stmt = stmt.removeprefix("return").strip()
            found[(str(p.relative_to(REPO)), stmt)] = text.count("\n", 0, m.start()) + 1
    return found


def test_no_measured_difference_is_clamped_to_zero() -> None:
    """A difference of measurements (a run minus its baseline, minus the
    timing overhead, cold minus warm) is recorded signed: never `? a - b : 0`."""
    offenders = [f"{f}:{line}: {stmt}" for (f, stmt), line in clamps().items() if (f, stmt) not in CLAMP_ALLOWED]
    assert not offenders, "differences clamped to 0 (keep them signed, as measured):\n" + "\n".join(offenders)


def test_clamp_pattern_finds_what_it_must() -> None:
    """The pattern catches the shapes a clamp takes, and the allow-list is not stale."""
    for clamp in ["s = s > sub ? s - sub : 0;", "return t > base ? t - base : 0;", "x = a >= b ? a - b : 0 ;",
                  "*cycles = body > mark ? body - mark : 0;", "return a < b ? 0 : a - b;",
                  "return cold > warm ? (cold - warm) : 0;"]:
        assert CLAMP.search(clamp), clamp
    for fine in ["return (int64_t)cold - (int64_t)warm;", "n = a ? b : 0;", "p = q ? r->s : 0;",
                 "x = i-- > 0 ? y : 0;", "y = k ? -1 : 0;"]:
        assert not CLAMP.search(fine), fine
    assert set(CLAMP_ALLOWED) <= set(clamps()), "an allowed clamp is gone: drop it from CLAMP_ALLOWED"


# --- the host tool (tools/cleanroom_host) ------------------------------------------

HOST_PACKAGE = REPO / "tools" / "cleanroom_host"


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def private_imports(source: str) -> list[str]:
    """Where a module of the package takes what another keeps to itself (a leading underscore):
    `from .x import _name`, or `x._name` on a name it imported from the package."""
    tree = ast.parse(source)
    found = []
    imported: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level > 0:
            for alias in node.names:
                if _private(alias.name):
                    found.append(f"line {node.lineno}: from {'.' * node.level}{node.module or ''} import {alias.name}")
                imported.add(alias.asname or alias.name)
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in imported
                and _private(node.attr)):
            found.append(f"line {node.lineno}: {node.value.id}.{node.attr}")
    return found


def test_no_host_module_borrows_another_modules_private_names() -> None:
    modules = sorted(HOST_PACKAGE.rglob("*.py"))  # every subpackage's (records, stats, machines, reports)
    assert len(modules) > 30 and HOST_PACKAGE / "reports" / "smp.py" in modules
    offenders = {p.relative_to(HOST_PACKAGE).as_posix(): hits for p in modules
                 if (hits := private_imports(p.read_text()))}
    assert offenders == {}, "share a helper under a public name (cells.py, plotkit.py), not by its _name"


@pytest.mark.parametrize("planted", [
    "from .plots import DPI, _size_axis\n",
    "from . import lockreport as lr\nx = lr._nan()\n",
])
def test_the_private_name_check_finds_a_planted_one(planted: str) -> None:
    assert private_imports(planted)


def test_the_private_name_check_lets_public_and_own_names_be() -> None:
    assert private_imports("import os\nfrom .plotkit import size_axis\n\ndef _mine() -> None:\n"
                           "    os._exit(0)\n\n_mine()\n") == []
