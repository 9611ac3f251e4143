"""Fibers and the Klimiankou replication, booted: the shapes the paper's
protocol must have (record counts, linearity, switch costs), checked under
-icount shift=0 where the TSC counts instructions and runs repeat exactly."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from booting import KERNEL, boot, done, of_type

pytestmark = pytest.mark.skipif(not KERNEL.exists(), reason="build/cleanroom.elf missing: run `make`")


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
        assert r["n"] == 3
    # every size, both scenarios, both paging modes
    assert len(ws) == len(sizes) * 2 * 2
    assert {r["params"]["paging"] for r in ws} == {"off", "on"}
    # reps scaled so each size costs about the same: fewer reps for bigger sizes
    reps = [by_size(res, "single")[s]["params"]["reps"] for s in sizes]
    assert reps == sorted(reps, reverse=True) and reps[-1] < reps[0]
    cases = {(r["case"], r["params"].get("n")) for r in results(res, "ctxsw")}
    assert cases == {("pushad", None), ("callee", None), ("fxsave", None),
                     ("rr", 2), ("rr", 4), ("rr", 8), ("rr", 16), ("rr", 64)}


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
    per_byte = {s: r["med"] / s for s, r in single.items()}
    lo, hi = min(per_byte.values()), max(per_byte.values())
    assert hi / lo < 1.05, f"single cycles per byte vary more than 5 %: {per_byte}"


def test_multi_minus_single_at_zero_is_the_switches(tmp_path: Path) -> None:
    rc, res = boot(tmp_path, "qemu-icount", "bench=ctxsw,workset paging=off sizes=0 reps=2000 runs=1")
    assert rc == 0
    pushad = next(r for r in results(res, "ctxsw") if r["case"] == "pushad")["med"]
    single, multi = by_size(res, "single")[0]["med"], by_size(res, "multi")[0]["med"]
    switches = 2 * 2000
    assert multi - single == pytest.approx(pushad * switches, rel=0.10)


def test_switch_costs_are_small_and_stable(tmp_path: Path) -> None:
    rc, res = boot(tmp_path, "qemu-icount", "bench=ctxsw paging=off runs=5")
    assert rc == 0
    cost = {r["case"]: r for r in results(res, "ctxsw") if r["case"] != "rr"}
    for r in cost.values():
        assert r["min"] == r["max"], "under icount every run costs the same"
    # instructions: pushad/popad are one each, callee pushes four registers, fxsave adds the image
    assert 0 < cost["pushad"]["med"] < cost["callee"]["med"] < cost["fxsave"]["med"] <= 40
    rr = [r for r in results(res, "ctxsw") if r["case"] == "rr"]
    assert all(r["med"] > cost["callee"]["med"] for r in rr), "the run queue costs more than a bare switch"


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
