"""`cleanroom report` with locks, create and peers results: the tables, the
litethreads check, locks.csv and the four figures, from two real recorded runs
(hosted-quick-locks.log: the hosted build with peers; qemu-icount-quick-locks.log:
the kernel under QEMU -icount, paging off and on)."""

from __future__ import annotations

import csv
import re
import struct
from pathlib import Path

import pytest

from booting import tool_proc

from cleanroom_host.records.protocol import encode_record, parse_log
from cleanroom_host.reports import locks as lockplots
from cleanroom_host.reports.context import Run

HOSTED = "hosted-quick-locks.log"
ICOUNT = "qemu-icount-quick-locks.log"
LOCK_PLOTS = ["litethreads.png", "valchanov.png", "create.png"]


def medians(log: Path) -> dict[tuple[str, str, tuple[tuple[str, object], ...]], int]:
    """(bench, case, params without paging/pagesize/reps-like keys kept) -> med, for the first paging mode."""
    out = {}
    first_mode = None
    for r in parse_log(log.read_bytes()).records:
        if r.get("t") != "result" or r.get("bench") not in ("locks", "create", "peers"):
            continue
        p = dict(r["params"])
        mode = p.pop("paging")
        p.pop("pagesize")
        first_mode = first_mode or mode
        if mode == first_mode:
            out[(r["bench"], r["case"], tuple(sorted(p.items())))] = r["med"]
    return out


def med(ms: dict, bench: str, case: str, **params: object) -> int:
    hits = [v for (b, c, p), v in ms.items() if b == bench and c == case
            and all(dict(p).get(k) == want for k, want in params.items())]
    assert len(hits) == 1, (bench, case, params, hits)
    return hits[0]


