"""The quantities of Klimiankou 2018, Figures 3-8 (tools/cleanroom_host/reports/derive.py),
checked against a computation written here from the records' medians."""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "fixtures"))

import synth_workset  # noqa: E402

from cleanroom_host.reports import derive  # noqa: E402
from cleanroom_host.reports.derive import Interval  # noqa: E402
from cleanroom_host.stats.interval import NOISE, cell, verdict  # noqa: E402
from cleanroom_host.reports.paper import Cache, cache_position, comparison, emulated  # noqa: E402
from cleanroom_host.records.protocol import encode_record, parse_log  # noqa: E402


def medians(records: list[dict[str, Any]]) -> dict[tuple[str, str, int], dict[str, int]]:
    """(case, paging, size) -> {med, min, max, reps} of the workset records."""
    out = {}
    for r in records:
        if r.get("t") == "result" and r.get("bench") == "workset":
            p = r["params"]
            out[(r["case"], p["paging"], p["size"])] = {"med": r["med"], "min": r["min"], "max": r["max"],
                                                       "reps": p["reps"]}
    return out


def rows_by(rows: list[derive.Row]) -> dict[tuple[str, str, int], derive.Row]:
    return {(r.quantity, r.paging, r.size): r for r in rows}


def test_every_quantity_matches_the_formulas() -> None:
    recs = synth_workset.records(runs=3, reps=10)
    m = medians(recs)
    series, rows = derive.derive(recs)
    assert [s.name for s in series] == ["fill=stos switch=pushad"]
    got = rows_by(rows)
    for size in synth_workset.SIZES:
        s_off, m_off = m[("single", "off", size)]["med"], m[("multi", "off", size)]["med"]
        s_on, m_on = m[("single", "on", size)]["med"], m[("multi", "on", size)]["med"]
        ovh_off, ovh_on = m_off - s_off, m_on - s_on
        expect = {
            ("conc_abs", "off"): ovh_off,
            ("conc_abs", "on/4k"): ovh_on,
            ("conc_per_quantum", "off"): ovh_off / 20,
            ("conc_rel", "off"): 100 * ovh_off / s_off,
            ("conc_rel", "on/4k"): 100 * ovh_on / s_on,
            ("vm_on_conc", "on/4k-off"): 100 * (ovh_on - ovh_off) / ovh_off,
            ("vm_abs_single", "on/4k-off"): s_on - s_off,
            ("vm_abs_multi", "on/4k-off"): m_on - m_off,
            ("vm_rel_single", "on/4k-off"): 100 * (s_on - s_off) / s_off,
            ("vm_rel_multi", "on/4k-off"): 100 * (m_on - m_off) / m_off,
            ("conc_on_vm", "on/4k-off"): 100 * ((m_on - m_off) - (s_on - s_off)) / (s_on - s_off),
        }
        for (q, paging), value in expect.items():
            assert got[(q, paging, size)].value.mid == pytest.approx(value), (q, paging, size)


def test_bands_are_interval_arithmetic_over_min_and_max() -> None:
    recs = synth_workset.records(runs=3, reps=10)
    m = medians(recs)
    got = rows_by(derive.derive(recs)[1])
    size = 524288
    single, multi = m[("single", "off", size)], m[("multi", "off", size)]
    band = got[("conc_abs", "off", size)].value
    assert (band.lo, band.hi) == (multi["min"] - single["max"], multi["max"] - single["min"])
    rel = got[("conc_rel", "off", size)].value
    assert rel.lo == pytest.approx(100 * (multi["min"] / single["max"] - 1))
    assert rel.hi == pytest.approx(100 * (multi["max"] / single["min"] - 1))
    assert rel.lo <= rel.mid <= rel.hi


def test_peak_is_at_the_l2_size_as_in_the_paper() -> None:
    recs = synth_workset.records()
    rows = derive.derive(recs)[1]
    for paging in ("off", "on/4k"):
        peak = derive.extreme(derive.pick(rows, "conc_rel", paging=paging), "max")
        assert peak is not None and peak.size == synth_workset.L2
    text = "\n".join(comparison(rows, recs[1]))
    assert "peak relative concurrency overhead, paging off:" in text and "at 512K per buffer, = L2 size" in text
    assert "352 % at 512K (= L2)" in text and "-7.5 % at 3M" in text and "+44 % at 1.5K" in text


def test_division_by_zero_gives_nan_never_an_exception() -> None:
    def res(case: str, paging: str, med: int) -> dict[str, Any]:
        return {"t": "result", "bench": "workset", "case": case, "n": 3, "min": med, "med": med, "max": med,
                "params": {"size": 0, "reps": 5, "fill": "stos", "paging": paging, "pagesize": "4k",
                           "switch": "pushad"}}
    recs = [res("single", "off", 0), res("multi", "off", 0), res("single", "on", 0), res("multi", "on", 7)]
    got = rows_by(derive.derive(recs)[1])
    assert math.isnan(got[("conc_rel", "off", 0)].value.mid)  # single = 0
    assert math.isnan(got[("vm_on_conc", "on/4k-off", 0)].value.mid)  # overhead off = 0
    assert math.isnan(got[("conc_on_vm", "on/4k-off", 0)].value.mid)  # VM overhead single = 0
    assert got[("conc_abs", "on/4k", 0)].value.mid == 7


