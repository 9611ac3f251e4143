"""A run as several processes or boots (records/replicas.py), intervals over them (stats/interval.py), and
what that buys: two runs of one build agree (A/A), a planted slowdown of 10-20 % is found (A/B).

The A/A and A/B tests run the hosted build through `cleanroom ab`: the two sides' processes in turn,
compared pair by pair (_ab says why).
"""

from __future__ import annotations

import csv
import re
from pathlib import Path

import pytest

from booting import HOSTED, KERNEL, REPO, built, tool_main
from cleanroom_host.records import replicas
from cleanroom_host.reports import check
from cleanroom_host.records.protocol import encode_record, parse_log
from cleanroom_host.stats import ranks
from cleanroom_host.stats.interval import EXACT, ONE_RUN, REPLICA_PAIRS, REPLICA_SHIFT, REPLICAS, RESOLVED, Interval, verdict

HOSTED_LOG = REPO / "tests" / "fixtures" / "hosted-workset.log"
ICOUNT_LOG = REPO / "tests" / "fixtures" / "qemu-icount-quick-locks.log"
# A/A: at 95 % coverage noise alone calls ~5 % of cases different; one process a run called a third
# (docs/REPORT.md, Replicas)
AA_MOST = 0.10
# A/B: empty calls added to every switch of ctxsw's round robin (delay=): 2 add 10-20 % to the round
# robins of 4 and 8 fibers on the 2-vCPU guests. Two runs of five processes each found that in about half
# the pairs (the guests' speed moves between processes); `cleanroom ab`'s 20 pairs in turn resolved n=4
# in 9 of 10 and n=8 in 10 of 10 (docs/REPORT.md, Replicas) on an idle guest. Beside make test's other
# workers it is not idle: with four `yes` on the two vCPUs, 20 pairs missed the plant in 2 of 5 A/Bs (one read
# n=8 1.004), 40 pairs found all four in 8 of 8 (docs/REPORT.md); the test runs 40 and asks less (below)
PLANTED_DELAY = 2
PLANTED_PAIRS = 40
PLANTED_CASES = ("n=4 ", "n=8 ")  # compare.csv's params of the round robins the test asks for


def _scaled(log: bytes, factor: float) -> bytes:
    """The log with every result's samples (and their stats) times factor: another process's figures."""
    out = []
    for rec in parse_log(log).records:
        if rec.get("t") == "result" and isinstance(rec.get("samples"), list):
            rec = dict(rec, samples=[round(v * factor) for v in rec["samples"]])
            for key in ("min", "med", "max", "mean"):
                rec[key] = round(rec[key] * factor)
        out.append(encode_record(rec))
    return b"".join(out)


def test_boots_of_one_command_line_are_one_set_with_each_boots_figures() -> None:
    log = HOSTED_LOG.read_bytes()
    sets = replicas.parse_sets(log + _scaled(log, 1.25) + _scaled(log, 0.8))
    assert len(sets) == 1 and sets[0].replicas == 3 and sets[0].complete
    one = parse_log(log)
    results = [r for r in sets[0].records if r.get("t") == "result"]
    assert len(results) == len(one.of_type("result"))
    for merged, alone in zip(results, one.of_type("result")):
        assert merged["level"] == replicas.LEVEL_PROCESS and len(merged["replicas"]) == 3
        assert merged["replicas"][0]["med"] == alone["med"]
        if "samples" in alone:
            assert merged["samples"][:len(alone["samples"])] == alone["samples"]
            assert merged["replica"] == [k for k in (1, 2, 3) for _ in alone["samples"]]
        assert merged["n"] == 3 * alone["n"]
    assert "3 processes x" in replicas.describe(sets[0].records)


def test_boots_of_different_command_lines_or_a_failed_boot_stay_apart() -> None:
    hosted, icount = HOSTED_LOG.read_bytes(), ICOUNT_LOG.read_bytes()
    assert [s.replicas for s in replicas.parse_sets(hosted + icount)] == [1, 1]
    cut = hosted[:hosted.index(b'@cr1 {"t":"done"')]  # a boot that never ended
    sets = replicas.parse_sets(hosted + cut + hosted + hosted)
    assert [s.replicas for s in sets] == [1, 1, 2] and [s.boot for s in sets] == [1, 2, 3]


