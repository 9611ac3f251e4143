"""`cleanroom compare A B C ...` (issue 22): several machines' or emulators' result sets side by side,
a column per set, the ratio to a reference never across units, wide tables in column groups, the long
CSV files and the figures. On recorded fixtures (docs/data, tests/fixtures; the qemu-model run parsed
with its model.jsonl); no boots."""

from __future__ import annotations

import csv
import io
import json
import re
import struct
import sys
from collections import Counter
from pathlib import Path

import pytest

from booting import tool_proc

sys.path.insert(0, str(Path(__file__).resolve().parent / "fixtures"))

import synth_workset  # noqa: E402

from cleanroom_host import cli
from cleanroom_host.reports import compare, compareplots, comparesets
from cleanroom_host.records import text  # noqa: E402
from cleanroom_host.reports.comparesets import APART  # noqa: E402
from cleanroom_host.records.results import load  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "docs" / "data"
ICOUNT = DATA / "qemu-icount-quick.log"
TCG = DATA / "qemu-quick.log"
HOSTED = DATA / "hosted-quick.log"
MAKE_RUN = REPO / "tests" / "fixtures" / "qemu-icount-make-run.log"
MODEL_LOG = DATA / "qemu-model-prestonia" / "serial.log"


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The qemu-model run as `parse` leaves it: results.json with its model figures joined."""
    out = tmp_path_factory.mktemp("model")
    rc = cli.main(["parse", str(MODEL_LOG), "--out", str(out)], io.StringIO(), io.StringIO())
    assert rc == 0 and (out / "results.json").is_file()
    return out


def read_csv(path: Path) -> list[dict[str, str]]:
    with path.open() as f:
        return list(csv.DictReader(f))


def too_wide(lines: list[str]) -> list[str]:
    return [f"{len(line)}: {line}" for line in lines if len(line) > text.WIDTH]


def table_heads(lines: list[str], heading: str) -> list[list[str]]:
    """The column headers of a table (of each of its column groups), found by its heading's start."""
    start = next(i for i, line in enumerate(lines) if line.startswith(heading))
    end = next((i for i in range(start + 1, len(lines)) if lines[i] == ""), len(lines))
    return [lines[i - 1].split() for i in range(start + 1, end) if set(lines[i].strip()) <= {"-", " "}
            and lines[i].strip()]


def render(*paths: Path, ref: int = 0) -> tuple[list[comparesets.Side], list[compare.Match],
                                                 list[compare.DerivedMatch], list[str]]:
    sets = [load(p) for p in paths]
    sides = comparesets.sides_of(sets)
    matches, derived = compare.match_up(sets), compare.match_derived(sets)
    return sides, matches, derived, comparesets.render(sides, matches, derived, ref)


def cases_of(path: Path) -> Counter[tuple[str, str, str]]:
    """How often a set measured each case, (bench, case, its params): counted from its result records here,
    not by the tool's matching (compare.keyed)."""
    return Counter((r["bench"], r["case"], json.dumps(r["params"], sort_keys=True))
                   for r in load(path).records if r.get("t") == "result")


def shared_with(path: Path, ref: Path) -> int:
    """How many of path's cases ref measured too (a case measured twice by both: two)."""
    return sum((cases_of(path) & cases_of(ref)).values())


def test_set_ids() -> None:
    assert comparesets.set_ids(3) == ["A", "B", "C"]
    assert comparesets.set_ids(28)[25:] == ["Z", "AA", "AB"]


