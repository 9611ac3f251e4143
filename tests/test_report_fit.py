"""A report that fits the terminal and says what it means (issue 19, part 5): every summary line and
every `compare` line at most text.WIDTH columns; `compare` never divides two units; the skipped line
counts what it names, bookkeeping left out; one legend line for `~0`, `?` and "noise alone"; an
emulator's host time is no answer; square brackets hold only the papers' numbers. On the recorded
fixtures (docs/data, tests/fixtures; qemu-icount-make-run.log is `make run`'s kernel half)."""

from __future__ import annotations

import copy
import csv
import functools
import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from booting import TOOL_SAFETY_NET_S, tool_proc
from test_report_summary import unwrap

from cleanroom_host.reports import answers, compare, frame as report
from cleanroom_host.stats import ranks
from cleanroom_host.records import text  # noqa: E402
from cleanroom_host.stats.interval import NOISE_ALONE, SUMMARY_LEGEND  # noqa: E402
from cleanroom_host.machines.machine import EMULATOR_TIME  # noqa: E402
from cleanroom_host.records.protocol import parse_log  # noqa: E402
from cleanroom_host.records.results import ResultSet, load  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "docs" / "data"
FIXTURES = REPO / "tests" / "fixtures"
LOGS = sorted(FIXTURES.glob("*.log")) + sorted(DATA.glob("*.log")) + sorted(DATA.glob("*/*.log"))
MAKE_RUN = FIXTURES / "qemu-icount-make-run.log"  # `make run`'s kernel half: the issue's 29-line summary
QUICK_TCG = FIXTURES / "qemu-quick-suite.log"  # `run --emulator qemu`, the whole quick suite: 63 lines (issue 29)
ICOUNT = DATA / "qemu-icount-quick.log"
TCG = DATA / "qemu-quick.log"
# Two real result sets each (the issue's `compare A B`: instructions against host time among them)
PAIRS = [(ICOUNT, TCG), (MAKE_RUN, TCG), (DATA / "qemu-icount-aspace.log", DATA / "qemu-aspace.log"),
         (DATA / "hosted-quick.log", DATA / "hosted-ctxsw-peers.log"), (TCG, DATA / "hosted-quick.log")]


def ids(p: Any) -> str:
    return f"{p.parent.name}/{p.name}" if isinstance(p, Path) else str(p)


def summary(log: Path) -> list[str]:
    """A recorded log's summary lines (a copy each call)."""
    return list(_summary(log))


@functools.cache
def _summary(log: Path) -> tuple[str, ...]:
    """Made once a session for each log: five tests below read every log's (a third of this file's CPU)."""
    return tuple(report.summary(load(log)))


def too_wide(lines: list[str]) -> list[str]:
    return [f"{len(line)}: {line}" for line in lines if len(line) > text.WIDTH]


def result_set(records: list[dict[str, Any]]) -> ResultSet:
    return ResultSet(Path("synthetic.log"), {"records": records, "complete": True})


def results_of(log: Path, bench: str, case: str, **params: Any) -> list[dict[str, Any]]:
    """A recorded run's result records of one case whose params include these."""
    return [r for r in parse_log(log.read_bytes()).records if r.get("t") == "result" and r["bench"] == bench
            and r["case"] == case and all(r["params"].get(k) == v for k, v in params.items())]


def cases_of(log: Path) -> Counter[tuple[str, str, str]]:
    """How often a recorded run measured each case (bench, case, its params), counted here from its records."""
    return Counter((r["bench"], r["case"], json.dumps(r["params"], sort_keys=True))
                   for r in parse_log(log.read_bytes()).records if r.get("t") == "result")


def median_band(rec: dict[str, Any]) -> str:
    """A record's median and its interval as the summary prints an integer one: the order statistics of its
    samples (the library's rank interval), or min..max where it kept none."""
    if rec.get("samples"):
        iv = ranks.median_interval(rec["samples"])
        lo, hi = iv.lo, iv.hi
    else:
        lo, hi = rec["min"], rec["max"]
    assert all(float(v).is_integer() for v in (rec["med"], lo, hi)) and lo < hi, rec
    return f"{rec['med']} ({int(lo)}..{int(hi)})"


