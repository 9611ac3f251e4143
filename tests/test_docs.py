"""docs/PROTOCOL.md must match what the kernel prints: every wire constant
of lib/wire.h, and every field of every record a real boot emits."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from booting import SMALL_ALL, boot

REPO = Path(__file__).resolve().parent.parent
DOC = (REPO / "docs" / "PROTOCOL.md").read_text()
WIRE = (REPO / "lib" / "wire.h").read_text()


def test_every_wire_constant_is_documented_with_its_value() -> None:
    defines = re.findall(r'#define\s+(WIRE_\w+|REC_\w+|STATUS_\w+)\s+("[^"]*"|\d+)', WIRE)
    assert len(defines) >= 20
    for name, value in defines:
        assert f"`{name}`" in DOC, f"{name} is not named in docs/PROTOCOL.md"
        shown = value.strip('"').replace("\r", "\\r").replace("\n", "\\n")
        assert f"`{value}`" in DOC or f"`{shown}`" in DOC, f"{name}'s value {value} is not in docs/PROTOCOL.md"


def doc_fields() -> dict[str, set[str]]:
    """Record type -> the backticked field names of its row in the Types table."""
    rows = {}
    for line in DOC.splitlines():
        m = re.match(r"\| `(\w+)` \(`REC_\w+`\) \|[^|]*\|(.*)\|$", line)
        if m:
            rows[m.group(1)] = set(re.findall(r"`(\w+)`", m.group(2)))
    return rows


def test_every_record_type_has_a_row() -> None:
    types = re.findall(r'#define\s+REC_\w+\s+"(\w+)"', WIRE)
    assert set(types) == set(doc_fields())


@pytest.mark.usefixtures("kernel_elf")
@pytest.mark.parametrize("cmdline", [SMALL_ALL, "provoke=pf", "suite=nope", "bench=tsc paging=on"])
def test_every_printed_field_is_documented(tmp_path: Path, cmdline: str) -> None:
    _, res = boot(tmp_path, "qemu", cmdline)
    records = res["records"]
    assert records
    rows = doc_fields()
    for r in records:
        undocumented = set(r) - {"t", "seq"} - rows[r["t"]]
        assert not undocumented, f"{r['t']} record fields not in docs/PROTOCOL.md: {sorted(undocumented)}"


def test_readme_shows_the_two_commands_and_every_key() -> None:
    readme = (REPO / "README.md").read_text()
    top = readme[:600]
    assert "make run" in top and "make test" in top
    keys = re.findall(r'\[KEY_\w+\] = \{ "(\w+)"', (REPO / "lib" / "config.c").read_text())
    assert len(keys) >= 13
    missing = [k for k in keys if f"`{k}=`" not in readme]
    assert not missing, f"README's key table lacks {missing}"


def test_readme_example_record_is_genuine() -> None:
    import zlib
    readme = (REPO / "README.md").read_text()
    for m in re.finditer(r"@cr1 (\{.*\}) ~([0-9a-f]{8})", readme + DOC):
        assert f"{zlib.crc32(m.group(1).encode()):08x}" == m.group(2), m.group(0)
