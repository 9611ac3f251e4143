"""The emulator table (tools/cleanroom_host/machines/emulators.py, EMULATORS): one row says all the tool knows
about an emulator, and every other module asks the row."""

from __future__ import annotations

import ast
import io
import json
from dataclasses import replace
from pathlib import Path

import pytest

from cleanroom_host import cli
from cleanroom_host.machines import emulators, estimate, machine
from cleanroom_host.records import kinds, results
from cleanroom_host.records.protocol import parse_log

PACKAGE = Path(__file__).resolve().parent.parent / "tools" / "cleanroom_host"
TABLE = "machines/emulators.py"


def slow_icount() -> emulators.Emulator:
    """A throwaway row: qemu-icount's builder, kind and unit under a new name, ten times slower."""
    base = emulators.get("qemu-icount")
    return replace(base, name="qemu-slow", help="qemu-icount on a slow host (a test's row)",
                   speed=emulators.slowed(base.speed, 10))


@pytest.fixture
def one_more_row(monkeypatch: pytest.MonkeyPatch) -> emulators.Emulator:
    """The documented way to add an emulator: one row appended to emulators.EMULATORS, nothing else."""
    row = slow_icount()
    monkeypatch.setattr(emulators, "EMULATORS", emulators.EMULATORS + (row,))
    return row


def test_a_new_row_is_an_emulator_everywhere(one_more_row: emulators.Emulator, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                             fixtures_dir: Path) -> None:
    name = one_more_row.name
    # cli: a choice, listed in `run --help` with its help line and what it shows
    assert cli.build_parser().parse_args(["run", "--emulator", name]).emulator == name
    with pytest.raises(SystemExit):
        cli.main(["run", "--help"])
    assert f"  {name:<12} qemu-icount on a slow host (a test's row) [TSC unit: instructions;" in capsys.readouterr().out
    # the estimate: its own speed, ten times qemu-icount's
    plan = estimate.plan("suite=quick")
    slow, icount = estimate.estimate(plan, name, 128), estimate.estimate(plan, "qemu-icount", 128)
    assert slow is not None and icount is not None
    assert slow.seconds == pytest.approx(10 * icount.seconds)
    # the report: results.json's run.emulator gives the row's kind and unit
    recs = parse_log((fixtures_dir / "qemu-quick.log").read_bytes()).records
    m = machine.Machine.of(recs, {"emulator": name})
    assert m.kind == kinds.QEMU_ICOUNT and m.units == one_more_row.tsc and m.emulated
    # a run: the row's builder makes qemu-icount's command line, results.json names the new emulator
    info = tmp_path / "info.json"
    monkeypatch.setenv("FAKE_LOG", str(fixtures_dir / "qemu-quick.log"))
    monkeypatch.setenv("FAKE_INFO", str(info))
    kernel = tmp_path / "cleanroom.elf"
    kernel.write_bytes(b"\x7fELF fake")
    out, err = io.StringIO(), io.StringIO()
    status = cli.main(["run", "--emulator", name, "--emulator-binary", str(fixtures_dir / "fake_emulator.py"),
                       "--kernel", str(kernel), "--cmdline", "suite=quick", "--out", str(tmp_path / "r"),
                       "--quiet"], out, err)
    assert status == results.EXIT_OK, err.getvalue()
    argv = json.loads(info.read_text())["argv"]
    assert argv[:4] == ["-kernel", emulators.KERNEL_LINK, "-append", "suite=quick exit=auto"]
    assert argv[-len(emulators.ICOUNT_ARGS):] == list(emulators.ICOUNT_ARGS)
    assert json.loads((tmp_path / "r" / "results.json").read_text())["run"]["emulator"] == name


def test_a_new_rows_speed_decides_the_refusal(one_more_row: emulators.Emulator, tmp_path: Path) -> None:
    """suite=paper at ten times qemu-icount's costs is refused without --yes before anything starts."""
    err = io.StringIO()
    status = cli.main(["run", "--emulator", one_more_row.name, "--cmdline", "suite=paper",
                       "--emulator-binary", "/nonexistent/emulator", "--out", str(tmp_path / "r")], io.StringIO(), err)
    assert status == results.EXIT_SETUP
    assert f"estimated duration under {one_more_row.name}" in err.getvalue() and "add --yes" in err.getvalue()
    assert not (tmp_path / "r").exists()


def test_unknown_emulator_names_the_accepted_ones(tmp_path: Path) -> None:
    spec = emulators.RunSpec(emulator="vmware", kernel=tmp_path / "k", iso=tmp_path / "i")
    with pytest.raises(emulators.SetupError, match="unknown emulator 'vmware'; choose one of qemu, qemu-icount, "
                                                   "kvm, iso, uefi, bochs, hosted, qemu-model"):
        emulators.prepare(spec, tmp_path)
    assert emulators.find("serial") is None and estimate.speed_of("vmware") is None


def test_rows_of_one_kind_agree() -> None:
    """machine.py takes a kind's unit and whether its caches are real from the first row of that kind."""
    rows = emulators.EMULATORS
    assert len({e.name for e in rows}) == len(rows)
    for e in rows:
        first = emulators.of_kind(e.kind)
        assert first is not None and first.tsc == e.tsc, e.name
        assert (first.caches == emulators.REAL) == (e.caches == emulators.REAL), e.name
        assert e.kind in machine.TRUST, e.name


# --- no emulator name outside the table -------------------------------------------

NAMES = frozenset(emulators.names())


def _name_literal(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value in NAMES


def emulator_literals(source: str) -> list[str]:
    """Where a module decides by an emulator's name instead of asking its row: a comparison with a
    name (==, !=, in, not in), a dict keyed by names, a tuple/list/set of two or more names."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            for side in sides:
                items = side.elts if isinstance(side, (ast.Tuple, ast.List, ast.Set)) else [side]
                if any(_name_literal(i) for i in items):
                    found.append(f"line {node.lineno}: {ast.unparse(node)}")
                    break
        elif isinstance(node, ast.Dict) and any(k is not None and _name_literal(k) for k in node.keys):
            found.append(f"line {node.lineno}: a dict keyed by emulator names")
        elif isinstance(node, (ast.Tuple, ast.List, ast.Set)) and sum(map(_name_literal, node.elts)) >= 2:
            found.append(f"line {node.lineno}: {ast.unparse(node)}")
    return found


def test_no_module_but_the_table_names_emulators() -> None:
    modules = sorted(PACKAGE.rglob("*.py"))  # every subpackage's
    assert (PACKAGE / TABLE) in modules and PACKAGE / "reports" / "frame.py" in modules
    offenders = {p.relative_to(PACKAGE).as_posix(): hits for p in modules if p != PACKAGE / TABLE
                 if (hits := emulator_literals(p.read_text()))}
    assert offenders == {}, "decide by the emulator's row (emulators.EMULATORS), not its name"


@pytest.mark.parametrize("planted", [
    'if args.emulator == "hosted":\n    pass\n',
    'long = emu in ("qemu", "qemu-icount")\n',
    'kind = {"bochs": 1}\n',
    'REFUSING = ("iso", "uefi")\n',
])
def test_the_name_check_finds_a_planted_name(planted: str) -> None:
    assert emulator_literals(planted)


def test_the_name_check_lets_other_strings_be() -> None:
    assert emulator_literals('who = "bochs" if kind == BOCHS else "qemu"\npath = root / "hosted"\n') == []
