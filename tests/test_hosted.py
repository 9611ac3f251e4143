"""The hosted build: bench/ and runtime/ as a Linux program printing the
kernel's records, run pinned to one CPU through the host tool."""

from __future__ import annotations

import ctypes
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from booting import HOSTED, TOOL_CMD, TOOL_SAFETY_NET_S, boot, built, done, of_type
from cleanroom_host.machines.machine import Machine

REPO = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.usefixtures("hosted_elf")


def test_short_sweep_is_a_complete_valid_record_set(tmp_path: Path) -> None:
    rc, res = boot(tmp_path, "hosted", "bench=workset,ctxsw sizes=0,1K,4K,64K,1M reps=20 runs=3")
    assert rc == 0 and res["complete"] and res["corrupt"] == 0 and not res["missing"]
    hello = of_type(res, "hello")[0]
    assert hello["platform"] == "hosted" and hello["loader"] == "linux"
    tsc = of_type(res, "tsc")[0]
    assert tsc["method"] in ("cpuid15", "cpuid16", "clock_monotonic_raw") and tsc["hz"] > 10**8
    ws = [r for r in of_type(res, "result") if r["bench"] == "workset"]
    # every size asked for, single then multi, each with the repetitions and runs asked for: the shape of the
    # sweep, never how long a live run took
    assert [(r["params"]["size"], r["case"]) for r in ws] == [
        (size, case) for size in (0, 1 << 10, 4 << 10, 64 << 10, 1 << 20) for case in ("single", "multi")]
    assert all(r["params"]["paging"] == "host" and r["params"]["reps"] == 20 for r in ws)
    assert all(r["n"] == len(r["samples"]) == 3 and r["min"] <= r["med"] <= r["max"] for r in of_type(res, "result"))
    # the quick suite's paging=on pass cannot exist in a process: a skip naming why
    assert any("paging" in s["why"] for s in of_type(res, "skip"))


def test_same_arguments_as_the_kernel_and_bad_ones_rejected() -> None:
    proc = subprocess.run([str(HOSTED), "suite=quick", "bench=nosuch", "runs=0"], capture_output=True, text=True,
                          timeout=TOOL_SAFETY_NET_S)
    assert proc.returncode == 2
    records = [json.loads(line[5:line.rindex(" ~")]) for line in proc.stdout.splitlines() if line.startswith("@cr1 ")]
    errors = [r for r in records if r["t"] == "error"]
    assert {e["token"] for e in errors} == {"bench=nosuch", "runs=0"}
    assert records[-1]["t"] == "done" and records[-1]["status"] == "config"


def test_fiber_stack_overflow_is_a_fault_naming_the_fiber(tmp_path: Path) -> None:
    rc, res = boot(tmp_path, "hosted", "provoke=fiber")
    assert rc == 3 and done(res)["status"] == "fault"
    f = of_type(res, "fault")[0]
    assert f["vector"] == 14 and f["name"] == "page_fault" and f["fiber"] == "overflow"
    assert "guard page" in f["cause"]


def test_selftest_is_skipped_not_faked(tmp_path: Path) -> None:
    rc, res = boot(tmp_path, "hosted", "suite=selftest")
    assert rc == 0 and not of_type(res, "test")
    assert any(s["what"] == "selftest" for s in of_type(res, "skip"))


# --- hardware event counters (hosted/counters.c) -------------------------------------------

EVENTS = ["core_cycles", "instructions", "l1d_read_misses", "llc_misses", "dtlb_read_misses"]


def counters_record(res: dict[str, Any]) -> dict[str, Any]:
    recs = of_type(res, "counters")
    assert len(recs) == 1, "exactly one counters record"
    assert [e["name"] for e in recs[0]["events"]] == EVENTS
    return recs[0]


# The hosted build with its counters faked at the platform interface (kernel/counters.h): tests/doubles/counters.c
# in place of hosted/counters.c, built by `make units`. Never a measurement.
FAKE_COUNTERS = REPO / "build" / "units" / "cleanroom-hosted-fakecounters"
# What the double counts: the j-th sample bracketed by a pair of reads counts (e + 1) * FAKE_EVENT_STEP + j of
# event e (EVENTS' order), its scope says what it is.
FAKE_EVENT_STEP = 1_000_000
FAKE_SCOPE = "test double"
# The peers cases that run threads, measured with the counters paused (bench/peers.c; docs/PROTOCOL.md)
PAUSED = {"handoff_pthread", "pingpong_pthread_1cpu", "pingpong_pthread_2cpu", "create_pthread"}


@pytest.mark.parametrize("program", ["hosted", "fake counters"])
def test_counters_off_opens_nothing_and_says_so(tmp_path: Path, program: str) -> None:
    binary = HOSTED if program == "hosted" else built(FAKE_COUNTERS, "units")
    rc, res = boot(tmp_path, "hosted", "bench=tsc runs=2 counters=off", "--hosted", str(binary))
    assert rc == 0 and done(res)["status"] == "ok" and of_type(res, "result")
    ctr = counters_record(res)
    assert all(e["ok"] is False and e["why"] == "counters=off" for e in ctr["events"])
    assert ctr["scope"] is None
    assert all("counters" not in r for r in of_type(res, "result"))


