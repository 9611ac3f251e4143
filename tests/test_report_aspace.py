"""`cleanroom report` with `aspace` results: the fibers-vs-threads, workset,
TLB, faults, commit and lock-model tables, aspace.csv, the four figures and
the thread_fault section, from synthetic logs (tests/fixtures/synth_aspace.py)
and from a real QEMU -icount run (tests/fixtures/qemu-icount-aspace.log).
Expected values are worked out here from the records' medians."""

from __future__ import annotations

import csv
import sys
from pathlib import Path
from typing import Any

import pytest

from booting import tool_proc

sys.path.insert(0, str(Path(__file__).resolve().parent / "fixtures"))

import synth_aspace  # noqa: E402
import synth_workset  # noqa: E402
from test_report_locks import block, cells, png_ok  # noqa: E402

from cleanroom_host.reports import aspace as aspacereport, frame as report  # noqa: E402
from cleanroom_host.reports.context import Run  # noqa: E402
from cleanroom_host.records.protocol import RECORD_TYPES, parse_log  # noqa: E402
from cleanroom_host.records.results import EXIT_OK, ResultSet, exit_status, to_json_doc  # noqa: E402

PLOTS = ["aspace-tlb-refill.png", "aspace-commit.png", "aspace-fibers-vs-threads.png", "aspace-workset.png"]
PAIRS_HEAD = "aspace: fibers vs isolated threads"
REAL_LOG = Path(__file__).resolve().parent / "fixtures" / "qemu-icount-aspace.log"
NOTES = ("one CPU", "no PGE", "no mutex_fiber_contended")


def body(text: str, head: str) -> dict[str, list[str]]:
    """The rows of a table by their first cell (test and params joined for the case tables)."""
    out = {}
    for c in map(cells, block(text, head)[3:]):
        if c[0].startswith(NOTES):
            continue
        out[c[0]] = c
    return out


def med(recs: list[dict[str, Any]], case: str, bench: str = "aspace", mode: str = "4k",
        **params: Any) -> int:
    hits = [r["med"] for r in recs if r.get("t") == "result" and r["bench"] == bench and r["case"] == case
            and r["params"]["pagesize"] == mode and all(r["params"].get(k) == v for k, v in params.items())]
    assert len(hits) == 1, (case, params, hits)
    return hits[0]


def render(recs: list[dict[str, Any]]) -> str:
    return report.render(ResultSet(Path("synthetic"), {"records": recs}))


@pytest.fixture(scope="module")
def full(tmp_path_factory: pytest.TempPathFactory):
    """The tool's report of a whole synthetic run (PGE, sysenter, one paging mode, two thread faults)."""
    out = tmp_path_factory.mktemp("aspace")
    (out / "serial.log").write_bytes(synth_aspace.log(thread_faults=2))
    proc = tool_proc("report", str(out / "serial.log"), "--out", str(out), "--full", "--no-plots")
    assert proc.returncode == 0, proc.stderr
    return proc.stdout, out, synth_aspace.records(thread_faults=2)


