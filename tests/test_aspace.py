"""Threads in address spaces of their own (bench aspace, the uthread
self-tests), booted: every case with its parameters, the orderings the
model must show in instruction counts under -icount (where the TSC counts
instructions), exact repeatability, thread faults that stop one thread and
not the run, old CPUs without sysenter or global pages."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from booting import boot, done, of_type, shared_boot

pytestmark = pytest.mark.usefixtures("kernel_elf")

ICOUNT = "bench=workset,aspace paging=on sizes=0,4K,64K reps=300 runs=2"
REPS = 300
SIZES = (0, 4096, 65536)
CASES = {
    "switch_fiber", "switch_thread", "switch_thread_samecr3", "tlb_refill", "invlpg", "cr3_reload", "pf_roundtrip",
    "syscall_int80", "syscall_sysenter", "create_fiber", "create_thread", "twin", "commit", "commit_single_writer",
    "mutex_fiber", "mutex_fiber_contended", "mutex_thread_uncontended", "mutex_thread_contended", "malloc_subheap",
    "malloc_shared_lock", "map_unmap", "demand_fault", "workset_threads",
}


def results(res: dict[str, Any], bench: str = "aspace") -> list[dict[str, Any]]:
    return [r for r in of_type(res, "result") if r["bench"] == bench]


def med(res: dict[str, Any], case: str, bench: str = "aspace", **params: Any) -> int:
    found = [r["med"] for r in results(res, bench)
             if r["case"] == case and all(r["params"].get(k) == v for k, v in params.items())]
    assert len(found) == 1, (case, params, found)
    return found[0]


@pytest.fixture(scope="module")
def icount_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    rc, res = boot(tmp_path_factory.mktemp("aspace"), "qemu-icount", ICOUNT)
    assert rc == 0 and done(res)["status"] == "ok"
    return res


def test_every_case_with_its_parameters(icount_run: dict[str, Any]) -> None:
    rs = results(icount_run)
    assert {r["case"] for r in rs} == CASES
    assert all(r["params"]["paging"] == "on" and r["params"]["pagesize"] == "4k" for r in rs)
    tlb = {(r["params"]["pages"], r["params"]["region"], r["params"]["pge"]) for r in rs if r["case"] == "tlb_refill"}
    assert tlb == {(p, region, g) for p in (1, 8, 64, 512) for region in ("4k", "4m") for g in ("on", "off")}
    for case in ("switch_thread", "switch_thread_samecr3"):
        assert {(r["params"]["pge"], r["params"]["entry"]) for r in rs if r["case"] == case} == {
            ("on", "sysenter"), ("off", "sysenter")}
    assert {r["params"]["dirty"] for r in rs if r["case"] == "commit"} == {0, 1, 10, 100}
    assert {r["params"]["ring"] for r in rs if r["case"] == "pf_roundtrip"} == {0, 3}
    assert {(r["case"], r["params"]["space"]) for r in rs if "space" in r["params"]} == {
        (c, s) for c in ("map_unmap", "demand_fault") for s in ("shared", "isolated")}
    assert sorted(r["params"]["size"] for r in rs if r["case"] == "workset_threads") == list(SIZES)
    assert not of_type(icount_run, "thread_fault") and not of_type(icount_run, "error")
    # the paging=on pass alone: no skip of the benchmark as a whole
    assert not [s for s in of_type(icount_run, "skip") if s["bench"] == "aspace"]


@pytest.mark.early
def test_quick_suite_keeps_every_kind_at_four_sizes(quick_icount: tuple[int, dict[str, Any]]) -> None:
    """suite=quick: every case, but workset_threads at one size per region of
    the sweep (the full sweep is suite=paper's, or sizes=)."""
    rc, res = quick_icount
    assert rc == 0
    rs = results(res)
    assert {r["case"] for r in rs} == CASES
    assert sorted(r["params"]["size"] for r in rs if r["case"] == "workset_threads") == [0, 4096, 65536, 1 << 20]


def test_a_thread_with_its_own_address_space_costs_more(icount_run: dict[str, Any]) -> None:
    """Instruction counts: a system call and a CR3 load per switch, a directory per create."""
    r = icount_run
    fiber = med(r, "switch_fiber")
    for pge in ("on", "off"):
        assert med(r, "switch_thread", pge=pge) > med(r, "switch_thread_samecr3", pge=pge) > fiber
    assert med(r, "create_thread") > 10 * med(r, "create_fiber")
    assert med(r, "mutex_thread_contended") > med(r, "mutex_fiber_contended") > med(r, "mutex_fiber")
    # the futex fast path never enters the kernel: no dearer than the fiber mutex by much, far below blocking
    assert med(r, "mutex_thread_uncontended") < 2 * med(r, "mutex_fiber")
    assert 5 * med(r, "mutex_thread_uncontended") < med(r, "mutex_thread_contended")
    assert med(r, "malloc_shared_lock") > med(r, "malloc_subheap")
    assert med(r, "pf_roundtrip", ring=3) > med(r, "pf_roundtrip", ring=0)
    assert med(r, "syscall_int80") > 0 and med(r, "syscall_sysenter") > 0


def test_commit_cost_follows_the_dirty_words_and_the_fast_path_skips_the_diff(icount_run: dict[str, Any]) -> None:
    commit = [med(icount_run, "commit", dirty=d) for d in (0, 1, 10, 100)]
    assert commit == sorted(commit) and commit[-1] > commit[0]
    assert med(icount_run, "commit_single_writer") < commit[0]
    # a twin is two page copies; a diff reads two pages and compares every word
    assert med(icount_run, "twin") < commit[0]


def test_address_space_lock_traffic(icount_run: dict[str, Any]) -> None:
    for case in ("map_unmap", "demand_fault"):
        by = {r["params"]["space"]: r["params"] for r in results(icount_run) if r["case"] == case}
        assert by["shared"]["locks"] == 1 and by["isolated"]["locks"] == 2
        assert by["shared"]["lock_max"] == 2 * by["isolated"]["lock_max"] > 0


def test_workset_threads_pay_the_address_space_switch(icount_run: dict[str, Any]) -> None:
    """Beside the fibers' multi at the same size and reps: the extra per switch
    is about a thread switch (the system call, the scheduler, the CR3 load)."""
    switch = med(icount_run, "switch_thread", pge="on")
    for size in SIZES:
        threads = med(icount_run, "workset_threads", size=size, reps=REPS)
        multi = med(icount_run, "multi", bench="workset", size=size, reps=REPS)
        extra = (threads - multi) / (2 * REPS)
        assert 0.5 * switch < extra < 1.2 * switch, (size, extra, switch)


def test_icount_aspace_records_repeat_exactly(icount_run: dict[str, Any], tmp_path: Path) -> None:
    rc, again = boot(tmp_path, "qemu-icount", ICOUNT)
    assert rc == 0
    assert results(icount_run) and results(icount_run) == results(again)
    assert all(r["min"] == r["max"] for r in results(icount_run)), "under icount every run costs the same"


def test_thread_faults_stop_the_thread_not_the_run(boots_root: Path) -> None:
    rc, res = shared_boot(boots_root, "qemu", "suite=selftest")  # test_boot.py's self-test boot
    assert rc == 0 and done(res)["status"] == "ok"
    faults = of_type(res, "thread_fault")
    assert [(f["vector"], f["name"]) for f in faults] == [(14, "page_fault")] * 3 + [(13, "general_protection")]
    assert all(f["bench"] == "selftest" and f["what"] == "uthread_faults" for f in faults)
    causes = [f["cause"] for f in faults]
    assert "kernel memory" in causes[0] and "kernel memory" in causes[1] and "read-only" in causes[2]
    assert faults[0]["err"] & 7 == 7 and faults[1]["err"] & 7 == 5  # user write / user read of a present page
    assert faults[0]["cr2"] == faults[1]["cr2"] < 0xf0000000 <= faults[2]["cr2"]
    assert not of_type(res, "fault")
    tests = {t["name"]: t for t in of_type(res, "test")}
    assert tests["uthread_faults"]["ok"] and "a fifth thread ran on" in tests["uthread_faults"]["detail"]


def test_a_pentium_has_neither_sysenter_nor_global_pages(tmp_path: Path) -> None:
    rc, res = boot(tmp_path, "qemu", "bench=aspace paging=on sizes=0 reps=50 runs=1", "--cpu", "pentium")
    assert rc == 0 and done(res)["status"] == "ok"
    skips = {(s["what"], s["why"]) for s in of_type(res, "skip") if s["bench"] == "aspace"}
    assert ("syscall_sysenter", "this CPU has no sysenter (SEP)") in skips
    assert any(what == "switch_thread" and "PGE" in why for what, why in skips)
    rs = results(res)
    threads = [r for r in rs if "entry" in r["params"]]
    assert threads and all(r["params"]["entry"] == "int80" for r in threads)
    assert all(r["params"].get("pge", "off") == "off" for r in rs)
    assert {"switch_fiber", "switch_thread", "create_thread", "commit", "workset_threads"} <= {r["case"] for r in rs}


def test_paging_off_given_skips_it_with_the_reason(tmp_path: Path) -> None:
    rc, res = boot(tmp_path, "qemu", "bench=aspace paging=off")
    assert rc == 0 and not results(res)
    skip = [s for s in of_type(res, "skip") if s["bench"] == "aspace"]
    assert len(skip) == 1 and "paging=off was given" in skip[0]["why"]
