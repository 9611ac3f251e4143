"""The workset's answers beside the paper (issue 49): the concurrency overhead's cache peak (from L1d size
up) beside Klimiankou's 352 %, the small sizes' plateau on a line of its own; and the decisions of
runs=auto's sequential rule (reports/decisions.py) in the summary, report.txt, report.html and derived.csv.
On recorded fixtures: hosted-workset-processes.log (10 processes, real caches L1d 32K .. L3 32M, its
small sizes' overhead larger than its cache peak) and hosted-workset.log (one process)."""

from __future__ import annotations

import copy
import csv
from pathlib import Path

from test_report_summary import unwrap

from cleanroom_host.records.results import ResultSet, load
from cleanroom_host.reports import frame as report
from cleanroom_host.reports import paper, workset
from cleanroom_host.machines.machine import Cache

FIXTURES = Path(__file__).resolve().parent / "fixtures"
PROCESSES = FIXTURES / "hosted-workset-processes.log"  # 10 processes
ONE_PROCESS = FIXTURES / "hosted-workset.log"


def summary(rs: ResultSet) -> list[str]:
    return unwrap(report.summary(rs))


def line(lines: list[str], start: str) -> int:
    return next(i for i, text in enumerate(lines) if text.lstrip().startswith(start))


def with_margin(rs: ResultSet, bp: int) -> ResultSet:
    """The same set with margin= (basis points) in its config record."""
    doc = copy.deepcopy(rs.doc)
    config = next(r for r in doc["records"] if r.get("t") == "config")
    config.setdefault("cfg", {})["margin"] = bp
    return ResultSet(rs.path, doc)


# --- the cache peak beside the paper, the plateau below it ------------------------------------------------

def test_the_line_beside_the_paper_is_the_cache_peak_and_the_plateau_its_own_line() -> None:
    lines = summary(load(PROCESSES))
    at = line(lines, "concurrency overhead, peak, 2 MiB pages:")
    # the largest overhead (71.5 % at 64B) is below L1d: not the answer to the paper's L2 peak
    assert "46.3 % (39.7..49.2) at 16M per buffer, both buffers = L3 size" in lines[at]
    assert lines[at + 1].strip() == ("below L1d, the switch outweighs the refill: 71.5 % (65.3..72.4) "
                                     "at 64B per buffer")
    paper_line = line(lines, "[paper: 352 % at 512K per buffer")
    assert paper_line > at and "64B" not in " ".join(lines[at:paper_line]).split("outweighs")[0]


def test_without_known_caches_the_peak_is_the_largest_at_any_size() -> None:
    rs = load(PROCESSES)
    doc = copy.deepcopy(rs.doc)
    for r in doc["records"]:
        if r.get("t") == "cpu":
            r.pop("caches", None)
    lines = summary(ResultSet(rs.path, doc))
    at = line(lines, "concurrency overhead, peak, 2 MiB pages:")
    assert "71.5 % (65.3..72.4) at 64B per buffer, no cache sizes reported" in lines[at]
    assert not any("outweighs the refill" in text for text in lines)


def test_the_working_set_names_the_cache_it_overflows() -> None:
    caches = [Cache("L1d", 48 * 1024), Cache("L2", 2 << 20), Cache("L3", 32 << 20)]
    assert paper.overflow_text(1536 * 1024, caches) == "both > L2 (2M)"
    assert paper.overflow_text(16 << 20, caches) == "both buffers = L3 size"
    assert paper.overflow_text(2 << 20, caches) == "= L2 size"
    assert paper.overflow_text(64 << 20, caches) == "both > L3 (32M)"


# --- decisions ----------------------------------------------------------------------------------------

def test_six_agreeing_processes_decide_and_the_summary_says_so() -> None:
    lines = summary(load(PROCESSES))
    rule = lines[line(lines, workset.DECIDED)]
    assert "negligible (+-1 %) or open, 95 % at every look" in rule
    peak = lines[line(lines, "concurrency overhead, peak, 2 MiB pages:")]
    assert "; 7/7 sizes decided (7 effect, 0 negligible)" in peak
    other = lines[line(lines, "concurrency overhead, peak, 4 KiB pages:")]
    assert "6/7 sizes decided (6 effect, 0 negligible; 1 open: 1 in ~2 more processes)" in other
    fig7 = lines[line(lines, "fig 7, single:")]
    assert "4/7 sizes decided (2 effect, 2 negligible; 3 open" in fig7
    # Figure 5's quantity is not decided: its count stays the fixed-sample one
    assert "sizes resolved" in lines[line(lines, "fig 5, on the concurrency overhead:")]


def test_the_margin_comes_from_the_config_record() -> None:
    wide = summary(with_margin(load(PROCESSES), 500))  # +-5 %: more of Figure 7's points are negligible
    assert "negligible (+-5 %) or open" in wide[line(wide, workset.DECIDED)]
    fig7 = wide[line(wide, "fig 7, single:")]
    assert "5/7 sizes decided (1 effect, 4 negligible; 2 open" in fig7  # at +-1 %: 4/7, 2 effect, 2 negligible


def test_one_process_decides_nothing_and_keeps_the_count_it_had() -> None:
    lines = summary(load(ONE_PROCESS))
    assert not any(workset.DECIDED in text for text in lines)
    assert "sizes resolved" in lines[line(lines, "concurrency overhead, peak, paging host:")]


def test_report_txt_html_and_derived_csv_carry_the_decisions(tmp_path: Path) -> None:
    rs = load(PROCESSES)
    report.write_outputs(rs, tmp_path, plots=False)
    txt = (tmp_path / "report.txt").read_text()
    head = next(t for t in txt.splitlines() if t.startswith("  size    reps    single"))
    assert head.split()[-1] == "decision"
    assert "decision: effect (excludes 0), negligible (inside +-1 % of the baseline) or open, 95 % at every look" in txt
    html = (tmp_path / "report.html").read_text()
    assert "7/7 sizes decided (7 effect, 0 negligible)" in html
    with (tmp_path / "derived.csv").open() as f:
        rows = list(csv.DictReader(f))
    decided = {(r["quantity"], r["paging"], r["size"]): r for r in rows}
    peak = decided[("conc_rel", "host/2m", str(16 << 20))]
    assert peak["decision"] == "effect" and 0 < float(peak["decision_lo"]) <= float(peak["value"]) <= float(
        peak["decision_hi"])
    assert decided[("conc_abs", "host/2m", str(16 << 20))]["decision"] == ""  # not a decided quantity
    kinds = {r["decision"] for r in rows if r["quantity"] in ("vm_rel_single", "vm_rel_multi")}
    assert kinds == {"effect", "negligible", "open"}