def test_three_sets_a_column_each_and_their_units(model_dir: Path, tmp_path: Path) -> None:
    """The issue's example: qemu-icount, hosted and qemu-model. The key names each set's CPU, platform
    and unit; the workset table has a column per set and says which counts in what; every case and
    derived value of every set is a row of the CSV files, under its set's id."""
    p = tool_proc("compare", str(ICOUNT), str(HOSTED), str(model_dir), "--out", str(tmp_path))
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert not too_wide(lines[:-1]), "\n".join(too_wide(lines))
    head = " ".join(" ".join(line.split()) for line in lines[:12])
    assert f"A = {ICOUNT} (instructions) QEMU Virtual CPU version 2.5+, qemu-icount; TSC counts instructions" in head
    assert f"B = {HOSTED} (TSC ticks) AMD EPYC, hosted; TSC 2.596 GHz (clock_monotonic_raw" in head
    assert "qemu-icount with the cache/TLB model (prestonia); TSC counts instructions" in head
    assert "in time:" not in head  # one TSC (B's): ticks as they are
    workset = next(i for i, line in enumerate(lines) if line.startswith("workset: "))
    counts = [sum(n for (bench, _case, _params), n in cases_of(path).items() if bench == "workset")
              for path in (ICOUNT, HOSTED, model_dir)]
    assert "A {}, B {}, C {}".format(*counts) in lines[workset]
    assert "A, C in instructions; B in TSC ticks" in " ".join(lines[workset:workset + 2])
    heads = [h for group in table_heads(lines, "workset: ") for h in group]
    assert {"A", "B", "C", "C/A"} <= set(heads) and "B/A" not in heads  # A and B share no case: no ratio
    # measured and modelled side by side, never subtracted
    rel = next(i for i, line in enumerate(lines) if re.match(r"workset, workset-model .* conc_rel, in %", line))
    assert "C from workset-model" in lines[rel + 1] and APART in lines[rel + 1] + lines[rel + 2]
    assert table_heads(lines, lines[rel])[0][:5] == ["paging", "size", "A", "B", "C"]

    rows = read_csv(tmp_path / "compare.csv")
    per_set = Counter(r["set"] for r in rows)
    for ident, path in zip("ABC", (ICOUNT, HOSTED, model_dir)):
        assert per_set[ident] == sum(r.get("t") == "result" for r in load(path).records)
    assert {r["machine"] for r in rows if r["set"] == "B"} == {"AMD EPYC (hosted)"}
    assert all(r["ref"] == "A" and r["ratio_ref"] == "" for r in rows if r["set"] in "AB")
    med_a = {(r["bench"], r["case"], r["params"]): float(r["med"]) for r in rows if r["set"] == "A"}
    divided = [r for r in rows if r["set"] == "C" and r["ratio_ref"]]
    assert len(divided) == shared_with(model_dir, ICOUNT) > 0  # the cases the model's run measured with A's reps
    assert all(float(r["ratio_ref"]) == pytest.approx(float(r["med"]) / med_a[r["bench"], r["case"], r["params"]],
                                                      rel=1e-3) for r in divided)
    derived = read_csv(tmp_path / "compare-derived.csv")
    for ident, path in zip("ABC", (ICOUNT, HOSTED, model_dir)):
        assert sum(r["set"] == ident for r in derived) == len(compare.derived_of(load(path)))
    assert p.stdout.splitlines()[-1] == f"wrote {tmp_path / 'compare.csv'} and {tmp_path / 'compare-derived.csv'}"