# --- 100 columns ----------------------------------------------------------------------

@pytest.mark.parametrize("log", LOGS, ids=ids)
def test_every_summary_line_fits_the_width(log: Path) -> None:
    lines = summary(log)
    assert not too_wide(lines), "\n".join(too_wide(lines))
    assert len(lines) <= report.summary_budget(load(log)), "\n".join(lines)


def test_the_make_run_summary_loses_nothing_to_the_width() -> None:
    """The timing line the issue measured at 268 columns is wrapped, not cut: every word is still there
    (the sources' figures are in report.txt's platform row)."""
    rs = load(MAKE_RUN)
    lines = unwrap(report.summary(rs))
    timing = next(line for line in lines if line.startswith("  timing: "))
    assert len(timing) > text.WIDTH and "TSC from hpet, confirmed within 0.5 %" in timing
    assert "hpet 1.0000 GHz (chosen)" in report.full_report(rs)


@pytest.mark.parametrize("a, b", PAIRS, ids=ids)
def test_every_compare_line_fits_the_width(a: Path, b: Path) -> None:
    ra, rb = load(a), load(b)
    lines = compare.render(ra, rb, compare.pair_up(ra, rb), compare.pair_derived(ra, rb))
    assert len(lines) > 100 and not too_wide(lines), "\n".join(too_wide(lines)[:20])


def test_compare_on_the_command_line_fits_the_width(cleanroom_tool: Path, tmp_path: Path) -> None:
    p = subprocess.run([sys.executable, str(cleanroom_tool), "compare", str(ICOUNT), str(TCG), "--out",
                        str(tmp_path)], capture_output=True, text=True, timeout=TOOL_SAFETY_NET_S,
                       stdin=subprocess.DEVNULL)
    lines = p.stdout.splitlines()
    assert p.returncode == 0 and not too_wide(lines[:-1]), "\n".join(too_wide(lines))  # the last: the paths


def test_wrap_breaks_at_the_separators_and_keeps_every_word() -> None:
    line = ("  switch cost, TSC ticks per switch, paging off, symmetric / asymmetric: pushad 53 (53..58) / 60, "
            "callee 41 (39..41) / 50, fxsave 973 (971..1003) / 990; round robin n=2: 60 (57..60), n=64: 62"
            "  [paper: the pushad routine of section 3.3 (6 instructions and the call); no cost stated]")
    lines = text.wrap(line, 60)
    assert not too_wide(lines) and all(len(x) <= 60 for x in lines)
    assert " ".join(x.strip() for x in lines).split() == line.split()
    assert all(x.startswith("      ") for x in lines[1:])  # indented CONTINUED further than the line
    assert any(x.strip().startswith("[paper:") for x in lines)  # the paper's numbers begin a line
    assert not any(re.search(r"\d$", x) and lines[i + 1].strip().startswith("(")
                   for i, x in enumerate(lines[:-1]))  # a value is never parted from its band
    assert text.wrap("x" * 250, 100) == ["x" * 100, "    " + "x" * 96, "    " + "x" * 54]  # cut, never lost


def test_a_table_wider_than_asked_wraps_its_text() -> None:
    rows = [["fibers_vs_threads on/4k switch, own address spaces thread/fiber", "3.08", "52.18 (50.95..53.00)"]]
    lines = text.table(["quantity", "A", "B"], rows, numeric={1, 2}, width=60)
    assert all(len(x) <= 60 for x in lines) and len(lines) > 3
    first = " ".join(re.split(r"\s{2,}", x.strip())[0] for x in lines[2:])
    assert first == "fibers_vs_threads on/4k 3.08 switch, own address spaces thread/fiber".replace(" 3.08", "")
    assert lines[2].endswith("3.08  52.18 (50.95..53.00)")  # numbers on the row's first line, whole


# --- units differ --------------------------------------------------------------------

