"""Rules of the code base that a reviewer would otherwise check by hand."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
KERNEL_DIRS = ["boot", "arch", "kernel", "bench", "runtime"]


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
    exempt = {"kernel/strutil.c": "kernel/string.h"}  # string helpers share string.h
    for c in (p for p in c_files() if p.suffix == ".c"):
        rel = str(c.relative_to(REPO))
        header = exempt.get(rel, rel[:-2] + ".h")
        if rel.startswith("bench/") and (REPO / rel[:-2]).name not in {"harness", "registry", "stats"}:
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
