"""`cleanroom compare A B`: the same cases side by side, ratios B/A, cases of one side listed."""

from __future__ import annotations

import csv
import sys
from pathlib import Path
from typing import Any

import pytest

from booting import tool_proc

sys.path.insert(0, str(Path(__file__).resolve().parent / "fixtures"))

import synth_workset  # noqa: E402

from cleanroom_host.records.protocol import parse_log  # noqa: E402


def read_csv(path: Path) -> list[dict[str, str]]:
    with path.open() as f:
        return list(csv.DictReader(f))


def results(log: bytes) -> list[dict[str, Any]]:
    return [r for r in parse_log(log).records if r["t"] == "result"]


@pytest.fixture
def two_runs(tmp_path: Path) -> tuple[Path, Path]:
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    (a / "serial.log").write_bytes(synth_workset.log(sizes=[0, 1024, 65536]))
    (b / "serial.log").write_bytes(synth_workset.log(sizes=[1024, 65536, 1048576], scale=2.0, switch="callee"))
    return a, b


def test_compare_matches_cases_and_lists_the_rest(two_runs: tuple[Path, Path]) -> None:
    a, b = two_runs
    p = tool_proc("compare", str(a), str(b))
    assert p.returncode == 0, p.stderr
    rows = read_csv(b / "compare.csv")  # default: B's results directory
    assert p.stdout.splitlines()[-1] == f"wrote {b / 'compare.csv'} and {b / 'compare-derived.csv'}"
    both = [r for r in rows if r["in"] == "both"]
    # ctxsw cases are the same on both sides; workset differs in switch= and in sizes
    assert {r["bench"] for r in both} == {"ctxsw"} and len(both) == 44  # 2 modes x (4 routines x 4 + 5 rr + loop)
    ra, rb = results((a / "serial.log").read_bytes()), results((b / "serial.log").read_bytes())
    for row in both:
        assert float(row["ratio_b_a"]) == pytest.approx(float(row["med_b"]) / float(row["med_a"]), rel=1e-5)
        assert row["n_a"] == row["n_b"] == "3"
    only_a = [r for r in rows if r["in"] == "a"]
    only_b = [r for r in rows if r["in"] == "b"]
    assert len(only_a) == sum(r["bench"] == "workset" for r in ra) == 12
    assert len(only_b) == sum(r["bench"] == "workset" for r in rb) == 12
    assert all(r["ratio_b_a"] == "" and r["med_b"] == "" for r in only_a)
    text = p.stdout
    assert "44 cases in both, 12 only in A, 12 only in B" in text
    assert "only in A (12)" in text and "only in B (12)" in text


def test_compare_ratios_of_a_scaled_run(tmp_path: Path) -> None:
    (tmp_path / "a.log").write_bytes(synth_workset.replicated())
    (tmp_path / "b.log").write_bytes(synth_workset.replicated(scale=3.0))
    out = tmp_path / "cmp"
    p = tool_proc("compare", str(tmp_path / "a.log"), str(tmp_path / "b.log"), "--out", str(out))
    assert p.returncode == 0, p.stderr
    rows = read_csv(out / "compare.csv")
    assert rows and all(r["in"] == "both" for r in rows)
    big = [r for r in rows if r["bench"] == "workset" and float(r["med_a"]) > 1000]
    assert big and all(float(r["ratio_b_a"]) == pytest.approx(3.0, rel=1e-3) for r in big)
    line = next(line for line in p.stdout.splitlines() if "size=524288" in line and " multi " in line
                and "paging=off" in line)
    # B/A with the band of both runs' samples: "3.00000 (2.99999..3.00001)"
    ratio, band = line.split()[-2:]
    assert float(ratio) == pytest.approx(3.0, abs=1e-4) and band.startswith("(") and ".." in band


def test_compare_real_run_with_itself(fixtures_dir: Path, tmp_path: Path) -> None:
    log = fixtures_dir / "qemu-quick-workset.log"
    p = tool_proc("compare", str(log), str(log), "--out", str(tmp_path))
    assert p.returncode == 0, p.stderr
    rows = read_csv(tmp_path / "compare.csv")
    assert len(rows) == len(results(log.read_bytes()))
    assert all(r["in"] == "both" and r["med_a"] == r["med_b"] for r in rows)
    assert all(r["ratio_b_a"] in ("1", "") for r in rows)  # "" where med is 0
    assert "0 only in A, 0 only in B" in p.stdout and "only in A (" not in p.stdout


def test_compare_missing_side(tmp_path: Path) -> None:
    p = tool_proc("compare", str(tmp_path / "nope"), str(tmp_path))
    assert p.returncode == 5 and "cleanroom compare:" in p.stderr


def test_compare_qemu_and_hosted_fixtures(fixtures_dir: Path, tmp_path: Path) -> None:
    """Two real runs that share no case (paging off/on vs host, other reps): every case listed once."""
    qemu, hosted = fixtures_dir / "qemu-quick-workset.log", fixtures_dir / "hosted-workset.log"
    p = tool_proc("compare", str(qemu), str(hosted), "--out", str(tmp_path))
    assert p.returncode == 0, p.stderr
    rows = read_csv(tmp_path / "compare.csv")
    na, nb = len(results(qemu.read_bytes())), len(results(hosted.read_bytes()))
    assert sum(r["in"] == "a" for r in rows) == na and sum(r["in"] == "b" for r in rows) == nb
    assert len(rows) == na + nb
    assert f"0 cases in both, {na} only in A, {nb} only in B" in p.stdout