def test_fibers_vs_threads_ratios(full) -> None:
    text, _out, recs = full
    lines = block(text, PAIRS_HEAD)
    assert cells(lines[1]) == ["comparison", "fiber side", "TSC ticks on/4k", "thread side", "TSC ticks on/4k",
                               "thread/fiber on/4k"]
    rows = body(text, PAIRS_HEAD)
    fiber = med(recs, "switch_fiber")
    expect = {
        "switch, own address spaces": (fiber, med(recs, "switch_thread", pge="on", entry="sysenter")),
        "switch, own address spaces, PGE off": (fiber, med(recs, "switch_thread", pge="off", entry="sysenter")),
        "switch, one address space": (fiber, med(recs, "switch_thread_samecr3", pge="on", entry="sysenter")),
        "create+exit+join": (med(recs, "create_fiber"), med(recs, "create_thread", entry="sysenter")),
        "mutex, uncontended": (med(recs, "mutex_fiber"), med(recs, "mutex_thread_uncontended")),
        "mutex, contended": (med(recs, "mutex_fiber_contended"),
                             med(recs, "mutex_thread_contended", entry="sysenter")),
        "malloc+free: shared lock / subheap": (med(recs, "malloc_subheap"), med(recs, "malloc_shared_lock")),
        "system call: int80 / sysenter": (med(recs, "syscall_sysenter"), med(recs, "syscall_int80")),
    }
    assert list(rows) == list(expect)
    for what, (a, b) in expect.items():
        row = rows[what]
        assert row[2] == f"{a} ({a - 2}..{a + 2})" and row[4] == f"{b} ({b - 2}..{b + 2})", row
        # the ratio carries the band of both sides: (b - 2) / (a + 2) .. (b + 2) / (a - 2), and "?" when
        # that band is wider than the ratio's distance from 1 (not resolved)
        lo, hi = (b - 2) / (a + 2), (b + 2) / (a - 2)
        mark = "?" if hi - lo > abs(b / a - 1) else ""
        assert row[5] == f"{b / a:.2f}{mark} ({lo:.2f}..{hi:.2f})", row
    assert rows["switch, own address spaces"][3] == "switch_thread pge=on entry=sysenter"
    assert rows["malloc+free: shared lock / subheap"][1] == "malloc_subheap size=64"
    assert rows["mutex, contended"][1] == "mutex_fiber_contended threads=2"
    assert rows["mutex, contended"][3] == "mutex_thread_contended threads=2 entry=sysenter"
    assert rows["create+exit+join"][3] == "create_thread entry=sysenter stack_pages=4"
    assert not any(line.startswith(NOTES[1:]) for line in text.splitlines())


def test_workset_table(full) -> None:
    text, _out, recs = full
    head = "workset: fibers vs isolated threads, paging on/4k, fill=stos entry=sysenter"
    rows = body(text, head)
    assert "(switch=pushad)" in block(text, head)[0]
    assert list(rows) == ["0", "1K", "4K", "64K", "1M"]
    for size, label in zip(synth_aspace.SIZES, rows):
        single = med(recs, "single", "workset", size=size)
        multi = med(recs, "multi", "workset", size=size)
        threads = med(recs, "workset_threads", size=size)
        reps = 10
        got = rows[label][1:]
        assert got[:4] == [str(reps), str(single), str(multi), str(threads)]
        # a band narrower than the printed digits gets more of them: compare as numbers
        assert [float(c.split()[0].rstrip("?")) for c in got[4:]] == pytest.approx(
            [threads / multi, multi / single, (threads - multi) / (2 * reps)], abs=5e-3)
    assert float(rows["1K"][-1].split()[0]) == pytest.approx(synth_aspace.SWITCH_CR3, abs=0.05)