def block(text: str, head: str) -> list[str]:
    """The lines of the report section starting with `head`, up to the blank line."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(head))
    end = next((i for i in range(start, len(lines)) if not lines[i].strip()), len(lines))
    return lines[start:end]


def cells(line: str) -> list[str]:
    return re.split(r"\s{2,}", line.strip())


def png_ok(path: Path) -> None:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR", f"{path} is not a PNG"
    w, h = struct.unpack(">II", data[16:24])
    assert 600 <= w <= 2000 and 400 <= h <= 1200
    import matplotlib.image as mpimg

    assert mpimg.imread(str(path)).std() > 0.05, f"{path.name} is (nearly) blank"


@pytest.fixture(scope="module")
def hosted(fixtures_dir: Path, tmp_path_factory: pytest.TempPathFactory):
    out = tmp_path_factory.mktemp("hosted")
    proc = tool_proc("report", str(fixtures_dir / HOSTED), "--out", str(out), "--full", "--no-plots")
    assert proc.returncode == 0, proc.stderr
    return proc.stdout, out, medians(fixtures_dir / HOSTED)


@pytest.fixture(scope="module")
def icount(fixtures_dir: Path, tmp_path_factory: pytest.TempPathFactory):
    out = tmp_path_factory.mktemp("icount")
    proc = tool_proc("report", str(fixtures_dir / ICOUNT), "--out", str(out), "--full", "--no-plots")
    assert proc.returncode == 0, proc.stderr
    return proc.stdout, out, medians(fixtures_dir / ICOUNT)


def test_locks_table_rows_and_modes(icount) -> None:
    text, _out, ms = icount
    lines = block(text, "locks: instructions per operation")  # qemu-icount: the TSC counts instructions
    assert cells(lines[1])[-2:] == ["paging off", "paging on/4k"]
    rows = {(c[0], c[1]): c for c in map(cells, lines[3:]) if c[0] in
            ("uncontended", "contended", "valchanov", "litethreads", "condvar", "barrier")}
    for case in ("tas", "ttas", "ticket", "tas_pause", "ttas_pause", "ticket_pause", "mutex", "spinblock", "sem"):
        assert rows[("uncontended", case)][3] == str(med(ms, "locks", case))
    for k in (2, 4, 8, 16):
        for lock in ("mutex", "spinblock", "sem"):
            assert rows[("contended", f"k={k} lock={lock}")][3] == str(med(ms, "locks", "contended", k=k, lock=lock))
    for lock in ("mutex", "spinblock", "tas", "ttas", "ticket"):
        assert rows[("valchanov", f"lock={lock} threads=5")][3] == str(med(ms, "locks", "valchanov", lock=lock))
    for lk, un in ((100, 200), (0, 0), (0, 200), (100, 0), (1000, 0), (1000, 2000)):
        assert (("litethreads", f"lock_loops={lk} unlock_loops={un}") in rows)
    for n in (2, 8, 32):
        assert rows[("barrier", f"n={n}")][3] == str(med(ms, "locks", "barrier", n=n))
    assert ("condvar", "rounds=1000") in rows
    assert len(rows) == 9 + 12 + 5 + 6 + 1 + 3


def test_litethreads_check_from_medians(hosted) -> None:
    text, _out, ms = hosted

    def c(lk: int, un: int) -> int:
        return med(ms, "locks", "litethreads", lock_loops=lk, unlock_loops=un)

    s200 = (c(0, 200) - c(0, 0)) / 200
    s2000 = (c(1000, 2000) - c(0, 0)) / 2000
    spread = max(c(0, 0), c(100, 0), c(1000, 0)) / min(c(0, 0), c(100, 0), c(1000, 0))
    line = next(line for line in text.splitlines() if line.startswith("litethreads, paging host:"))
    # hosted: TSC ticks, every derived figure with its band (min..max over the runs)
    assert re.search(rf"{s200:.2f} \([0-9.]+\.\.[0-9.]+\) TSC ticks per item per unlock iteration from unlock 0\.\.200",
                     line), line
    assert f"{s2000:.2f} (" in line and "from 0..2000" in line
    # the lock spin changes nothing: the spread's band holds 1, so it prints as ~1, never as a finding
    assert "max/min ~1 (" in line and f"{spread:.3f}" not in line
    assert "82 875 us vs NPTL 615 154 us" in text and "7.4x" in text


def test_create_ratio(icount) -> None:
    text, _out, ms = icount
    lines = block(text, "create: instructions per fiber")
    body = [cells(line) for line in lines[3:]]
    assert [b[0] for b in body] == ["1", "16", "256", "1024"]
    for b in body:
        n = int(b[0])
        pool, ff = med(ms, "create", "pool", outstanding=n), med(ms, "create", "firstfit", outstanding=n)
        assert b[1:4] == [str(pool), str(ff), f"{ff / pool:.2f}"]
    assert body[-1][3] != "1.00"  # fragmentation shows at 1024 outstanding


def test_peers_table(hosted) -> None:
    text, _out, ms = hosted
    lines = block(text, "peers: cleanroom vs glibc/NPTL")
    rows = {c[0]: c for c in map(cells, lines[3:])}
    pairs = {"switch": ("switch_fiber", "switch_ucontext"),
             "ping-pong, 1 CPU": ("pingpong_fiber", "pingpong_pthread_1cpu"),
             "ping-pong, 2 CPUs": ("pingpong_fiber", "pingpong_pthread_2cpu"),
             "create+join": ("create_fiber", "create_pthread"),
             "lock+unlock, mutex": ("lock_mutex", "lock_pthread_mutex")}
    for what, (ours, theirs) in pairs.items():
        a, b = med(ms, "peers", ours), med(ms, "peers", theirs)
        row = rows[what]
        assert row[2].split()[0] == str(a) and row[4].split()[0] == str(b)
        assert row[-1].split()[0] == f"{b / a:.1f}"
    assert "NPTL mutex+cond, one CPU" in rows["ping-pong, 1 CPU"][3]


def test_peers_skip_shown(fixtures_dir: Path, tmp_path: Path) -> None:
    """A machine with one CPU writes a skip for pingpong_pthread_2cpu instead of a result."""
    lines = (fixtures_dir / HOSTED).read_bytes().splitlines(keepends=True)
    kept = [line for line in lines if b'"case":"pingpong_pthread_2cpu"' not in line]
    assert len(kept) == len(lines) - 1
    skip = encode_record({"t": "skip", "seq": 900, "what": "pingpong_pthread_2cpu", "bench": "peers",
                          "why": "this machine has one CPU online"})
    kept.insert(len(kept) - 1, skip)
    log = tmp_path / "one-cpu.log"
    log.write_bytes(b"".join(kept))
    proc = tool_proc("report", str(log), "--no-plots", "--out", str(tmp_path / "out"), "--full")
    assert proc.returncode == 0, proc.stderr
    row = next(line for line in proc.stdout.splitlines() if line.strip().startswith("ping-pong, 2 CPUs"))
    assert "skipped: this machine has one CPU online" in row


def test_locks_csv(hosted) -> None:
    _text, out, ms = hosted
    with (out / "locks.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert list(rows[0]) == ["table", "paging", "row", "column", "unit", "value", "min", "max", "verdict"]
    by = {(r["table"], r["row"], r["column"]): r for r in rows}
    assert by[("uncontended", "mutex", "med")]["value"] == str(med(ms, "locks", "mutex"))
    ff, pool = med(ms, "create", "firstfit", outstanding=1024), med(ms, "create", "pool", outstanding=1024)
    assert float(by[("create", "outstanding=1024", "firstfit/pool")]["value"]) == pytest.approx(ff / pool, abs=1e-4)
    sw = med(ms, "peers", "switch_ucontext") / med(ms, "peers", "switch_fiber")
    assert float(by[("peers", "switch", "nptl/cleanroom")]["value"]) == pytest.approx(sw, abs=1e-4)
    assert {r["paging"] for r in rows} == {"host"}


def test_plots(fixtures_dir: Path, tmp_path: Path) -> None:
    """The family's figures of both fixtures, drawn by its module alone (the reports above are text: each
    other family's figures cost ~0.3 s of CPU apiece; the tool's report with figures: test_report_figures)."""
    drawn = {}
    for log in (HOSTED, ICOUNT):
        written = lockplots.write_all(Run.of(parse_log((fixtures_dir / log).read_bytes()).records), tmp_path / log)
        drawn[log] = {p.name: p for p in written}
    for name in LOCK_PLOTS + ["peers.png"]:
        png_ok(drawn[HOSTED][name])
    for name in LOCK_PLOTS:
        png_ok(drawn[ICOUNT][name])
    assert "peers.png" not in drawn[ICOUNT]  # no peers in a kernel run


def test_no_plots(fixtures_dir: Path, tmp_path: Path) -> None:
    proc = tool_proc("report", str(fixtures_dir / HOSTED), "--no-plots", "--out", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "locks.csv").is_file()
    assert not list(tmp_path.rglob("*.png"))
