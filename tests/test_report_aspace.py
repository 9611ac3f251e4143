"""`cleanroom report` with `aspace` results: the fibers-vs-threads, workset,
TLB, faults, commit and lock-model tables, aspace.csv, the four figures and
the thread_fault section, from synthetic logs (tests/fixtures/synth_aspace.py).
Expected values are worked out here from the records' medians."""

from __future__ import annotations

import csv
import re
import struct
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "fixtures"))

import synth_aspace  # noqa: E402
import synth_workset  # noqa: E402

from cleanroom_host import aspacereport, report  # noqa: E402
from cleanroom_host.protocol import RECORD_TYPES, parse_log  # noqa: E402
from cleanroom_host.results import EXIT_OK, ResultSet, exit_status, to_json_doc  # noqa: E402

PLOTS = ["aspace-tlb-refill.png", "aspace-commit.png", "aspace-fibers-vs-threads.png", "aspace-workset.png"]
PAIRS_HEAD = "aspace: fibers vs isolated threads"


def tool(cleanroom_tool: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(cleanroom_tool), *args], capture_output=True, text=True,
                          timeout=180, stdin=subprocess.DEVNULL)


def block(text: str, head: str) -> list[str]:
    """The lines of the report section starting with `head`, up to the blank line."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(head))
    end = next((i for i in range(start, len(lines)) if not lines[i].strip()), len(lines))
    return lines[start:end]


def cells(line: str) -> list[str]:
    return re.split(r"\s{2,}", line.strip())


def body(text: str, head: str) -> dict[str, list[str]]:
    """The rows of a table by their first cell (test and params joined for the case tables)."""
    out = {}
    for c in map(cells, block(text, head)[3:]):
        if c[0].startswith(("one CPU", "no PGE")):
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


def png_ok(path: Path) -> None:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR", f"{path} is not a PNG"
    w, h = struct.unpack(">II", data[16:24])
    assert 600 <= w <= 2000 and 400 <= h <= 1200
    import matplotlib.image as mpimg

    assert mpimg.imread(str(path)).std() > 0.05, f"{path.name} is (nearly) blank"


@pytest.fixture(scope="module")
def full(cleanroom_tool: Path, tmp_path_factory: pytest.TempPathFactory):
    """The tool's report of a whole synthetic run (PGE, sysenter, one paging mode, two thread faults)."""
    out = tmp_path_factory.mktemp("aspace")
    (out / "serial.log").write_bytes(synth_aspace.log(thread_faults=2))
    proc = tool(cleanroom_tool, "report", str(out / "serial.log"), "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    return proc.stdout, out, synth_aspace.records(thread_faults=2)


def test_fibers_vs_threads_ratios(full) -> None:
    text, _out, recs = full
    lines = block(text, PAIRS_HEAD)
    assert cells(lines[1]) == ["comparison", "fiber side", "cycles on/4k", "thread side", "cycles on/4k",
                               "thread/fiber on/4k"]
    rows = body(text, PAIRS_HEAD)
    fiber = med(recs, "switch_fiber")
    expect = {
        "switch, own address spaces": (fiber, med(recs, "switch_thread", pge="on", entry="sysenter")),
        "switch, own address spaces, PGE off": (fiber, med(recs, "switch_thread", pge="off", entry="sysenter")),
        "switch, one address space": (fiber, med(recs, "switch_thread_samecr3", pge="on", entry="sysenter")),
        "create+exit+join": (med(recs, "create_fiber"), med(recs, "create_thread", entry="sysenter")),
        "mutex, uncontended": (med(recs, "mutex_fiber"), med(recs, "mutex_thread_uncontended")),
        "mutex, contended": (med(recs, "mutex_fiber"), med(recs, "mutex_thread_contended", entry="sysenter")),
        "malloc+free: shared lock / subheap": (med(recs, "malloc_subheap"), med(recs, "malloc_shared_lock")),
        "system call: int80 / sysenter": (med(recs, "syscall_sysenter"), med(recs, "syscall_int80")),
    }
    assert list(rows) == list(expect)
    for what, (a, b) in expect.items():
        row = rows[what]
        assert row[2] == f"{a} ({a - 2}-{a + 2})" and row[4] == f"{b} ({b - 2}-{b + 2})", row
        assert row[5] == f"{b / a:.2f}", row
    assert rows["switch, own address spaces"][3] == "switch_thread pge=on entry=sysenter"
    assert rows["malloc+free: shared lock / subheap"][1] == "malloc_subheap size=64"
    assert not any(line.startswith("no PGE") for line in text.splitlines())


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
        assert rows[label][1:] == [str(reps), str(single), str(multi), str(threads), f"{threads / multi:.3f}",
                                   f"{multi / single:.3f}", f"{(threads - multi) / (2 * reps):.1f}"]
    assert rows["1K"][-1] == f"{synth_aspace.SWITCH_CR3:.1f}"


def test_tlb_faults_commit_and_lock_tables(full) -> None:
    text, _out, recs = full
    tlb = {f"{c[0]} {c[1]}": c for c in map(cells, block(text, "aspace TLB")[3:])}
    assert tlb["invlpg instruction"][2].startswith(f"{med(recs, 'invlpg')} ")
    for pge in ("on", "off"):
        assert tlb[f"cr3_reload pge={pge}"][3].split()[0] == str(med(recs, "cr3_reload", pge=pge))
        for pages in synth_aspace.PAGES:
            row = tlb[f"tlb_refill pages={pages} pge={pge}"]
            v = med(recs, "tlb_refill", pages=pages, pge=pge)
            assert row[3].split()[0] == str(v) and row[4] == f"{v / pages:.1f}"
    faults = {f"{c[0]} {c[1]}": c for c in map(cells, block(text, "aspace faults")[3:])}
    r0, r3 = med(recs, "pf_roundtrip", ring=0), med(recs, "pf_roundtrip", ring=3)
    assert faults["pf_roundtrip ring 3 / ring 0 pages=64"][3] == f"{r3 / r0:.2f}"
    assert faults["twin pages=64"][3].split()[0] == str(med(recs, "twin"))
    assert faults["demand_fault space=shared threads=4 pages=64"][3].split()[0] == str(
        med(recs, "demand_fault", space="shared", threads=4))
    commit = body(text, "aspace commit")
    single = med(recs, "commit_single_writer")
    assert list(commit) == ["0", "1", "10", "100"]
    for dirty in synth_aspace.DIRTY:
        c = med(recs, "commit", dirty=dirty)
        row = commit[str(dirty)]
        assert row[1].split()[0] == str(c) and row[-1] == f"{c / single:.2f}"
    assert commit["100"][2].split()[0] == str(single)
    lock = [cells(line) for line in block(text, "aspace address-space lock model")[3:]]
    assert lock[-1] == [aspacereport.LOCK_NOTE]
    shared4 = next(c for c in lock if c[:3] == ["map_unmap", "shared", "4"])
    assert shared4[4:7] == ["1", "512", "page"]
    assert shared4[7].split()[0] == str(med(recs, "map_unmap", space="shared", threads=4))
    iso4 = next(c for c in lock if c[:3] == ["demand_fault", "isolated", "4"])
    assert iso4[4:6] == ["4", "128"]
    assert "PATHREADS (Zhang & Chen)" in text and "2.17x" in text and "3.19x" in text
    assert "canneal, dedup, reverse_index" in text


def test_aspace_csv(full) -> None:
    _text, out, recs = full
    with (out / "aspace.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert list(rows[0]) == ["table", "paging", "row", "column", "unit", "value", "min", "max"]
    by = {(r["table"], r["row"], r["column"]): r for r in rows}
    assert len(by) == len(rows)
    assert {r["paging"] for r in rows} == {"on/4k"}
    assert {r["table"] for r in rows} == {"fibers_vs_threads", "workset", "tlb", "faults", "commit", "lock_model"}
    fiber, thread = med(recs, "switch_fiber"), med(recs, "switch_thread", pge="on", entry="sysenter")
    sw = by[("fibers_vs_threads", "switch, own address spaces", "thread")]
    assert (sw["unit"], sw["value"], sw["min"], sw["max"]) == ("cycles/switch", str(thread), str(thread - 2),
                                                               str(thread + 2))
    ratio = by[("fibers_vs_threads", "switch, own address spaces", "thread/fiber")]
    assert float(ratio["value"]) == pytest.approx(thread / fiber, abs=1e-4) and ratio["min"] == ""
    multi, threads = med(recs, "multi", "workset", size=4096), med(recs, "workset_threads", size=4096)
    extra = by[("workset", "fill=stos entry=sysenter size=4096", "per switch")]
    assert float(extra["value"]) == pytest.approx((threads - multi) / 20, abs=1e-4)
    assert float(extra["min"]) == pytest.approx((threads - 2 - multi - 2) / 20, abs=1e-4)
    assert float(by[("workset", "fill=stos entry=sysenter size=4096", "threads/multi")]["value"]) == \
        pytest.approx(threads / multi, abs=1e-4)
    v = med(recs, "tlb_refill", pages=64, pge="on")
    assert float(by[("tlb", "tlb_refill pages=64 pge=on", "per page")]["value"]) == pytest.approx(v / 64, abs=1e-4)
    assert by[("tlb", "cr3_reload pge=off", "med")]["unit"] == "cycles/instruction"
    c, s = med(recs, "commit", dirty=10), med(recs, "commit_single_writer")
    assert float(by[("commit", "pages=64 dirty=10", "commit/single")]["value"]) == pytest.approx(c / s, abs=1e-4)
    assert by[("commit", "pages=64 dirty=10", "single_writer")]["value"] == ""
    assert by[("lock_model", "map_unmap space=shared threads=4 pages=64", "lock_max")]["value"] == "512"
    assert by[("lock_model", "demand_fault space=isolated threads=4 pages=64", "locks")]["value"] == "4"


def test_plots(full) -> None:
    _text, out, _recs = full
    for name in PLOTS:
        png_ok(out / "plots" / name)


def test_thread_faults_section_and_exit_status(full, cleanroom_tool: Path, tmp_path: Path) -> None:
    text, out, _recs = full
    assert "thread_fault" in RECORD_TYPES
    lines = block(text, "thread faults (the thread was stopped, the run went on)")
    assert cells(lines[1]) == ["vector", "name", "eip", "cr2", "thread", "bench", "what", "cause"]
    assert cells(lines[3]) == ["14", "page_fault", "0x40001234", "0xc0000000", "3", "aspace", "isolation",
                               "write to a page of another address space"]
    assert cells(lines[4])[:7] == ["14", "page_fault", "0x40001235", "0xc0001000", "4", "-", "-"]
    res = parse_log((out / "serial.log").read_bytes())
    assert res.complete and res.status == "ok" and exit_status(res) == EXIT_OK
    proc = tool(cleanroom_tool, "parse", str(out / "serial.log"), "--out", str(tmp_path))
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
    csv_rows = aspacereport.csv_rows(recs)
    assert ["workset", "on/4k", "fill=stos entry=sysenter size=1024", "threads/multi", "ratio", "", "", ""] in csv_rows


def test_skipped_side_says_why() -> None:
    recs = synth_aspace.records(sysenter=False)
    rows = body(render(recs), PAIRS_HEAD)
    assert rows["system call: int80 / sysenter"][1] == "syscall_sysenter (skipped: the CPU has no sysenter)"
    assert rows["switch, own address spaces"][3] == "switch_thread pge=on entry=int80"


def test_no_pge_falls_back_to_pge_off() -> None:
    recs = synth_aspace.records(pge=False)
    text = render(recs)
    rows = body(text, PAIRS_HEAD)
    fiber = med(recs, "switch_fiber")
    off = med(recs, "switch_thread", pge="off", entry="sysenter")
    row = rows["switch, own address spaces (no PGE: pge=off)"]
    assert row[3] == "switch_thread pge=off entry=sysenter"
    assert row[4].split()[0] == str(off) and row[5] == f"{off / fiber:.2f}"
    same = rows["switch, one address space (no PGE: pge=off)"]
    assert same[5] == f"{med(recs, 'switch_thread_samecr3', pge='off', entry='sysenter') / fiber:.2f}"
    assert rows["switch, own address spaces, PGE off"][5] == f"{off / fiber:.2f}"
    note = next(line for line in block(text, PAIRS_HEAD) if line.startswith("no PGE"))
    assert "the CPU has no PGE" in note and "switch, one address space" in note
    csv_rows = aspacereport.csv_rows(recs)
    assert any(r[2] == "switch, own address spaces (no PGE: pge=off)" and r[3] == "thread" and r[5] == str(off)
               for r in csv_rows)


def test_one_column_per_mode() -> None:
    recs = synth_aspace.records(pagesizes=("4k", "4m"))
    text = render(recs)
    head = cells(block(text, PAIRS_HEAD)[1])
    assert head == ["comparison", "fiber side", "cycles on/4k", "cycles on/4m", "thread side", "cycles on/4k",
                    "cycles on/4m", "thread/fiber on/4k", "thread/fiber on/4m"]
    row = body(text, PAIRS_HEAD)["switch, own address spaces"]
    for i, mode in enumerate(("4k", "4m")):
        a = med(recs, "switch_fiber", mode=mode)
        b = med(recs, "switch_thread", mode=mode, pge="on", entry="sysenter")
        assert row[7 + i] == f"{b / a:.2f}"
    tlb = {f"{c[0]} {c[1]}": c for c in map(cells, block(text, "aspace TLB")[3:])}
    row = tlb["tlb_refill pages=512 pge=on"]
    big = med(recs, "tlb_refill", mode="4m", pages=512, pge="on")
    assert row[4].split()[0] == str(big) and row[6] == f"{big / 512:.1f}"
    assert any(line.startswith("workset: fibers vs isolated threads, paging on/4m") for line in text.splitlines())
    assert {r[1] for r in aspacereport.csv_rows(recs)} == {"on/4k", "on/4m"}


def test_figures_need_their_data(tmp_path: Path) -> None:
    from cleanroom_host import aspaceplots

    recs = synth_aspace.records(drop=("tlb_refill", "commit", "commit_single_writer", "twin", "workset_threads"))
    written = aspaceplots.write_all(recs, tmp_path)
    assert [p.name for p in written] == ["aspace-fibers-vs-threads.png"]
    png_ok(written[0])
    assert aspaceplots.write_all(synth_workset.records(), tmp_path / "none") == []
    # workset_threads without bench workset: no ratios, so no workset figure
    written = aspaceplots.write_all(synth_aspace.records(workset=False), tmp_path / "no-workset")
    assert "aspace-workset.png" not in [p.name for p in written] and len(written) == 3


def test_no_aspace_results_no_aspace_output(tmp_path: Path) -> None:
    recs = parse_log(synth_workset.log()).records
    rs = ResultSet(Path("synthetic.log"), to_json_doc(parse_log(synth_workset.log()), "synthetic"))
    text = report.render(rs)
    assert "aspace" not in text and "isolated threads" not in text and "thread faults" not in text
    assert aspacereport.sections(recs) == [] and aspacereport.write_csv(recs, tmp_path / "aspace.csv") is None
    written = report.write_outputs(rs, tmp_path, plots=False)
    assert [p.name for p in written] == ["derived.csv"]