def test_tlb_faults_commit_and_lock_tables(full) -> None:
    text, _out, recs = full
    lines = block(text, "aspace TLB")
    # region=4m is the touched region's page size, not a paging mode: one column pair, on/4k
    assert cells(lines[1]) == ["test", "params", "per", "paging on/4k", "per page on/4k"]
    tlb = {f"{c[0]} {c[1]}": c for c in map(cells, lines[3:])}
    assert tlb["invlpg instruction"][2].startswith(f"{med(recs, 'invlpg')} ")
    refill = []
    for region in synth_aspace.REGIONS:
        for pge in ("on", "off"):
            for pages in synth_aspace.PAGES:
                key = f"tlb_refill pages={pages} region={region} pge={pge}"
                refill.append(key)
                row = tlb[key]
                v = med(recs, "tlb_refill", pages=pages, region=region, pge=pge)
                assert row[3].split()[0] == str(v)
                assert float(row[4].split()[0].rstrip("?")) == pytest.approx(v / pages, abs=0.05)
    for pge in ("on", "off"):
        assert tlb[f"cr3_reload pge={pge}"][3].split()[0] == str(med(recs, "cr3_reload", pge=pge))
    assert [k for k in tlb if k.startswith("tlb_refill")] == refill  # region, then pge on/off, then pages
    faults = {f"{c[0]} {c[1]}": c for c in map(cells, block(text, "aspace faults")[3:])}
    r0, r3 = med(recs, "pf_roundtrip", ring=0), med(recs, "pf_roundtrip", ring=3)
    assert faults["pf_roundtrip ring 3 / ring 0 pages=64"][3].split()[0] == f"{r3 / r0:.2f}"
    assert faults["twin pages=16"][3].split()[0] == str(med(recs, "twin"))
    assert faults["demand_fault space=shared threads=2 pages=64"][3].split()[0] == str(
        med(recs, "demand_fault", space="shared", threads=2))
    commit = body(text, "aspace commit")
    single = med(recs, "commit_single_writer")
    assert list(commit) == ["0", "1", "10", "100"]
    for dirty in synth_aspace.DIRTY:
        c = med(recs, "commit", dirty=dirty)
        row = commit[str(dirty)]
        assert row[1].split()[0] == str(c)
        assert float(row[-1].split()[0].rstrip("?")) == pytest.approx(c / single, abs=5e-3)
    assert commit["100"][2].split()[0] == str(single)
    lock = [cells(line) for line in block(text, "aspace address-space lock model")[3:]]
    assert lock[-1] == [aspacereport.LOCK_NOTE]
    assert [c[:4] for c in lock[:-1]] == [["map_unmap", "isolated", "2", "4"], ["map_unmap", "shared", "2", "4"],
                                          ["demand_fault", "isolated", "2", "64"],
                                          ["demand_fault", "shared", "2", "64"]]
    shared = next(c for c in lock if c[:3] == ["map_unmap", "shared", "2"])
    assert shared[4:7] == ["1", "80", "page"]
    assert shared[7].split()[0] == str(med(recs, "map_unmap", space="shared", threads=2))
    iso = next(c for c in lock if c[:3] == ["demand_fault", "isolated", "2"])
    assert iso[4:7] == ["2", "64", "fault"]
    assert "PATHREADS (Zhang & Chen)" in text and "2.17x" in text and "3.19x" in text
    assert "canneal, dedup, reverse_index" in text