def test_ratios_never_across_units(tmp_path: Path) -> None:
    """Four sets: instructions (A, D), host time (B), a real TSC (C). Every case B or C shares with A is
    marked, never divided; D's are divided; the screen marks as many cells as the CSV files."""
    sides, matches, derived, lines = render(ICOUNT, TCG, HOSTED, MAKE_RUN)
    assert not too_wide(lines), "\n".join(too_wide(lines))
    comparesets.write_csv(matches, sides, 0, tmp_path / "compare.csv")
    comparesets.write_derived_csv(derived, sides, 0, tmp_path / "compare-derived.csv")
    rows = read_csv(tmp_path / "compare.csv")
    key = {(r["bench"], r["case"], r["params"]) for r in rows if r["set"] == "A"}
    shared = [r for r in rows if r["set"] in "BCD" and (r["bench"], r["case"], r["params"]) in key]
    b, d = [r for r in shared if r["set"] == "B"], [r for r in shared if r["set"] == "D"]
    assert len(b) == shared_with(TCG, ICOUNT) > 0
    assert all(r["ratio_ref"] == "" and r["verdict"] == compare.UNITS_DIFFER for r in b)
    assert len(d) == shared_with(MAKE_RUN, ICOUNT) > 0  # `make run`: fewer cases
    assert all(r["verdict"] != compare.UNITS_DIFFER for r in d)
    med_a = {(r["bench"], r["case"], r["params"]): float(r["med"]) for r in rows if r["set"] == "A"}
    assert all(float(r["ratio_ref"]) == pytest.approx(float(r["med"]) / med_a[r["bench"], r["case"], r["params"]],
                                                      rel=1e-3) for r in d if r["ratio_ref"])
    assert {r["unit"] for r in b} == {"TSC ticks (host time)"}
    marked = sum(r["verdict"] == compare.UNITS_DIFFER for r in rows)
    marked += sum(r["change"] == compare.UNITS_DIFFER for r in read_csv(tmp_path / "compare-derived.csv"))
    cells = sum(line.count(compare.UNITS_DIFFER) for line in lines if line.startswith("  ")
                and not line.lstrip().startswith(("the sets count", "(units differ)")))
    assert marked and cells == marked
    assert any(line.startswith("  the sets count in different units") for line in lines)


def test_ref_picks_the_reference(tmp_path: Path) -> None:
    """--ref B: every other set over B, headed A/B and C/B; the CSV's ref column says B."""
    for name, scale in (("a", 1.0), ("b", 2.0), ("c", 3.0)):
        (tmp_path / f"{name}.log").write_bytes(synth_workset.log(scale=scale))
    out = tmp_path / "cmp"
    p = tool_proc("compare", *(str(tmp_path / f"{n}.log") for n in "abc"), "--ref", "b", "--out", str(out))
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert lines[0].startswith("compare: 3 result sets; B is the reference")
    heads = {h for group in table_heads(lines, "workset: ") for h in group}
    assert {"A", "A/B", "B", "C", "C/B"} <= heads and "B/A" not in heads
    rows = read_csv(out / "compare.csv")
    assert {r["ref"] for r in rows} == {"B"} and all(r["ratio_ref"] == "" for r in rows if r["set"] == "B")
    big = [r for r in rows if r["bench"] == "workset" and float(r["med"]) > 3000 and r["set"] != "B"]
    assert big and all(float(r["ratio_ref"]) == pytest.approx(0.5 if r["set"] == "A" else 1.5, rel=1e-3)
                       for r in big)
    # two sets with --ref: the layout of several, the first set divided by the second
    p = tool_proc("compare", str(tmp_path / "a.log"), str(tmp_path / "b.log"), "--ref", "B",
             "--out", str(out))
    assert p.returncode == 0 and p.stdout.startswith("compare: 2 result sets; B is the reference")
    assert {r["ref"] for r in read_csv(out / "compare.csv")} == {"B"}


def test_four_sets_wrap_into_column_groups() -> None:
    """A table wider than 100 columns is split into parts of whole sets, each with the rows' names,
    and every set's column is in one of them."""
    _sides, _m, _d, lines = render(ICOUNT, TCG, HOSTED, MAKE_RUN)
    parts = [line for line in lines if re.match(r"  part \d of \d: ", line)]
    assert parts and not too_wide(lines)
    groups = table_heads(lines, "tsc: ")
    assert len(groups) >= 2 and all(g[:2] == ["case", "params"] for g in groups)
    assert {"A", "B", "B/A", "C", "D", "D/A"} <= {h for g in groups for h in g}
    assert "C/A" not in {h for g in groups for h in g}  # the hosted set shares no case with A