def test_compare_never_divides_instructions_by_ticks(tmp_path: Path) -> None:
    """The issue: `compare`'s per-case table divided a qemu-icount run's instructions by a TCG run's TSC
    ticks (ctxsw pushad 4.706). Every such case is marked, on screen and in compare.csv."""
    a, b = load(ICOUNT), load(TCG)
    pairs = compare.pair_up(a, b)
    lines = compare.render(a, b, pairs, None)
    marked = [line for line in lines if line.endswith(compare.UNITS_DIFFER)]  # a row's first line: its numbers
    both = sum((cases_of(ICOUNT) & cases_of(TCG)).values())
    assert len(marked) == sum(p.where == "both" for p in pairs) == both > 0, "\n".join(lines[:40])
    pushad = next(line for line in marked if re.search(r"\bpushad\s+switch=pushad reps=10000 paging=off", line))
    meds = [str(r["med"]) for log in (ICOUNT, TCG)
            for r in results_of(log, "ctxsw", "pushad", switch="pushad", reps=10000, paging="off")]
    assert pushad.split()[-4:] == [*meds, "units", "differ"] and len(meds) == 2  # the medians, no ratio of them
    assert any("the runs count in different units" in line for line in lines)
    compare.write_csv(pairs, tmp_path / "compare.csv", compare.side_units(a, b))
    with (tmp_path / "compare.csv").open() as f:
        both = [r for r in csv.DictReader(f) if r["in"] == "both"]
    assert both and all(r["ratio_b_a"] == "" and r["verdict"] == compare.UNITS_DIFFER for r in both)
    assert all(r["unit"] == "A instructions / B TSC ticks (host time)" for r in both)


def test_compare_divides_what_is_in_one_unit() -> None:
    """Two icount runs count instructions both: every ratio is there, none is marked."""
    a, b = load(ICOUNT), load(MAKE_RUN)
    lines = compare.render(a, b, compare.pair_up(a, b), compare.pair_derived(a, b))
    assert not any(compare.UNITS_DIFFER in line for line in lines if not line.startswith("legend:"))
    rdtsc = next(line for line in lines if re.match(r"  .*\brdtsc\s.*paging=off\s", line))
    [med_a], [med_b] = ([r["med"] for r in results_of(log, "tsc", "rdtsc", paging="off")] for log in (ICOUNT, MAKE_RUN))
    assert rdtsc.split()[-3:] == [str(med_a), str(med_b), f"{med_b / med_a:.3f}"]


# --- the skipped line ------------------------------------------------------------------

def skipped_line(lines: list[str]) -> str | None:
    return next((line for line in unwrap(lines) if line.startswith("skipped: ")), None)


def named(line: str) -> tuple[int, list[str]]:
    """"skipped: 2 (a, b: why; c: why)" -> (2, [a, b, c])."""
    m = re.fullmatch(r"skipped: (\d+) \((.*)\)", line)
    assert m, line
    names = [n for part in m.group(2).split("; ") for n in part.split(": ")[0].split(", ")]
    return int(m.group(1)), names


def test_skipped_counts_what_it_names_and_leaves_out_bookkeeping() -> None:
    """`make run`'s kernel: rdtscp skipped in both paging passes and aspace's paging-off pass, whose
    answers the summary gives: "skipped: 3 (rdtscp, aspace)" was three for two names, one of them no
    skip at all."""
    lines = summary(MAKE_RUN)
    line = skipped_line(lines)
    assert line is not None
    count, names = named(line)
    assert (count, names) == (1, ["rdtscp"]) and "the CPU lacks rdtscp" in line
    assert any("aspace, thread / fiber" in x for x in lines)  # the aspace answers are there


def test_hosted_paging_pass_skips_are_bookkeeping() -> None:
    """A hosted build skips each benchmark's paging pass and measures it in the host pass."""
    lines = summary(DATA / "hosted-quick.log")
    assert skipped_line(lines) is None
    assert any("locks, TSC ticks per lock+unlock" in x for x in lines)


def test_a_benchmark_skipped_outright_is_still_named() -> None:
    """Without the aspace results the same skip record is a real skip: no pass measured it."""
    recs = [r for r in parse_log(MAKE_RUN.read_bytes()).records
            if not (r.get("t") == "result" and r.get("bench") == "aspace")]
    line = skipped_line(report.summary(result_set(recs)))
    assert line is not None
    count, names = named(line)
    assert count == len(names) == 2 and set(names) == {"rdtscp", "aspace"}
    assert "aspace: needs paging: measured in the paging=on pass" in line