def test_counters_auto_names_every_event_opened_or_why_not(tmp_path: Path) -> None:
    """Opened or a named skip: a machine without a PMU (a VM that hides it)
    or with perf_event_paranoid too high runs as well, only without counts."""
    rc, res = boot(tmp_path, "hosted", "bench=tsc runs=2")
    assert rc == 0 and done(res)["status"] == "ok" and of_type(res, "result")
    ctr = counters_record(res)
    for e in ctr["events"]:
        if e["ok"]:
            assert "why" not in e
        else:
            assert e["why"] and e["why"] != "counters=off", e
    opened = [e for e in ctr["events"] if e["ok"]]
    assert ctr["scope"] == ("user" if opened else None)
    # the group is led by core cycles: no other event counts without it
    assert not opened or ctr["events"][0]["ok"]


def test_result_records_carry_the_open_counters(tmp_path: Path) -> None:
    rc, res = boot(tmp_path, "hosted", "bench=tsc runs=3")
    assert rc == 0
    opened = [e["name"] for e in counters_record(res)["events"] if e["ok"]]
    results = of_type(res, "result")
    assert results
    if not opened:
        assert all("counters" not in r for r in results), "counts from counters that did not open"
        why = counters_record(res)["events"][0]["why"]
        pytest.skip(f"no PMU counter opened on this machine ({why}): no real counts to check (the fake "
                    "counters' test checks the records' counters path)")
    for r in results:
        assert sorted(r["counters"]) == sorted(opened), r
        for name, s in r["counters"].items():
            assert s["min"] <= s["med"] <= s["max"], (r["case"], name, s)
        if "instructions" in r["counters"]:
            assert r["counters"]["instructions"]["min"] > 0, r  # every sample executes something


def test_result_records_carry_the_counts_read_around_each_sample(tmp_path: Path) -> None:
    """The harness's counters path on counts faked at the platform interface (FAKE_COUNTERS), on any machine:
    every result carries every opened event under its protocol name, {min, med, max} of what the event
    counted per sample, not divided by per; each recorded sample bracketed by a pair of reads of its own, in
    the order the samples ran; the cases measured with the counters paused carry none."""
    rc, res = boot(tmp_path, "hosted", "bench=tsc,ctxsw,peers runs=3 reps=200 warmup=0",
                   "--hosted", str(built(FAKE_COUNTERS, "units")))
    assert rc == 0 and done(res)["status"] == "ok"
    ctr = counters_record(res)
    assert all(e["ok"] is True and "why" not in e for e in ctr["events"]) and ctr["scope"] == FAKE_SCOPE
    results = of_type(res, "result")
    assert {r["case"] for r in results if "counters" not in r} == PAUSED
    pairs: list[int] = []
    for r in (r for r in results if "counters" in r):
        assert list(r["counters"]) == EVENTS, r["case"]
        # each event's figures less its own step: the numbers of the sample's pairs, the same in every event
        numbers = [{k: v - (i + 1) * FAKE_EVENT_STEP for k, v in r["counters"][name].items()}
                   for i, name in enumerate(EVENTS)]
        assert all(n == numbers[0] for n in numbers) and list(numbers[0]) == ["min", "med", "max"], r
        lo, med, hi = numbers[0]["min"], numbers[0]["med"], numbers[0]["max"]
        # the pairs of one case are every m-th (the m cases of its set measured in turn, a sample of each a
        # round), n of them: med is the lower median of those numbers
        n = r["n"]
        assert n == 3 and (hi - lo) % (n - 1) == 0 and hi > lo, r
        step = (hi - lo) // (n - 1)
        assert med == lo + (n - 1) // 2 * step, r
        pairs += range(lo, hi + 1, step)
    # one pair of reads around every recorded sample of a case with counters open, none elsewhere
    assert sorted(pairs) == list(range(len(pairs)))
    machine = Machine.of(res["records"], res["run"])
    assert machine.counted == EVENTS and machine.counter_scope == FAKE_SCOPE


# --- caches (arch/cpu.c, shared with the kernel) ----------------------------------------------

CACHE_LEAVES = {"4", "2", "0x8000001d", "0x80000006", "0x80000005", "none"}


def sysfs_caches(cpu: int) -> set[tuple[int, str, int, int]] | None:
    """(level, type, size, ways) of every cache Linux lists for this CPU, or None."""
    base = Path(f"/sys/devices/system/cpu/cpu{cpu}/cache")
    found = set()
    for index in sorted(base.glob("index[0-9]*")):
        try:
            level = int((index / "level").read_text())
            kind = (index / "type").read_text().strip().lower()
            size = (index / "size").read_text().strip()
            ways = int((index / "ways_of_associativity").read_text())
        except (OSError, ValueError):
            return None
        units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
        found.add((level, kind, int(size[:-1]) * units[size[-1]] if size[-1] in units else int(size), ways))
    return found or None


