"""Comparing machines in time, not in ticks of two clocks (tools/cleanroom_host/reports/clocks.py).

The 16-CPU Intel guest's smplocks (TSC 2.1 GHz, docs/data/16cpu-intel-2026-11-27) against the 2-vCPU AMD
EPYC guest's (TSC 2.596 GHz, tests/fixtures/hosted-smplocks-2cpu.log): every TSC-timed figure is taken
in nanoseconds, each set's ticks over its own rate, and the key names both clocks. Without one set's
rate its ticks are a unit of their own, never divided. Two runs of one machine compare in ticks, as
they always did. Every expectation is worked out here from the records' own medians and rates."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

from booting import REPO, tool_main

from cleanroom_host.reports import clocks, compare
from cleanroom_host.records.results import load

INTEL = REPO / "docs" / "data" / "16cpu-intel-2026-11-27" / "smplocks-cpus16.log"
EPYC = REPO / "tests" / "fixtures" / "hosted-smplocks-2cpu.log"
SAME_A = REPO / "tests" / "fixtures" / "hosted-falseshare-reps20000.log"  # one machine, one evening
SAME_B = REPO / "tests" / "fixtures" / "hosted-falseshare-reps200000.log"


def first(path: Path, t: str) -> dict[str, Any]:
    return next(r for r in load(path).records if r.get("t") == t)


def tas_alone(path: Path) -> dict[str, Any]:
    return next(r for r in load(path).records if r.get("t") == "result" and r["case"] == "contended"
                and r["params"]["lock"] == "tas" and r["params"]["cpus"] == 1)


def rows(out: Path) -> list[dict[str, str]]:
    with (out / compare.COMPARE_CSV).open(newline="") as f:
        return list(csv.DictReader(f))


def tas_row(out: Path) -> dict[str, str]:
    return next(r for r in rows(out) if r["case"] == "contended" and r["params"].startswith("lock=tas cpus=1 "))


def test_two_clocks_compare_in_nanoseconds(tmp_path: Path) -> None:
    rc, stdout, stderr = tool_main("compare", str(EPYC), str(INTEL), "--out", str(tmp_path))
    assert rc == 0, stderr
    flat = " ".join(stdout.split())
    hz_a, hz_b = first(EPYC, "tsc")["hz"], first(INTEL, "tsc")["hz"]
    # the key names each machine and its clock
    assert f"TSC {hz_a / 1e9:.3f} GHz (clock_monotonic_raw" in flat and "AMD EPYC, hosted" in flat
    assert f"TSC {hz_b / 1e9:.3f} GHz (clock_monotonic_raw" in flat and "Intel(R) Xeon(R) Processor, hosted" in flat
    assert "in time: the sets' TSCs run at different rates" in flat
    # uncontended tas: B/A in time is (med_B / hz_B) / (med_A / hz_A), within the ratio's interval; in
    # ticks it would be med_B / med_A, outside it (the rates differ by 24 %)
    a, b = tas_alone(EPYC), tas_alone(INTEL)
    in_time = (b["med"] / hz_b) / (a["med"] / hz_a)
    row = tas_row(tmp_path)
    lo, hi = float(row["ratio_min"]), float(row["ratio_max"])
    assert row["unit"] == clocks.NS and lo <= in_time <= hi, (row, in_time)
    assert not lo <= b["med"] / a["med"] <= hi
    # compare.csv keeps the ticks beside the nanoseconds
    assert float(row["ticks_med_a"]) == a["med"] and float(row["ticks_med_b"]) == b["med"]
    assert abs(float(row["med_a"]) - a["med"] * 1e9 / hz_a) < 1e-6 * a["med"] * 1e9 / hz_a


def test_a_set_without_its_rate_keeps_ticks_of_its_own(tmp_path: Path) -> None:
    doc = json.loads(json.dumps(load(INTEL).doc))
    for r in doc["records"]:
        if r.get("t") == "tsc":
            r["hz"] = 0
    unknown = tmp_path / "intel-no-rate.json"
    unknown.write_text(json.dumps(doc))
    out = tmp_path / "out"
    rc, stdout, stderr = tool_main("compare", str(EPYC), str(unknown), str(SAME_A), "--out", str(out))
    assert rc == 0, stderr
    flat = " ".join(stdout.split())
    assert "TSC rate unknown" in flat and "TSC ticks of B: its rate is unknown, never divided" in flat
    got = [r for r in rows(out) if r["case"] == "contended" and r["params"].startswith("lock=tas cpus=1 ")]
    b = next(r for r in got if r["set"] == "B")
    assert b["unit"] == "TSC ticks of B" and b["verdict"] == compare.UNITS_DIFFER and b["ratio_ref"] == ""
    assert float(b["med"]) == tas_alone(INTEL)["med"]  # undivided


def test_one_machine_compares_in_ticks_as_before(tmp_path: Path) -> None:
    """Two runs of one clock: no conversion, the medians the records' own ticks, compare.csv's columns
    as they always were."""
    rc, stdout, stderr = tool_main("compare", str(SAME_A), str(SAME_B), "--out", str(tmp_path))
    assert rc == 0, stderr
    assert "in time:" not in stdout and "(TSC ticks)" in stdout
    with (tmp_path / compare.COMPARE_CSV).open(newline="") as f:
        assert next(csv.reader(f)) == compare.CSV_HEADER
    meds = {(r["case"], r["params"]): float(r["med_a"]) for r in rows(tmp_path) if r["med_a"]}
    recs = compare.keyed(load(SAME_A).records)
    assert meds and all(any(float(rec["med"]) == v for rec in recs.values() if rec["case"] == case)
                        for (case, _params), v in meds.items())


def test_outcomes_do_not_split_a_case() -> None:
    """A case's checks, re-runs and CPUs (compare.OUTCOME_PARAMS) say what happened in its run: two runs
    of the case match whatever they say, the 2-vCPU and the 16-CPU runs included (their uncontended
    locks, recorded by builds a day apart with different outcome params)."""
    a, b = compare.keyed(load(EPYC).records), compare.keyed(load(INTEL).records)
    shared = set(a) & set(b)
    assert {k for k in shared if k[1] == "contended" and '"cpus":1' in k[2]}
    ka = next(k for k, r in a.items() if r is tas_alone(EPYC) or r == tas_alone(EPYC))
    assert ka in b and set(tas_alone(EPYC)["params"]) != set(tas_alone(INTEL)["params"])