# --- the legend ---------------------------------------------------------------------

VERDICT_WORDS = re.compile(r"~[01]\b|\d\?|" + NOISE_ALONE)


@pytest.mark.parametrize("log", LOGS, ids=ids)
def test_one_legend_line_explains_the_verdict_words(log: Path) -> None:
    lines = summary(log)
    legends = [line for line in lines if line.strip().startswith("legend:")]
    if not any(VERDICT_WORDS.search(line) for line in lines if not line.strip().startswith("legend:")):
        return
    assert legends == [f"  {SUMMARY_LEGEND}"], "\n".join(lines)


def test_the_legend_says_what_each_word_means() -> None:
    assert len(SUMMARY_LEGEND) + 2 <= text.WIDTH
    for word in ("~0", "~1", "?", f"{NOISE_ALONE}: "):
        assert word in SUMMARY_LEGEND
    assert any(NOISE_ALONE in line for line in summary(TCG))  # the words, with the legend above them
    assert len(compare.LEGEND) <= text.WIDTH and compare.UNITS_DIFFER in compare.LEGEND


# --- an emulator's host time ----------------------------------------------------------

@pytest.mark.parametrize("log", [TCG, DATA / "qemu-aspace.log", FIXTURES / "qemu-quick-workset.log"], ids=ids)
def test_host_time_emulator_gives_no_answers(log: Path) -> None:
    """Under plain TCG the TSC follows the host's clock: "switch, own address spaces 69.02" is QEMU's own
    cost of a CR3 load, "lock spin max/min 1.072" QEMU's too. The values are shown under a heading that
    says so, never as answers."""
    lines = unwrap(summary(log))
    head = next(i for i, line in enumerate(lines) if line.startswith(("answers", "no answers")))
    assert lines[head].startswith(f"no answers: {EMULATOR_TIME}")
    assert not any(line.startswith("answers") for line in lines)
    values = [i for i, line in enumerate(lines) if re.search(r"thread / fiber|max/min|switch cost", line)]
    assert values and min(values) > head


def test_a_plain_qemu_quick_report_fits_the_budget(tmp_path: Path) -> None:
    """Issue 29: `report` of a plain-QEMU quick run (tsc, ctxsw, workset, locks, create, aspace) printed 63
    lines. Its figures answer nothing, so the summary sets no paper's numbers beside them and names no runs
    that would resolve more: what `report` prints fits the budget, the line naming report.txt included,
    and every benchmark still has its values."""
    p = tool_proc("report", str(QUICK_TCG), "--out", str(tmp_path), "--no-plots")
    assert p.returncode == 0, p.stderr
    assert len(p.stdout.splitlines()) <= report.SUMMARY_BUDGET, p.stdout
    lines = unwrap(p.stdout.splitlines())
    head = next(line for line in lines if line.startswith(("answers", "no answers")))
    assert head.startswith(f"no answers: {EMULATOR_TIME}; ") and "square brackets" not in head
    for what in ("switch cost", "the switch alone", "concurrency overhead, peak", "fig 7, single", "locks, ",
                 "valchanov", "create: ", "aspace, thread / fiber", "commit mode"):
        assert any(line.lstrip().startswith(what) for line in lines), what
    assert not any("[" in line for line in lines), p.stdout
    assert not any("would resolve" in line for line in lines)


def test_answers_keep_the_papers_numbers_and_the_runs_that_would_resolve_more() -> None:
    """What a run with no answers leaves out stays where the figures are a CPU's."""
    text_ = "\n".join(unwrap(summary(FIXTURES / "hosted-workset-outlier.log")))
    assert "answers; " in text_ and "in square brackets the papers' numbers:" in text_
    assert "would resolve them, the data suggest" in text_ and "[paper: 352 % at 512K per buffer" in text_


@pytest.mark.parametrize("log", [ICOUNT, MAKE_RUN, DATA / "bochs-quick-256k.log", DATA / "hosted-quick.log"],
                         ids=ids)
def test_instructions_and_real_time_are_answers(log: Path) -> None:
    lines = summary(log)
    assert any(line.startswith("answers; ") for line in lines)
    assert not any(EMULATOR_TIME in line for line in unwrap(lines))


