"""Locks and thread life cycle, booted and hosted: record shapes and the
papers' qualitative findings where the clean room must reproduce them (that
two -icount boots repeat, byte for byte: tests/test_exact.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from booting import boot, of_type
from cleanroom_host.records.protocol import parse_log

pytestmark = pytest.mark.usefixtures("kernel_elf")

ICOUNT_LOCKS = "bench=locks,create paging=off reps=2000 runs=2"


def results(res: dict[str, Any], bench: str) -> list[dict[str, Any]]:
    return [r for r in of_type(res, "result") if r["bench"] == bench]


def key(r: dict[str, Any]) -> tuple:
    return (r["bench"], r["case"], tuple(sorted((k, v) for k, v in r["params"].items() if k != "switches")))


@pytest.fixture(scope="module")
def icount_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    rc, res = boot(tmp_path_factory.mktemp("locks"), "qemu-icount", ICOUNT_LOCKS)
    assert rc == 0
    return res


def test_locks_and_create_cases(icount_run: dict[str, Any]) -> None:
    locks = results(icount_run, "locks")
    names = {r["case"] for r in locks}
    assert names == {"tas", "ttas", "ticket", "tas_pause", "ttas_pause", "ticket_pause", "mutex", "spinblock", "sem",
                     "contended", "valchanov", "litethreads", "condvar", "barrier"}
    contended = {(r["params"]["k"], r["params"]["lock"]) for r in locks if r["case"] == "contended"}
    assert contended == {(k, lock) for k in (2, 4, 8, 16) for lock in ("mutex", "spinblock", "sem")}
    assert all(r["params"]["switches"] > 0 for r in locks if r["case"] == "contended")
    lite = {(r["params"]["lock_loops"], r["params"]["unlock_loops"]) for r in locks if r["case"] == "litethreads"}
    assert lite == {(100, 200), (0, 0), (0, 200), (100, 0), (1000, 0), (1000, 2000)}
    assert {r["params"]["n"] for r in locks if r["case"] == "barrier"} == {2, 8, 32}
    create = {(r["case"], r["params"]["outstanding"]) for r in results(icount_run, "create")}
    assert create == {(c, n) for c in ("pool", "firstfit") for n in (1, 16, 256, 1024)}


def test_tas_costs_fewer_instructions_than_the_mutex(icount_run: dict[str, Any]) -> None:
    by_case = {r["case"]: r["med"] for r in results(icount_run, "locks") if r["params"].keys() >= {"reps"}}
    assert 0 < by_case["tas"] < by_case["mutex"]


def test_litethreads_time_linear_in_unlock_spin_not_lock_spin(icount_run: dict[str, Any]) -> None:
    """The report's finding on one CPU: user time grows linearly with the
    unlock spin and does not depend on the lock spin."""
    lite = {(r["params"]["lock_loops"], r["params"]["unlock_loops"]): r["med"]
            for r in results(icount_run, "locks") if r["case"] == "litethreads"}
    assert lite[(0, 0)] == lite[(100, 0)] == lite[(1000, 0)]
    assert lite[(0, 200)] == lite[(100, 200)]
    slope_200 = lite[(0, 200)] - lite[(0, 0)]
    slope_2000 = lite[(1000, 2000)] - lite[(1000, 0)]
    assert slope_200 > 0 and slope_2000 == pytest.approx(10 * slope_200, rel=0.02)


def test_pool_is_constant_time_firstfit_is_not(icount_run: dict[str, Any]) -> None:
    create = {(r["case"], r["params"]["outstanding"]): r["med"] for r in results(icount_run, "create")}
    pool = [create[("pool", n)] for n in (16, 256, 1024)]
    assert max(pool) / min(pool) < 1.2
    assert create[("firstfit", 1024)] > 1.5 * create[("pool", 1024)]


@pytest.mark.usefixtures("hosted_elf")
def test_hosted_peers_emits_every_case(tmp_path: Path) -> None:
    rc, res = boot(tmp_path, "hosted", "bench=peers reps=2000 runs=3")
    assert rc == 0
    cases = {r["case"] for r in results(res, "peers")} | {s["what"] for s in of_type(res, "skip")}
    assert {"switch_fiber", "switch_ucontext", "pingpong_fiber", "pingpong_pthread_1cpu", "pingpong_pthread_2cpu",
            "create_fiber", "create_pthread", "lock_tas", "lock_ttas", "lock_ticket", "lock_mutex",
            "lock_spinblock", "lock_pthread_mutex", "lock_pthread_spin"} <= cases
    # a live run: its shape, never its times (the order of two of them: the recorded run below)
    for r in results(res, "peers"):
        assert r["n"] == len(r["samples"]) == 3 and r["min"] <= r["med"] <= r["max"], r


def test_recorded_swapcontext_is_dearer_than_a_fiber_switch(fixtures_dir: Path) -> None:
    """A system call per switch (swapcontext saves the signal mask) cannot beat a register swap: on the
    hosted run recorded in tests/fixtures/hosted-quick-locks.log, never on a live one."""
    recs = parse_log((fixtures_dir / "hosted-quick-locks.log").read_bytes()).records
    by = {r["case"]: r["med"] for r in recs if r.get("t") == "result" and r["bench"] == "peers"}
    assert by["switch_ucontext"] > by["switch_fiber"] > 0


def test_kernel_rejects_the_hosted_only_benchmark(tmp_path: Path) -> None:
    rc, res = boot(tmp_path, "qemu", "bench=peers")
    assert rc == 2
    err = of_type(res, "error")[0]
    assert err["token"] == "bench=peers" and "locks" in err["accepted"]