@pytest.mark.parametrize("paths", [(ICOUNT, TCG, HOSTED), (MAKE_RUN, ICOUNT, TCG, HOSTED, DATA / "hosted-ctxsw-peers.log"),
                                   (DATA / "qemu-icount-aspace.log", DATA / "qemu-aspace.log",
                                    DATA / "bochs-aspace-small.log")],
                         ids=lambda ps: "+".join(p.stem for p in ps))
def test_every_line_fits_the_width(paths: tuple[Path, ...]) -> None:
    *_rest, lines = render(*paths)
    assert len(lines) > 50 and not too_wide(lines), "\n".join(too_wide(lines)[:20])


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def test_the_figures(model_dir: Path, tmp_path: Path) -> None:
    """A sweep quantity against size with a line per set; in three units, three panels (never one axis);
    a benchmark's cases as bars. (A few of the figures: each takes matplotlib a while.)"""
    sets = [load(p) for p in (ICOUNT, HOSTED, model_dir)]
    sides = comparesets.sides_of(sets)
    derived = [m for m in compare.match_derived(sets) if m.sweep and m.sweep.quantity in ("conc_rel", "conc_abs")]
    matches = [m for m in compare.match_up(sets) if m.key[0] == "tsc"]
    written = compareplots.write_all(sides, matches, derived, tmp_path)
    names = {p.name for p in written}
    assert names == {"compare-sweep-fill-stos-switch-pushad-conc_rel.png",
                     "compare-sweep-fill-stos-switch-pushad-conc_abs.png", "compare-cases-tsc.png"}
    one = png_size(tmp_path / "compare-sweep-fill-stos-switch-pushad-conc_rel.png")[1]  # one unit: %
    three = png_size(tmp_path / "compare-sweep-fill-stos-switch-pushad-conc_abs.png")[1]
    assert three == pytest.approx(3 * one, rel=0.05)  # instructions, TSC ticks, modelled cycles: a panel each


def tsc_only(path: Path, out: Path) -> Path:
    """A set of only a run's tsc results (and what describes the machine): a compare with one figure."""
    rs = load(path)
    keep = [r for r in rs.records if r.get("t") != "result" or r.get("bench") == "tsc"]
    out.mkdir()
    (out / "results.json").write_text(json.dumps(dict(rs.doc, records=keep)))
    return out


def test_plots_on_the_command_line(tmp_path: Path) -> None:
    sets = [tsc_only(p, tmp_path / name) for p, name in ((ICOUNT, "icount"), (TCG, "tcg"), (MAKE_RUN, "run"))]
    p = tool_proc("compare", *map(str, sets), "--plots")
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines()[-1].endswith("and 1 figure (compare-*.png)")
    assert png_size(sets[-1] / "compare-cases-tsc.png")[0] > 500  # default --out: the last set's directory
    assert (sets[-1] / "compare.csv").is_file()


def test_clear_errors(tmp_path: Path) -> None:
    p = tool_proc("compare", str(ICOUNT))
    assert p.returncode == 5 and "the following arguments are required: B" in p.stderr
    p = tool_proc("compare", str(ICOUNT), str(TCG), str(tmp_path / "nope"))
    assert p.returncode == 5 and "cleanroom compare: set C: " in p.stderr and "nope" in p.stderr
    (tmp_path / "bad.json").write_text("{}")
    p = tool_proc("compare", str(ICOUNT), str(tmp_path / "bad.json"), str(TCG))
    assert p.returncode == 5 and "set B: " in p.stderr and "not a results.json" in p.stderr
    p = tool_proc("compare", str(ICOUNT), str(TCG), str(DATA / "." / ICOUNT.name))
    assert p.returncode == 5 and f"A and C are the same result set ({ICOUNT})" in p.stderr
    p = tool_proc("compare", str(ICOUNT), str(TCG), str(HOSTED), "--ref", "D")
    assert p.returncode == 5 and "--ref 'D': no such set; the sets are A, B, C" in p.stderr
