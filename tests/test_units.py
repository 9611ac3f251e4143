"""The kernel's portable C (cmdline, CRC-32, record writer, statistics,
region allocator, formatter), compiled for Linux by the same cross compiler
(`make units`) and run here."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from booting import TOOL_SAFETY_NET_S

REPO = Path(__file__).resolve().parent.parent
UNIT_SOURCES = sorted((REPO / "tests" / "unit").glob("test_*.c"))


@pytest.fixture(scope="module", autouse=True)
def built_units() -> None:
    subprocess.run(["make", "-s", "units"], cwd=REPO, check=True)


@pytest.mark.parametrize("source", UNIT_SOURCES, ids=lambda p: p.stem)
def test_unit(source: Path) -> None:
    binary = REPO / "build" / "units" / source.stem
    proc = subprocess.run([str(binary)], capture_output=True, text=True, timeout=TOOL_SAFETY_NET_S)
    lines = proc.stdout.strip().splitlines()
    assert lines, f"{source.stem} printed nothing"
    summary = lines[-1]
    failures = [line for line in lines if line.startswith("FAIL")]
    assert proc.returncode == 0 and not failures, "\n".join(failures) or summary
    passed = int(summary.split()[0])
    assert summary.endswith(" passed, 0 failed") and passed >= 5, summary


def test_every_portable_source_is_unit_tested() -> None:
    """Each file of lib/ (what the unit tests link) has a unit test that
    includes its header (a new portable file needs a test)."""
    sources = sorted(p.relative_to(REPO).as_posix() for p in (REPO / "lib").glob("*.c"))
    assert sources
    tests_text = "".join(p.read_text() for p in UNIT_SOURCES)
    helpers = {"lib/strutil.c", "lib/config.c"}  # exercised through cmdline
    for src in sources:
        if src in helpers:
            continue
        header = src[:-2] + ".h"
        assert f'#include "{header}"' in tests_text, f"{src} has no unit test"
