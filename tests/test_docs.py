"""The docs must match the code. docs/PROTOCOL.md: every wire constant of lib/wire.h, and every
field of every record a real boot emits. README.md: the two commands first, a front door's size,
valid links. docs/USAGE.md (the reference README points to): every command-line key of lib/config.c,
every make target and tool command it names, a genuine example record."""

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


README = (REPO / "README.md").read_text()
USAGE = (REPO / "docs" / "USAGE.md").read_text()


def prose_lines(text: str) -> list[str]:
    """A markdown file's lines outside code (fenced, or indented four columns after a blank line)."""
    out, fenced, code = [], False, False
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
            continue
        code = bool(line.startswith("    ")) and (code or not out or not out[-1].strip())
        if not fenced and not code:
            out.append(line)
    return out


def test_readme_shows_the_two_commands_first() -> None:
    top = "\n".join(README.splitlines()[:30])
    assert "make run" in README[:600] and "make test" in README[:600]
    assert "    make run " in top and "    make test " in top


def test_readme_is_a_front_door() -> None:
    """README is a screen or two (docs/ holds the reference): at most 200 lines, none over 200
    characters outside code, and one dated timing a command (the history is in docs/RESULTS.md)."""
    lines = README.splitlines()
    assert len(lines) <= 200
    long = [line[:60] for line in prose_lines(README) if len(line) > 200]
    assert not long, f"README lines over 200 characters: {long}"
    dates = re.findall(r"\b20\d\d-\d\d-\d\d\b", README)
    assert len(dates) <= 2, f"README dates more than one timing a command: {dates}"
    assert "how-long-make-run-and-make-test-took" in README
    assert "## How long make run and make test took" in (REPO / "docs" / "RESULTS.md").read_text()


def test_usage_key_table_lists_every_key() -> None:
    keys = re.findall(r'\[KEY_\w+\] = \{ "(\w+)"', (REPO / "lib" / "config.c").read_text())
    assert len(keys) >= 13
    rows = {m.group(1) for m in re.finditer(r"^\| `(\w+)=` \|", USAGE, re.M)}
    missing = [k for k in keys if k not in rows]
    assert not missing, f"docs/USAGE.md's key table lacks {missing}"


def test_documented_commands_exist() -> None:
    """Every `make TARGET` and `tools/cleanroom COMMAND` that README and docs/USAGE.md name is one
    the Makefile and the tool have, and USAGE's command table has a row for every command."""
    from cleanroom_host.cli import COMMANDS
    makefile = (REPO / "Makefile").read_text()
    targets = set(re.findall(r"^([a-z][\w-]*):", makefile, re.M))
    for name, text in (("README.md", README), ("docs/USAGE.md", USAGE)):
        named = set(re.findall(r"`make ([a-z][\w-]*)", text)) | set(re.findall(r"^ {4}make ([a-z][\w-]*)", text, re.M))
        assert named, name
        assert named <= targets, f"{name} names make targets the Makefile lacks: {sorted(named - targets)}"
        commands = set(re.findall(r"tools/cleanroom ([a-z][\w-]*)", text))
        assert commands <= set(COMMANDS), f"{name} names commands the tool lacks: {sorted(commands - set(COMMANDS))}"
    rows = {m.group(1) for m in re.finditer(r"^\| `([a-z][\w-]*)` \| ", USAGE, re.M)}
    assert set(COMMANDS) <= rows, f"docs/USAGE.md's command table lacks {sorted(set(COMMANDS) - rows)}"


def anchors(text: str) -> set[str]:
    """The anchors GitHub gives a markdown file's headings."""
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-")
            for h in re.findall(r"^#+ (.*)$", text, re.M)}


def test_links_resolve() -> None:
    """Every relative link of README and docs/*.md names a file that exists, and a heading there."""
    broken = []
    for md in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]:
        for target in re.findall(r"\]\(([^)\s]+)\)", "\n".join(prose_lines(md.read_text()))):
            if re.match(r"[a-z]+:", target):
                continue
            path, _, fragment = target.partition("#")
            dest = (md.parent / path).resolve() if path else md
            if not dest.exists():
                broken.append(f"{md.relative_to(REPO)}: {target}")
            elif fragment and dest.suffix == ".md" and fragment not in anchors(dest.read_text()):
                broken.append(f"{md.relative_to(REPO)}: {target} (no such heading)")
    assert not broken, broken


def test_example_records_are_genuine() -> None:
    import zlib
    found = list(re.finditer(r"@cr1 (\{.*\}) ~([0-9a-f]{8})", README + USAGE + DOC))
    assert any(m.group(0) in USAGE for m in found), "docs/USAGE.md shows no record"
    for m in found:
        assert f"{zlib.crc32(m.group(1).encode()):08x}" == m.group(2), m.group(0)


LAYOUT = (REPO / "docs" / "LAYOUT.md").read_text()
CHECKLISTS = ("## Adding a benchmark\n", "## Adding a benchmark's report\n")


def checklist(heading: str) -> list[str]:
    """The numbered items of one of docs/LAYOUT.md's checklists, each as one line."""
    section = LAYOUT.split(heading, 1)[1].split("\n## ", 1)[0]
    items = re.split(r"\n(?=\d+\. )", "\n" + section.split("\n1. ", 1)[1] if "\n1. " in section else "")
    return [" ".join(item.split()) for item in items if item.strip()]


def named_tests(item: str) -> list[tuple[str, str | None]]:
    """(file, function or None) of each test an item names: tests/test_x.py, tests/test_x.py::test_y, and
    ::test_z after it (of the file named last)."""
    out: list[tuple[str, str | None]] = []
    for m in re.finditer(r"(tests/test_\w+\.py)?::(test_\w+)|(tests/test_\w+\.py)", item):
        path = m.group(1) or m.group(3) or (out[-1][0] if out else "")
        out.append((path, m.group(2)))
    return out


@pytest.mark.parametrize("heading", CHECKLISTS, ids=["bench", "report"])
def test_each_layout_checklist_item_names_tests_that_exist(heading: str) -> None:
    """docs/LAYOUT.md's checklists for adding a benchmark and a report module are what the tests enforce:
    every item names a test file or function, and every one it names exists."""
    items = checklist(heading)
    assert len(items) >= 4, heading
    for item in items:
        tests = named_tests(item)
        assert tests, f"{heading.strip()}: an item names no test: {item[:80]}"
        for path, function in tests:
            assert path and (REPO / path).is_file(), f"{item[:60]}: no {path}"
            if function is not None:
                assert re.search(rf"^def {function}\(", (REPO / path).read_text(), re.M), f"no {path}::{function}"
