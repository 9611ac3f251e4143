"""Fibers and the Klimiankou replication, booted: the shapes the paper's
protocol must have (record counts, linearity, switch costs), checked under
-icount shift=0 where the TSC counts instructions and runs repeat exactly."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from booting import boot, done, of_type

pytestmark = pytest.mark.usefixtures("kernel_elf")


ROUTINES = ("pushad", "callee", "fxsave", "jump")  # enum switch_kind order
SHAPES = ("symmetric", "asymmetric")


def results(res: dict[str, Any], bench: str) -> list[dict[str, Any]]:
    return [r for r in of_type(res, "result") if r["bench"] == bench]


def by_size(res: dict[str, Any], case: str, paging: str = "off") -> dict[int, dict[str, Any]]:
    return {r["params"]["size"]: r for r in results(res, "workset")
            if r["case"] == case and r["params"]["paging"] == paging}


def test_quick_suite_shape(quick_icount: tuple[int, dict[str, Any]]) -> None:
    rc, res = quick_icount
    assert rc == 0 and done(res)["status"] == "ok"
    ws = results(res, "workset")
    sizes = sorted({r["params"]["size"] for r in ws})
    assert sizes[:8] == [0, 1, 2, 3, 4, 6, 8, 12] and sizes[-1] == 4 << 20
    for r in ws:
        assert set(r["params"]) >= {"size", "reps", "fill", "paging", "pagesize", "switch"}
        assert r["params"]["fill"] == "stos" and r["params"]["switch"] == "pushad"
        assert r["n"] == 2  # make run's runs=2 (the Makefile's CMDLINE)
    # every size, both scenarios, both paging modes
    assert len(ws) == len(sizes) * 2 * 2
    assert {r["params"]["paging"] for r in ws} == {"off", "on"}
    # reps scaled so each size costs about the same: fewer reps for bigger sizes
    reps = [by_size(res, "single")[s]["params"]["reps"] for s in sizes]
    assert reps == sorted(reps, reverse=True) and reps[-1] < reps[0]
    # every routine in both shapes with the loop measured beside each; the round robins and their loop
    ctxsw = [r for r in results(res, "ctxsw") if r["params"]["paging"] == "off"]
    cases = [(r["case"], r["params"]["switch"], r["params"]["shape"], r["params"].get("n")) for r in ctxsw]
    assert cases == [(case, routine, shape, None) for routine in ROUTINES
                     for case, shape in ((routine, "symmetric"), (routine, "asymmetric"),
                                         ("loop", "symmetric"), ("loop", "asymmetric"))] + \
        [("rr", "callee", "rr", n) for n in (2, 4, 8, 16, 64)] + [("loop", "callee", "rr", None)]
    assert all(r["per"] == r["params"]["switches"] for r in ctxsw)


def test_paging_modes_and_scenarios_are_measured_together(tmp_path: Path) -> None:
    """paging=both in one benchmark run: every size measures (off, on) x
    (single, multi) sample by sample in turn, and its records come out in
    that order, the raw samples of each one in run order."""
    rc, res = boot(tmp_path, "qemu-icount", "bench=workset paging=both sizes=0,4K,64K reps=10 runs=3 raw=1")
    assert rc == 0 and done(res)["status"] == "ok"
    rs = results(res, "workset")
    order = [(r["params"]["size"], r["params"]["paging"], r["case"]) for r in rs]
    assert order == [(s, p, c) for s in (0, 4096, 65536) for p in ("off", "on") for c in ("single", "multi")]
    for r in rs:
        assert len(r["samples"]) == r["n"] == 3 and all(isinstance(x, int) for x in r["samples"])
        assert r["min"] <= r["med"] <= r["max"]
    # one pass measured both modes: no skip, nothing again in the paging=on pass
    assert not [s for s in of_type(res, "skip") if s["bench"] == "workset"]
    # one benchmark run: progress counts its 12 cases once (a long set may repeat a count between rounds)
    dones = [p["done"] for p in of_type(res, "progress") if p["bench"] == "workset"]
    assert dones == sorted(dones) and sorted(set(dones)) == list(range(13))
    assert {p["total"] for p in of_type(res, "progress") if p["bench"] == "workset"} == {12}


def test_single_grows_linearly_with_size(tmp_path: Path) -> None:
    rc, res = boot(tmp_path, "qemu-icount", "bench=workset paging=off sizes=4K,8K,16K,64K,256K,1M,4M reps=8 runs=1")
    assert rc == 0
    single = by_size(res, "single")
    # a fixed cost per series (the calls around the loops) plus the same cost for every byte more
    sizes = sorted(single)
    per_byte = {b: (single[b]["med"] - single[a]["med"]) / (b - a) for a, b in zip(sizes, sizes[1:])}
    lo, hi = min(per_byte.values()), max(per_byte.values())
    assert hi / lo < 1.01, f"single cycles per further byte vary by more than 1 %: {per_byte}"
    assert single[sizes[0]]["med"] / sizes[0] < 1.1 * lo, "the fixed cost is small beside 4 KiB's"


def ctxsw_cost(res: dict[str, Any], routine: str, shape: str) -> tuple[int, int]:
    """(the routine's total per switch, its loop's per iteration) in one shape."""
    rs = [r for r in results(res, "ctxsw") if r["params"]["switch"] == routine and r["params"]["shape"] == shape]
    total = next(r for r in rs if r["case"] == routine)
    loop = next(r for r in rs if r["case"] == "loop")
    return total["med"], loop["med"]


# The fixed cost of one workset multi run over its single run, in instructions: entering fiber 0 through
# switch_callee and leaving it the same way, less the single run's two calls of the loop. jump pays one
# more: its first switch into the fresh second fiber takes the jmp path (the fiber's entry is not the
# address it was called from), one instruction longer than its ret path.
PAIR_ENTRY_EXIT = {"pushad": 26, "callee": 26, "fxsave": 26, "jump": 27}


@pytest.mark.parametrize("switch", ROUTINES)
def test_multi_minus_single_at_zero_is_the_switches(tmp_path: Path, switch: str) -> None:
    """workset at size 0 is ctxsw's symmetric pair with a refill of nothing as its work: multi - single
    is exactly the switches over their loop, ctxsw's symmetric case minus its loop, times the switches,
    plus the pair's entry and exit. Also: workset runs with every switch= routine."""
    rc, res = boot(tmp_path, "qemu-icount", f"bench=ctxsw,workset paging=off sizes=0 reps=2000 runs=1 switch={switch}")
    assert rc == 0 and done(res)["status"] == "ok"
    total, loop = ctxsw_cost(res, switch, "symmetric")
    single, multi = by_size(res, "single")[0], by_size(res, "multi")[0]
    assert single["params"]["switch"] == multi["params"]["switch"] == switch
    switches = 2 * 2000
    assert multi["med"] - single["med"] == (total - loop) * switches + PAIR_ENTRY_EXIT[switch]