def test_compare_says_which_side_is_an_emulators_host_time() -> None:
    a, b = load(ICOUNT), load(TCG)
    lines = compare.render(a, b, [], None)
    head = " ".join(line.strip() for line in lines[:lines.index("") if "" in lines else None]
                    if not line.startswith("legend:"))
    assert f"A = {ICOUNT} (instructions) QEMU Virtual CPU version 2.5+, qemu-icount; TSC counts instructions" in head
    assert f"B = {TCG} (TSC ticks (host time): {EMULATOR_TIME}) QEMU Virtual CPU version 2.5+, qemu-tcg; TSC" in head


# --- square brackets -------------------------------------------------------------------

@pytest.mark.parametrize("log", LOGS, ids=ids)
def test_square_brackets_hold_only_the_papers_numbers(log: Path) -> None:
    """The hosted summary set this run's own Boost.Context figure in brackets; they are the papers'."""
    text_ = "\n".join(unwrap(summary(log)))
    for m in re.finditer(r"\[([^\]:]*):", text_):
        assert set(m.group(1).split(", ")) <= set(answers.SOURCES), m.group(0)
    assert text_.count("[") == len(re.findall(r"\[([^\]:]*):", text_))


def test_boost_contexts_own_figure_stays_with_its_line() -> None:
    log = DATA / "hosted-ctxsw-peers.log"
    line = next(line for line in unwrap(summary(log)) if "per switch over Boost.Context's" in line)
    boost = {r["params"]["shape"]: median_band(r) for r in results_of(log, "peers", "switch_boost", bits=64)}
    assert f"(symmetric / asymmetric), itself {boost['symmetric']} / {boost['asymmetric']} TSC ticks at 64-bit: " \
        in line, line
    assert "[" not in line


def test_quoted_refuses_a_source_that_is_no_paper() -> None:
    assert str(answers.Quote("LiteThreads", "the pool is constant-time")) == "[LiteThreads: the pool is constant-time]"
    assert str(answers.Quote("Dthreads, Sheriff", ">8x, ~10x")) == "[Dthreads, Sheriff: >8x, ~10x]"
    with pytest.raises(ValueError, match="Boost.Context"):
        answers.Quote("Boost.Context", "15 TSC ticks")
    with pytest.raises(ValueError, match="no paper"):
        answers.Quote("Dthreads, no paper", "states it")


def test_a_papers_numbers_are_given_once() -> None:
    """Two increment variants quote Liu 2014 alike: the second line goes without the repeat."""
    text_ = "\n".join(summary(FIXTURES / "hosted-smp.log"))
    assert text_.count("[Liu 2014: ") == 1 and text_.count("[Predator: ") == 1
    assert len(re.findall(r"^  false sharing, \w+ increments", text_, re.M)) == 2
    seven, lite = answers.Quote("paper", "7 %"), answers.Quote("LiteThreads", "7 %")
    given = [answers.Answer("a", "1", paper=seven), *answers.beside([answers.Answer("b", "2")], seven),
             answers.Answer("c", "3", paper=lite)]
    assert answers.lines(answers.quoted_once(given, set())) == ["a: 1  [paper: 7 %]", "b: 2",
                                                                "c: 3  [LiteThreads: 7 %]"]


def test_identical_paging_modes_are_given_once() -> None:
    """Under icount paging off and on measure the same: the summary says it once, naming both."""
    lines = unwrap(summary(MAKE_RUN))
    switch = [line for line in lines if line.startswith("  switch cost")]
    assert len(switch) == 1 and "paging off and on/4k" in switch[0]
    recs = copy.deepcopy(parse_log(MAKE_RUN.read_bytes()).records)
    for r in recs:
        if r.get("t") == "result" and r.get("bench") == "ctxsw" and r["params"].get("paging") == "on":
            r.update(med=r["med"] + 5, min=r["min"] + 5, max=r["max"] + 5)
    switch = [line for line in unwrap(report.summary(result_set(recs))) if line.startswith("  switch cost")]
    assert len(switch) == 2 and "paging off," in switch[0] and "paging on/4k," in switch[1]