def _record(samples: list[int], replica: list[int] | None, clock: str = replicas.CLOCK_REAL) -> dict:
    rec = {"t": "result", "bench": "b", "case": "c", "n": len(samples), "samples": samples,
           "med": sorted(samples)[len(samples) // 2],
           "min": min(samples), "max": max(samples), "clock": clock}
    if replica is not None:
        rec["replica"] = replica
        rec["replicas"] = [{"n": replica.count(k)} for k in sorted(set(replica))]
    return rec


def test_the_interval_is_built_over_the_processes_not_their_rounds() -> None:
    # three processes, each steady to the tick, each at its own level: the rounds alone say 20 exactly
    samples = [10, 10, 10, 20, 20, 20, 30, 30, 30, 20, 20, 20, 21, 21, 21]
    v = Interval.of(_record(samples, [k for k in range(1, 6) for _ in range(3)]))
    assert (v.method, v.reps, v.mid, v.lo, v.hi) == (REPLICAS, 5, 20, 10, 30)
    assert v.within == 0  # the second figure: inside a process nothing moved
    one = Interval.of(_record([20, 20, 20], None))
    assert verdict(one) == ONE_RUN and verdict(one.compared()) == ONE_RUN  # never exact on a real clock
    assert verdict(Interval.of(_record([20, 20, 20], None, replicas.CLOCK_EXACT))) == EXACT


def test_two_runs_compare_over_their_processes_and_one_process_is_never_a_finding() -> None:
    a = Interval.of(_record([10, 10, 11, 11, 12, 12, 10, 10, 11, 11], [1, 1, 2, 2, 3, 3, 4, 4, 5, 5]))
    b = Interval.of(_record([20, 20, 21, 21, 22, 22, 20, 20, 21, 21], [1, 1, 2, 2, 3, 3, 4, 4, 5, 5]))
    ratio = b.ratio(a).compared()
    assert ratio.method == REPLICA_SHIFT and verdict(ratio, 1.0) == RESOLVED
    lone_a, lone_b = Interval.of(_record([10] * 8, None)), Interval.of(_record([31] * 8, None))
    assert verdict(lone_b.ratio(lone_a).compared(), 1.0) == ONE_RUN  # was "exact" (1.550 between two runs)


def test_two_sets_run_in_turn_pair_process_by_process() -> None:
    # the machine's speed moves from pair to pair (10, 20, 30 ...); B is 10 % slower in every pair
    levels = [10, 20, 30, 15, 25, 12, 22, 18, 28, 11]
    groups = [k for k in range(1, 11) for _ in range(2)]
    a_rec = _record([v for v in levels for _ in range(2)], groups)
    b_rec = _record([round(v * 1.1, 1) for v in levels for _ in range(2)], groups)
    apart = Interval.of(b_rec).ratio(Interval.of(a_rec)).compared()
    assert apart.method == REPLICA_SHIFT and verdict(apart, 1.0) != RESOLVED  # the speed drowns it
    for rec in (a_rec, b_rec):
        replicas.stamp_turns([rec], "t1")
    paired = Interval.of(b_rec).ratio(Interval.of(a_rec)).compared()
    assert paired.method == REPLICA_PAIRS and paired.reps == 10
    assert paired.mid == pytest.approx(1.1) and verdict(paired, 1.0) == RESOLVED
    assert (Interval.of(b_rec) - Interval.of(a_rec)).method == REPLICA_PAIRS
    other = dict(b_rec, turns="t2")  # another A/B's set: never paired with this one
    assert Interval.of(other).ratio(Interval.of(a_rec)).method == REPLICA_SHIFT


def test_the_signed_rank_interval_has_its_exact_coverage() -> None:
    # n = 10: k = 9 of the 55 Walsh averages (the tables' critical value 8), 1 - 2 x 21 / 1024
    assert ranks.signed_rank_rank(10) == 9 and ranks.signed_rank_coverage(10, 9) == pytest.approx(0.95117, abs=1e-5)
    assert ranks.signed_rank_coverage(5, 1) == pytest.approx(1 - 2 / 32)  # five pairs: the whole range
    r = ranks.paired_shift_interval([float(v) for v in range(1, 11)])
    assert (r.est, r.lo, r.hi) == (5.5, 3.0, 8.0)
    assert ranks.paired_ratio_interval([1.0, 2.0], [1.0]) is None  # pairs need both sides


def test_paired_quantities_take_each_process_median_of_its_rounds() -> None:
    groups = [1, 1, 2, 2, 3, 3, 4, 4, 5, 5]
    multi = Interval.of(_record([12, 12, 24, 24, 36, 36, 12, 12, 24, 24], groups), pair="set")
    single = Interval.of(_record([10, 10, 20, 20, 30, 30, 10, 10, 20, 20], groups), pair="set")
    rel = multi.rel(single)  # +20 % in every process, though the processes differ 3x
    assert rel.reps == 5 and rel.lo == pytest.approx(20.0) and rel.hi == pytest.approx(20.0)


AA_PAIRS = 10  # the A/A's pairs: fewer than ab's default, enough for its share


def _ab(tmp: Path, cmdlines: tuple[str, str], *more: str) -> list[dict[str, str]]:
    """`cleanroom ab` of the hosted build: the two command lines' processes in turn, compared pair by
    pair; compare.csv's rows. Two runs made one after the other on these guests differ as wholes now
    and then (the guest's speed moves over seconds and from process to process: docs/REPORT.md,
    Replicas), which no interval within a run can see; in turn, each pair sees one state of it."""
    out = tmp / "ab"
    rc, stdout, stderr = tool_main("ab", "--emulator", "hosted", "--hosted", str(built(HOSTED, "hosted")),
                                   "--cmdline", cmdlines[0], "--b-cmdline", cmdlines[1], "--out", str(out),
                                   "--quiet", *more)
    assert rc == 0, stderr
    assert "pairs of processes (boots) run in turn" in " ".join(stdout.split())
    with (out / "compare" / "compare.csv").open(newline="") as fh:
        return list(csv.DictReader(fh))


def test_two_runs_of_one_build_agree(tmp_path: Path) -> None:
    rows = _ab(tmp_path, ("bench=ctxsw", "bench=ctxsw"), "--boots", str(AA_PAIRS))
    sets = replicas.parse_sets((tmp_path / "ab" / "a" / "serial.log").read_bytes())
    assert len(sets) == 1 and sets[0].replicas == AA_PAIRS
    different = {f"{r['case']} {r['params']}": r["verdict"] for r in rows if r["verdict"] in ("resolved", "exact")}
    assert "exact" not in different.values(), different
    assert len(different) <= AA_MOST * len(rows), (f"{len(different)} of {len(rows)} cases of two runs of one "
                                                   f"build called different: {different}")
    # the gate passes it: nothing resolved slower beyond its threshold (reports/check.py)
    rc, out, err = tool_main("check", str(tmp_path / "ab"))
    assert rc == 0 and "check: ok: none of" in out, out + err


@pytest.mark.early
def test_a_planted_slowdown_of_ten_to_twenty_percent_is_found(tmp_path: Path) -> None:
    rows = [r for r in _ab(tmp_path, ("bench=ctxsw", f"bench=ctxsw delay={PLANTED_DELAY}"), "--boots", str(PLANTED_PAIRS))
            if r["case"] == "rr" and r["params"].startswith(PLANTED_CASES)]
    with (tmp_path / "ab" / "compare" / "compare-derived.csv").open(newline="") as fh:
        switch = [r for r in csv.DictReader(fh) if r["key"].startswith(tuple(f"rr rr {n}" for n in PLANTED_CASES))]
    seen = [(r["params"], r["ratio_b_a"], r["ratio_min"], r["ratio_max"], r["verdict"]) for r in rows]
    seen += [(r["key"], r["b_minus_a"], r["b_minus_a_min"], r["b_minus_a_max"], r["change"]) for r in switch]
    # B slower in both round robins and their switches alone, and beyond the pairs' noise (the interval
    # excludes 1, or 0) in one of the four at least. On an idle guest each of the four was resolved in 9 or
    # 10 of 10 A/Bs of 20 pairs (docs/REPORT.md): a test cannot ask 9 in 10 of one A/B, and beside the rest
    # of make test (other workers' QEMUs taking the CPU mid-pair: samples 300 times their median) 20 pairs
    # missed all four once (2026-11-29), which is why it runs 40
    assert len(rows) == 2 and len(switch) == 2, seen
    assert all(float(r["ratio_b_a"]) > 1 for r in rows) and all(float(r["b_minus_a"]) > 0 for r in switch), seen
    assert any(float(r["ratio_min"]) > 1 for r in rows) or any(float(r["b_minus_a_min"]) > 0 for r in switch), seen
    # the gate fails it, naming round robins only (the plant is in their switches): idle, with one and with two
    # `yes` on the vCPUs it failed 15 A/Bs of 15 at 20 pairs, naming 1-5 round robins at B/A 1.07-1.19 (docs/REPORT.md,
    # `check BASELINE RUN`)
    rc, out, err = tool_main("check", str(tmp_path / "ab" / "a"), str(tmp_path / "ab" / "b"))
    assert rc == check.EXIT_MOVED, out + err
    slower = out.split("slower beyond the threshold", 1)[1].split("check: FAIL", 1)[0]
    named = re.findall(r"^  (ctxsw \w+) ", slower, re.M)
    assert named and set(named) == {"ctxsw rr"}, out


def test_an_ab_of_the_kernel_under_icount_is_one_boot_a_side_and_exact(tmp_path: Path) -> None:
    # instruction counts repeat to the tick: one boot a side, and the plant is exactly what it added
    out = tmp_path / "ab"
    rc, stdout, stderr = tool_main("ab", "--emulator", "qemu-icount", "--kernel", str(built(KERNEL, "all")),
                                   "--cmdline", "bench=ctxsw reps=500", "--b-cmdline",
                                   f"bench=ctxsw reps=500 delay={PLANTED_DELAY}", "--out", str(out), "--quiet")
    assert rc == 0, stderr
    with (out / "compare" / "compare.csv").open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert rows and all(r["verdict"] == "exact" for r in rows)
    assert all((float(r["ratio_b_a"]) > 1) == (r["case"] == "rr") for r in rows), rows
    assert '"order": "AB"' in (out / "a" / "results.json").read_text()


def test_compare_paired_needs_two_sets_of_as_many_processes(tmp_path: Path) -> None:
    log = HOSTED_LOG.read_bytes()
    three, two = tmp_path / "three.log", tmp_path / "two.log"
    three.write_bytes(log + _scaled(log, 1.1) + _scaled(log, 0.9))
    two.write_bytes(log + _scaled(log, 1.1))
    rc, _out, err = tool_main("compare", str(three), str(two), "--paired", "--out", str(tmp_path / "c"))
    assert rc == 5 and "A has 3 processs, B 2" not in err and "A has 3 processes, B 2" in err, err
    rc, out, err = tool_main("compare", str(three), str(three), "--paired", "--out", str(tmp_path / "c"))
    assert rc == 0 and "pairs of processes (boots) run in turn" in " ".join(out.split()), err


def test_an_ab_whose_first_boot_fails_keeps_it_and_runs_no_b(tmp_path: Path) -> None:
    """A rejected command line: A's first process says why (its records stay in a/), B is never run, and
    ab exits with the kernel's status, as run would."""
    out = tmp_path / "ab"
    rc, _stdout, stderr = tool_main("ab", "--emulator", "hosted", "--hosted", str(built(HOSTED, "hosted")),
                                    "--cmdline", "bench=nope", "--out", str(out), "--quiet")
    assert rc == 2 and "B was not run" in stderr, stderr
    assert '"token":"bench=nope"' in (out / "a" / "serial.log").read_text() and not (out / "b").exists()