def test_caches_come_from_the_cache_topology_leaf(tmp_path: Path) -> None:
    """AMD with TopologyExtensions: leaf 0x8000001D (0x80000006 may describe the
    host chip under a hypervisor and codes the L3's ways as "see 0x8000001D");
    Intel: leaf 4. What Linux itself lists, where it lists it."""
    rc, res = boot(tmp_path, "hosted", "bench=tsc runs=2")
    assert rc == 0
    cpu = of_type(res, "cpu")[0]
    assert cpu["cache_leaf"] in CACHE_LEAVES
    if cpu["vendor"] == "AuthenticAMD" and "topoext" in cpu["features"]:
        assert cpu["cache_leaf"] == "0x8000001d"
    if cpu["vendor"] == "GenuineIntel" and cpu["max_leaf"] >= 4:
        assert cpu["cache_leaf"] == "4"
    caches = cpu["caches"]
    assert caches and cpu["cache_leaf"] != "none"
    assert all(c["ways"] > 0 for c in caches), caches  # no real data or unified cache is fully associative
    listed = sysfs_caches(res["run"]["host_cpu"])
    if listed is not None:
        assert {(c["level"], c["type"], c["size"], c["ways"]) for c in caches} == listed


# --- the virtual-memory axis: pages=4k|2m|both (hosted/vmmode.c) ------------------------------

def workset_by_pages(res: dict[str, Any]) -> dict[tuple[str, int], list[dict[str, Any]]]:
    out: dict[tuple[str, int], list[dict[str, Any]]] = {}
    for r in of_type(res, "result"):
        if r["bench"] == "workset":
            out.setdefault((r["params"]["pages"], r["params"]["size"]), []).append(r)
    return out


def test_pages_both_measures_each_size_in_both_page_sizes(tmp_path: Path) -> None:
    sizes = [0, 4096, 3 << 20]
    rc, res = boot(tmp_path, "hosted", "bench=workset pages=both sizes=0,4K,3M reps=4 runs=2")
    assert rc == 0 and done(res)["status"] == "ok"
    by = workset_by_pages(res)
    skips = [s for s in of_type(res, "skip") if s["bench"] == "workset"]
    for size in sizes:
        small = by[("4k", size)]
        assert sorted(r["case"] for r in small) == ["multi", "single"]
        assert all(r["params"]["pages_got"] == "4k" for r in small)
        huge = by.get(("2m", size), [])
        # what the host gave: all or part of it in 2 MiB pages, or none, and then a skip saying why
        assert all(r["params"]["pages_got"] in ("2m", "mixed") for r in huge)
        assert len(huge) == 2 or any(s["why"].startswith("pages=2m: ") for s in skips)


PR_SET_THP_DISABLE, PR_GET_THP_DISABLE = 41, 42


def run_without_thp(tmp_path: Path, cmdline: str) -> tuple[str, dict[str, Any]]:
    """boot() with transparent huge pages off for the run's processes
    (prctl PR_SET_THP_DISABLE, inherited by the tool, taskset and the program);
    (the done record's status, the results.json the tool wrote)."""
    if ctypes.CDLL(None, use_errno=True).prctl(PR_GET_THP_DISABLE, 0, 0, 0, 0) < 0:
        pytest.skip("this machine's Linux has no PR_SET_THP_DISABLE (older than 3.15)")

    def no_thp() -> None:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0)
    out = tmp_path / "hosted"
    subprocess.run([*TOOL_CMD, "run", "--emulator", "hosted", "--cmdline", cmdline, "--out", str(out), "--quiet"],
                   capture_output=True, text=True, timeout=TOOL_SAFETY_NET_S, stdin=subprocess.DEVNULL,
                   preexec_fn=no_thp)
    doc = json.loads((out / "results.json").read_text())
    return next(r["status"] for r in doc["records"] if r["t"] == "done"), doc


def test_2m_not_given_is_a_skip_with_the_reason(tmp_path: Path) -> None:
    status, res = run_without_thp(tmp_path, "bench=workset pages=both sizes=4K,3M reps=4 runs=2")
    assert status == "ok"
    by = workset_by_pages(res)
    assert not any(pages == "2m" for pages, _ in by)
    assert all(len(by[("4k", size)]) == 2 for size in (4096, 3 << 20))
    whys = [s["why"] for s in of_type(res, "skip") if s["bench"] == "workset"]
    assert len(whys) == 4 and all(w.startswith("pages=2m: ") and "transparent huge pages" in w for w in whys)


def test_pages_2m_where_no_huge_page_can_exist_skips_the_benchmark(tmp_path: Path) -> None:
    status, res = run_without_thp(tmp_path, "bench=workset pages=2m sizes=4K reps=4 runs=2")
    assert status == "ok"
    assert not [r for r in of_type(res, "result") if r["bench"] == "workset"]
    assert any(s["why"].startswith("pages=2m: ") for s in of_type(res, "skip"))