def test_ratio_band_is_unbounded_when_the_denominator_band_holds_zero() -> None:
    """A denominator that may be 0 lets the ratio be anything: the band is unbounded (it was dropped
    before, which hid the point's uncertainty), so the value is inside the noise."""
    r = Interval(10, 5, 15).ratio(Interval(2, -1, 4))
    assert r.mid == 5 and (r.lo, r.hi) == (-math.inf, math.inf)
    assert verdict(r) == NOISE and cell(r) == "~0 (unbounded)"
    r = Interval(10, 5, 15).ratio(Interval(2, 1, 4))
    assert (r.lo, r.mid, r.hi) == (1.25, 5, 15)


def test_relative_band_enters_the_base_once() -> None:
    """(multi - single) / single as multi / single - 1: the band is the exact range the extremes
    allow, not the wider one of subtracting and dividing by single separately."""
    multi, single = Interval(100, 95, 105), Interval(100, 90, 110)
    rel = multi.rel(single)
    assert rel.lo == pytest.approx(100 * (95 / 110 - 1)) and rel.hi == pytest.approx(100 * (105 / 90 - 1))
    wide = (multi - single).ratio(single).scale(100)
    assert wide.lo < rel.lo  # the old way: -15 / 90


def test_reps_scaled_per_size_stays_one_series() -> None:
    """The quick suite picks reps per size: still one curve, per-quantum uses each point's reps."""
    recs = synth_workset.records(reps=10)
    for r in recs:
        if r.get("t") == "result" and r.get("bench") == "workset":
            r["params"]["reps"] = max(1, 4096 // max(r["params"]["size"], 1))
    series, rows = derive.derive(recs)
    assert len(series) == 1 and series[0].fixed_reps() is None
    got = rows_by(rows)
    m = medians(recs)
    size = 65536
    reps = m[("single", "off", size)]["reps"]
    assert got[("conc_per_quantum", "off", size)].value.mid == pytest.approx(
        (m[("multi", "off", size)]["med"] - m[("single", "off", size)]["med"]) / (2 * reps))


def test_cache_position_words() -> None:
    caches = [Cache("L1d", 32768), Cache("L2", 524288)]
    assert cache_position(524288, caches) == "= L2 size"
    assert cache_position(262144, caches) == "both buffers = L2 size"
    assert cache_position(65536, caches) == "between L1d (32K) and L2 (512K)"
    assert cache_position(4 << 20, caches) == "above L2 (512K)"
    assert cache_position(1024, caches) == "below L1d (32K)"


def test_emulator_note() -> None:
    qemu = parse_log(synth_workset.log(hypervisor="TCGTCGTCGTCG", cpu_platform="qemu")).records
    note = emulated(qemu)
    assert note is not None and "emulators model no caches, so no cache effect is expected" in note
    assert emulated(parse_log(synth_workset.log()).records) is None
    hosted = parse_log(synth_workset.log(platform="hosted")).records
    assert "hosted" in (emulated(hosted) or "")


def test_ctxsw_points() -> None:
    recs = synth_workset.records(runs=3)
    pts = derive.collect_ctxsw(recs)
    assert {p.case for p in pts} == {"pushad", "callee", "fxsave", "jump", "rr", "loop"}
    assert sorted(p.n for p in pts if p.case == "rr" and p.mode == "off") == [2, 4, 8, 16, 64]
    assert {p.mode for p in pts} == {"off", "on/4k"}
    # every routine and round robin with the loop measured beside it; the switch alone is the difference
    costs = derive.switch_costs(pts)
    assert len(costs) == 2 * (4 * 2 + 5)
    jump = next(c for c in costs if c.variant == "jump" and c.shape == "asymmetric" and c.mode == "off")
    assert (jump.total.mid, jump.loop.mid, jump.alone.mid) == (34, 12, 22)
    assert (jump.alone.lo, jump.alone.hi) == (34 - 2 - 14, 34 + 2 - 10)  # interval arithmetic: both spreads
    rr = next(c for c in costs if c.variant == "rr" and c.n == 64 and c.mode == "off")
    assert (rr.total.mid, rr.loop.mid, rr.alone.mid) == (51, 6, 45)


def test_ctxsw_of_a_log_before_the_shapes() -> None:
    """An older ctxsw record (no params.shape) was already the switch minus its loop: the switch alone,
    with no total and no loop to show."""
    recs = [{"t": "result", "bench": "ctxsw", "case": "callee", "params": {"switch": "callee", "reps": 10000,
                                                                           "paging": "off"},
             "n": 3, "min": 12, "med": 13, "max": 13, "per": 20000}]
    [c] = derive.switch_costs(derive.collect_ctxsw(recs))
    assert c.shape == "" and c.alone.mid == 13 and not c.total.ok and not c.loop.ok


def test_synthetic_log_frames_verify() -> None:
    """The synthetic logs go through the real parser: complete, nothing corrupt."""
    res = parse_log(synth_workset.log())
    assert res.complete and not res.damaged and res.status == "ok"
    assert encode_record({"t": "x", "seq": 0}).startswith(b"@cr1 {")