def test_aspace_csv(full) -> None:
    _text, out, recs = full
    with (out / "aspace.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert list(rows[0]) == ["table", "paging", "row", "column", "unit", "value", "min", "max", "verdict"]
    by = {(r["table"], r["row"], r["column"]): r for r in rows}
    assert len(by) == len(rows)
    assert {r["paging"] for r in rows} == {"on/4k"}
    assert {r["table"] for r in rows} == {"fibers_vs_threads", "workset", "tlb", "faults", "commit", "lock_model"}
    fiber, thread = med(recs, "switch_fiber"), med(recs, "switch_thread", pge="on", entry="sysenter")
    sw = by[("fibers_vs_threads", "switch, own address spaces", "thread")]
    assert (sw["unit"], sw["value"], sw["min"], sw["max"]) == ("TSC ticks/switch", str(thread), str(thread - 2),
                                                               str(thread + 2))
    ratio = by[("fibers_vs_threads", "switch, own address spaces", "thread/fiber")]
    assert float(ratio["value"]) == pytest.approx(thread / fiber, abs=1e-4)
    # ratios carry the band of both sides
    assert float(ratio["min"]) == pytest.approx((thread - 2) / (fiber + 2), abs=1e-4)
    assert float(ratio["max"]) == pytest.approx((thread + 2) / (fiber - 2), abs=1e-4)
    assert ratio["verdict"] == "resolved" and sw["verdict"] == "resolved"
    multi, threads = med(recs, "multi", "workset", size=4096), med(recs, "workset_threads", size=4096)
    extra = by[("workset", "fill=stos entry=sysenter size=4096", "per switch")]
    assert float(extra["value"]) == pytest.approx((threads - multi) / 20, abs=1e-4)
    assert float(extra["min"]) == pytest.approx((threads - 2 - multi - 2) / 20, abs=1e-4)
    assert float(by[("workset", "fill=stos entry=sysenter size=4096", "threads/multi")]["value"]) == \
        pytest.approx(threads / multi, abs=1e-4)
    for region in synth_aspace.REGIONS:
        v = med(recs, "tlb_refill", pages=64, region=region, pge="on")
        row = by[("tlb", f"tlb_refill pages=64 region={region} pge=on", "per page")]
        assert float(row["value"]) == pytest.approx(v / 64, abs=1e-4) and row["paging"] == "on/4k"
    assert by[("tlb", "cr3_reload pge=off", "med")]["unit"] == "TSC ticks/instruction"
    c, s = med(recs, "commit", dirty=10), med(recs, "commit_single_writer")
    assert float(by[("commit", "pages=16 dirty=10", "commit/single")]["value"]) == pytest.approx(c / s, abs=1e-4)
    assert by[("commit", "pages=16 dirty=10", "single_writer")]["value"] == ""
    assert by[("lock_model", "map_unmap space=shared threads=2 pages=4", "lock_max")]["value"] == "80"
    assert by[("lock_model", "map_unmap space=shared threads=2 pages=4", "lock_max")]["verdict"] == "exact"
    assert by[("lock_model", "demand_fault space=isolated threads=2 pages=64", "locks")]["value"] == "2"
    contended = by[("fibers_vs_threads", "mutex, contended", "fiber")]
    assert contended["value"] == str(med(recs, "mutex_fiber_contended"))


def test_plots(tmp_path: Path) -> None:
    """The family's figures of that run, drawn by its module alone (the report above is text; the tool's
    report with figures: test_real_qemu_log_end_to_end)."""
    drawn = {p.name: p for p in aspacereport.write_all(Run.of(synth_aspace.records(thread_faults=2)), tmp_path)}
    for name in PLOTS:
        png_ok(drawn[name])


def test_thread_faults_section_and_exit_status(full, tmp_path: Path) -> None:
    text, out, _recs = full
    assert "thread_fault" in RECORD_TYPES
    lines = block(text, "thread faults (the thread was stopped, the run went on)")
    assert cells(lines[1]) == ["vector", "name", "eip", "cr2", "thread", "bench", "what", "cause"]
    assert cells(lines[3]) == ["14", "page_fault", "0x40001234", "0xc0000000", "3", "aspace", "isolation",
                               "write to a page of another address space"]
    assert cells(lines[4])[:7] == ["14", "page_fault", "0x40001235", "0xc0001000", "4", "-", "-"]
    res = parse_log((out / "serial.log").read_bytes())
    assert res.complete and res.status == "ok" and exit_status(res) == EXIT_OK
    proc = tool_proc("parse", str(out / "serial.log"), "--out", str(tmp_path))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert not any(line.startswith("faults (") for line in text.splitlines())


def test_missing_cases_leave_blanks() -> None:
    recs = synth_aspace.records(drop=("mutex_fiber", "syscall_int80", "commit_single_writer", "tlb_refill"),
                                workset=False)
    text = render(recs)
    rows = body(text, PAIRS_HEAD)
    assert rows["mutex, uncontended"][1:3] == ["mutex_fiber", "mutex_thread_uncontended"]  # no cycles, no ratio
    assert rows["mutex, uncontended"][3].split()[0] == str(med(recs, "mutex_thread_uncontended"))
    assert len(rows["mutex, uncontended"]) == 4
    assert rows["system call: int80 / sysenter"][3] == "syscall_int80"
    ws = block(text, "workset: fibers vs isolated threads, paging on/4k")
    assert "(none at these sizes and reps)" in ws[0]
    assert [cells(line)[:3] for line in ws[3:5]] == [["0", "10", str(med(recs, "workset_threads", size=0))],
                                                     ["1K", "10", str(med(recs, "workset_threads", size=1024))]]
    assert not any("tlb_refill" in line for line in block(text, "aspace TLB")[3:])
    commit = body(text, "aspace commit")
    assert all(len(row) == 2 for row in commit.values())  # commit only: no single writer, no ratio
    csv_rows = aspacereport.csv_rows(Run.of(recs))
    assert ["workset", "on/4k", "fill=stos entry=sysenter size=1024", "threads/multi", "ratio", "", "", "",
            ""] in csv_rows


def test_skipped_side_says_why() -> None:
    recs = synth_aspace.records(sysenter=False)
    rows = body(render(recs), PAIRS_HEAD)
    assert rows["system call: int80 / sysenter"][1] == f"syscall_sysenter (skipped: {synth_aspace.NO_SEP})"
    # without sysenter the whole thread side ran with int80 (one entry per run)
    assert rows["switch, own address spaces"][3] == "switch_thread pge=on entry=int80"
    assert rows["mutex, contended"][3] == "mutex_thread_contended threads=2 entry=int80"
    assert rows["create+exit+join"][3] == "create_thread entry=int80 stack_pages=4"
    expect = med(recs, "switch_thread", pge="on", entry="int80") / med(recs, "switch_fiber")
    assert rows["switch, own address spaces"][5].split()[0] == f"{expect:.2f}"
    assert aspacereport.skip_why(recs, "syscall_sysenter") == synth_aspace.NO_SEP
    assert aspacereport.skip_why(recs, "syscall") == ""  # `what` is the whole case name


def test_mutex_contended_falls_back_to_mutex_fiber() -> None:
    recs = synth_aspace.records(drop=("mutex_fiber_contended",))
    text = render(recs)
    rows = body(text, PAIRS_HEAD)
    name = "mutex, contended (no mutex_fiber_contended: mutex_fiber)"
    row = rows[name]
    fiber, thread = med(recs, "mutex_fiber"), med(recs, "mutex_thread_contended")
    assert row[1] == "mutex_fiber" and row[2].split()[0] == str(fiber) and row[5].split()[0] == f"{thread / fiber:.2f}"
    assert "mutex, uncontended" in rows and "mutex, contended" not in rows
    note = next(line for line in block(text, PAIRS_HEAD) if line.startswith("no mutex_fiber_contended"))
    assert "not measured" in note and "the fiber side is mutex_fiber" in note and "no contention" in note
    csv_rows = aspacereport.csv_rows(Run.of(recs))
    assert any(r[2] == name and r[3] == "fiber" and r[5] == str(fiber) for r in csv_rows)
    short = next(r.short for r in aspacereport.pair_rows(aspacereport.collect(recs, "aspace"))
                 if r.pair.what == "mutex, contended")
    assert short.endswith("(fiber: mutex_fiber)")
    # neither fiber case: the side is blank, named by the case the comparison wants
    rows = body(render(synth_aspace.records(drop=("mutex_fiber_contended", "mutex_fiber"))), PAIRS_HEAD)
    assert rows["mutex, contended"][1] == "mutex_fiber_contended"


def test_no_pse_no_4m_region() -> None:
    recs = synth_aspace.records(pse=False)
    text = render(recs)
    refill = [c for c in map(cells, block(text, "aspace TLB")[3:]) if c[0] == "tlb_refill"]
    assert len(refill) == 8 and all("region=4k" in c[1] for c in refill)
    assert aspacereport.skip_why(recs, "tlb_refill") == synth_aspace.NO_PSE


def test_no_pge_falls_back_to_pge_off() -> None:
    recs = synth_aspace.records(pge=False)
    text = render(recs)
    rows = body(text, PAIRS_HEAD)
    fiber = med(recs, "switch_fiber")
    off = med(recs, "switch_thread", pge="off", entry="sysenter")
    row = rows["switch, own address spaces (no PGE: pge=off)"]
    assert row[3] == "switch_thread pge=off entry=sysenter"
    assert row[4].split()[0] == str(off) and row[5].split()[0] == f"{off / fiber:.2f}"
    same = rows["switch, one address space (no PGE: pge=off)"]
    assert same[5].split()[0] == f"{med(recs, 'switch_thread_samecr3', pge='off', entry='sysenter') / fiber:.2f}"
    assert rows["switch, own address spaces, PGE off"][5].split()[0] == f"{off / fiber:.2f}"
    note = next(line for line in block(text, PAIRS_HEAD) if line.startswith("no PGE"))
    assert synth_aspace.NO_PGE in note and "switch, one address space" in note
    tlb = [c for c in map(cells, block(text, "aspace TLB")[3:]) if c[0] in ("tlb_refill", "cr3_reload")]
    assert tlb and all("pge=off" in c[1] for c in tlb)
    csv_rows = aspacereport.csv_rows(Run.of(recs))
    assert any(r[2] == "switch, own address spaces (no PGE: pge=off)" and r[3] == "thread" and r[5] == str(off)
               for r in csv_rows)


def test_one_column_per_mode() -> None:
    recs = synth_aspace.records(pagesizes=("4k", "4m"))
    text = render(recs)
    head = cells(block(text, PAIRS_HEAD)[1])
    assert head == ["comparison", "fiber side", "TSC ticks on/4k", "TSC ticks on/4m", "thread side", "TSC ticks on/4k",
                    "TSC ticks on/4m", "thread/fiber on/4k", "thread/fiber on/4m"]
    row = body(text, PAIRS_HEAD)["switch, own address spaces"]
    for i, mode in enumerate(("4k", "4m")):
        a = med(recs, "switch_fiber", mode=mode)
        b = med(recs, "switch_thread", mode=mode, pge="on", entry="sysenter")
        assert row[7 + i].split()[0] == f"{b / a:.2f}"
    tlb = {f"{c[0]} {c[1]}": c for c in map(cells, block(text, "aspace TLB")[3:])}
    for i, mode in enumerate(("4k", "4m")):  # both regions in both passes: the column is the pass's page size
        for region in synth_aspace.REGIONS:
            row = tlb[f"tlb_refill pages=512 region={region} pge=on"]
            v = med(recs, "tlb_refill", mode=mode, pages=512, region=region, pge="on")
            assert row[3 + i].split()[0] == str(v)
            assert float(row[5 + i].split()[0].rstrip("?")) == pytest.approx(v / 512, abs=0.05)
    assert any(line.startswith("workset: fibers vs isolated threads, paging on/4m") for line in text.splitlines())
    assert {r[1] for r in aspacereport.csv_rows(Run.of(recs))} == {"on/4k", "on/4m"}


def test_figures_need_their_data(tmp_path: Path) -> None:
    from cleanroom_host.reports import aspace as aspaceplots

    recs = synth_aspace.records(drop=("tlb_refill", "commit", "commit_single_writer", "twin", "workset_threads"))
    written = aspaceplots.write_all(Run.of(recs), tmp_path)
    assert [p.name for p in written] == ["aspace-fibers-vs-threads.png"]
    png_ok(written[0])
    assert aspaceplots.write_all(Run.of(synth_workset.records()), tmp_path / "none") == []
    # workset_threads without bench workset: no ratios, so no workset figure
    written = aspaceplots.write_all(Run.of(synth_aspace.records(workset=False)), tmp_path / "no-workset")
    assert "aspace-workset.png" not in [p.name for p in written] and len(written) == 3


def test_no_aspace_results_no_aspace_output(tmp_path: Path) -> None:
    recs = parse_log(synth_workset.log()).records
    rs = ResultSet(Path("synthetic.log"), to_json_doc(parse_log(synth_workset.log()), "synthetic"))
    text = report.render(rs)
    assert "aspace" not in text and "isolated threads" not in text and "thread faults" not in text
    assert aspacereport.sections(Run.of(recs)) == [] and aspacereport.summary(Run.of(recs)) == []
    assert aspacereport.write_csv(Run.of(recs), tmp_path / "aspace.csv") is None
    written = report.write_outputs(rs, tmp_path, plots=False)
    assert [p.name for p in written] == ["report.txt", "derived.csv", "report.html"]


def test_tlb_figure_lines_are_region_x_pge() -> None:
    from cleanroom_host.reports import aspace as aspaceplots

    mode, lines = aspaceplots.tlb_lines(synth_aspace.records(pagesizes=("4k", "4m")))
    assert mode == "on/4k"  # first mode only, like the other figures
    assert [(region, pge) for region, pge, _by in lines] == [("4k", "on"), ("4k", "off"), ("4m", "on"),
                                                            ("4m", "off")]
    recs = synth_aspace.records()
    for region, pge, by in lines:
        assert sorted(by) == synth_aspace.PAGES
        assert by[64].mid == med(recs, "tlb_refill", pages=64, region=region, pge=pge)
    _mode, lines = aspaceplots.tlb_lines(synth_aspace.records(pge=False, pse=False))
    assert [(region, pge) for region, pge, _by in lines] == [("4k", "off")]


def real_medians(recs: list[dict[str, Any]], bench: str, case: str, **params: Any) -> list[int]:
    return [r["med"] for r in recs if r.get("t") == "result" and r.get("bench") == bench and r.get("case") == case
            and all(r["params"].get(k) == v for k, v in params.items())]


def test_real_qemu_log_end_to_end(tmp_path: Path) -> None:
    """The report of a real run (QEMU -icount, bench=workset,aspace paging=on sizes=0,4K,64K runs=2
    reps=200), through the command line."""
    proc = tool_proc("report", str(REAL_LOG), "--out", str(tmp_path), "--full")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    text = proc.stdout
    recs = parse_log(REAL_LOG.read_bytes()).records
    assert {r["params"]["pagesize"] for r in recs if r.get("t") == "result"} == {"4k"}

    lines = block(text, PAIRS_HEAD)
    # qemu-icount: the TSC counts instructions, and identical samples leave no band
    assert cells(lines[1]) == ["comparison", "fiber side", "instructions on/4k", "thread side", "instructions on/4k",
                               "thread/fiber on/4k"]
    rows = body(text, PAIRS_HEAD)
    [fiber] = real_medians(recs, "aspace", "switch_fiber")
    [thread] = real_medians(recs, "aspace", "switch_thread", pge="on")
    sw = rows["switch, own address spaces"]
    assert sw[1] == "switch_fiber" and sw[3] == "switch_thread pge=on entry=sysenter"
    assert (sw[2], sw[4], sw[5]) == (str(fiber), str(thread), f"{thread / fiber:.2f}")
    [fc] = real_medians(recs, "aspace", "mutex_fiber_contended")
    [tc] = real_medians(recs, "aspace", "mutex_thread_contended")
    assert rows["mutex, contended"][1:3] == ["mutex_fiber_contended threads=2", str(fc)]
    assert rows["mutex, contended"][5] == f"{tc / fc:.2f}"
    assert all(len(row) == 6 for row in rows.values())  # every comparison has both sides and a ratio
    assert not any(line.startswith(NOTES[1:]) for line in lines)

    head = "workset: fibers vs isolated threads, paging on/4k, fill=stos entry=sysenter"
    ws = body(text, head)
    assert "(switch=pushad)" in block(text, head)[0]
    assert list(ws) == ["0", "4K", "64K"]
    for size, label in zip((0, 4096, 65536), ws):
        [single] = real_medians(recs, "workset", "single", size=size)
        [multi] = real_medians(recs, "workset", "multi", size=size)
        [threads] = real_medians(recs, "aspace", "workset_threads", size=size)
        assert ws[label][1:5] == ["200", str(single), str(multi), str(threads)]
        assert ws[label][5] == f"{threads / multi:.3f}"

    tlb = [c for c in map(cells, block(text, "aspace TLB")[3:]) if c[0] == "tlb_refill"]
    assert len(tlb) == 16 and len({c[1] for c in tlb}) == 16
    lock = [cells(line) for line in block(text, "aspace address-space lock model")[3:-1]]
    assert sorted(c[1] for c in lock) == ["isolated", "isolated", "shared", "shared"]
    assert {c[2] for c in lock} == {"2"}

    with (tmp_path / "aspace.csv").open() as f:
        csv_rows = list(csv.DictReader(f))
    assert {r["paging"] for r in csv_rows} == {"on/4k"}
    assert {r["table"] for r in csv_rows} == {"fibers_vs_threads", "workset", "tlb", "faults", "commit",
                                              "lock_model"}
    ratio = next(r for r in csv_rows if r["table"] == "fibers_vs_threads"
                 and r["row"] == "switch, own address spaces" and r["column"] == "thread/fiber")
    assert float(ratio["value"]) == pytest.approx(thread / fiber, abs=1e-4)
    for name in PLOTS:
        png_ok(tmp_path / "plots" / name)