def test_switch_costs_are_small_and_stable(tmp_path: Path) -> None:
    rc, res = boot(tmp_path, "qemu-icount", "bench=ctxsw paging=off runs=5")
    assert rc == 0
    for r in results(res, "ctxsw"):
        assert r["min"] == r["max"], "under icount every run costs the same"
    cost = {(routine, shape): ctxsw_cost(res, routine, shape) for routine in ROUTINES for shape in SHAPES}
    # Instructions per switch (the totals; nothing subtracted). Each loop iteration is 12: the loop's own 10
    # (sub, push, add, push, call work, mov ecx, call switch, add, cmp, jb) and the empty work function's
    # ret, plus the switch routine, whose `ret` the loop's empty function stands in for:
    #   pushad 17 = 12 + 5: pushad, 3 movs, popad (each one instruction);
    #   callee 23 = 12 + 11: 4 pushes, 3 movs, 4 pops;
    #   fxsave 30 = 12 + 18: callee's 11, and mov, sub, and, push (the image's aligned frame), fxsave,
    #     fxrstor, pop esp;
    #   jump symmetric 26 = 12 + 14: callee's 11, the own return address loaded, cmp, jne (not taken); ret;
    #   jump asymmetric 27 = 12 + 15: the same with jne taken, then pop and jmp instead of ret.
    # Symmetric or asymmetric makes no difference to the others: the shape changes where the switch is
    # called from, not what runs.
    assert cost == {("pushad", "symmetric"): (17, 12), ("pushad", "asymmetric"): (17, 12),
                    ("callee", "symmetric"): (23, 12), ("callee", "asymmetric"): (23, 12),
                    ("fxsave", "symmetric"): (30, 12), ("fxsave", "asymmetric"): (30, 12),
                    ("jump", "symmetric"): (26, 12), ("jump", "asymmetric"): (27, 12)}
    rr = [r for r in results(res, "ctxsw") if r["case"] == "rr"]
    [rr_loop] = [r for r in results(res, "ctxsw") if r["case"] == "loop" and r["params"]["shape"] == "rr"]
    # the round robin's loop: add, mov, call, cmp, jne and the empty function's ret per yield
    assert rr_loop["med"] == 6
    assert all(r["med"] > cost[("callee", "symmetric")][0] for r in rr), "the run queue costs more than a bare switch"


def test_buffers_that_do_not_fit_are_skipped(tmp_path: Path) -> None:
    rc, res = boot(tmp_path, "qemu", "bench=workset paging=off sizes=0,4K,8M,8K reps=2", "--memory", "16")
    assert rc == 0
    skips = [s for s in of_type(res, "skip") if s["bench"] == "workset"]
    assert {s["what"] for s in skips} == {"single", "multi"} and len(skips) == 2
    assert sorted(by_size(res, "single")) == [0, 4096, 8192], "the rest of the sweep still runs"


@pytest.mark.parametrize("fill", ["loop", "stos", "sse"])
def test_fill_kernels_and_switches(tmp_path: Path, fill: str) -> None:
    rc, res = boot(tmp_path, "qemu-icount", f"bench=workset paging=on pagesize=4m sizes=0,100,4K reps=4 runs=1 "
                                            f"fill={fill} switch=fxsave")
    assert rc == 0
    rs = results(res, "workset")
    assert len(rs) == 6
    assert all(r["params"]["fill"] == fill and r["params"]["switch"] == "fxsave" and r["params"]["paging"] == "on"
               and r["params"]["pagesize"] == "4m" for r in rs)


def test_sse_fill_is_skipped_without_sse(tmp_path: Path) -> None:
    rc, res = boot(tmp_path, "qemu", "bench=workset fill=sse sizes=4K", "--cpu", "pentium")
    assert rc == 0 and not results(res, "workset")
    assert any("SSE" in s["why"] for s in of_type(res, "skip"))


def test_pentium_saves_the_fpu_with_fnsave(tmp_path: Path) -> None:
    rc, res = boot(tmp_path, "qemu", "bench=ctxsw paging=off runs=2", "--cpu", "pentium")
    assert rc == 0
    fx = next(r for r in results(res, "ctxsw") if r["case"] == "fxsave")
    assert fx["params"]["save"] == "fnsave"
