"""Intervals with a stated coverage (tools/cleanroom_host/stats/ranks.py, interval.py; docs/REPORT.md):
the exact coverage of each method, a simulation from skewed and heavy-tailed distributions that every
interval covers the truth at its stated rate, the kernel's rank table, the recorded hosted fixture whose
consistent effect one outlier hid, exact intervals under qemu-icount, and runs=auto (kernel and hosted)."""

from __future__ import annotations

import math
import random
import re
import statistics
from pathlib import Path
from typing import Any, Callable

import pytest

from booting import boot, tool_proc

from cleanroom_host.reports import compare, derive, smplocks as smplockreport, smp as smpreport
from cleanroom_host.machines import defaults
from cleanroom_host.stats import ranks
from cleanroom_host.reports.context import Run
from cleanroom_host.stats.interval import ARITH, EXACT, MEDIAN, NOISE, ONE_RUN, PAIRED, RESOLVED, SHIFT, UNRESOLVED, Interval, legend, runs_to_resolve, verdict
from cleanroom_host.reports.paper import tally
from cleanroom_host.records.results import load

REPO = Path(__file__).resolve().parent.parent
OUTLIER = REPO / "tests" / "fixtures" / "hosted-workset-outlier.log"


# --- the coverage of each method, exactly --------------------------------------------------------

def test_order_statistic_coverage_is_the_binomial_one() -> None:
    """The issue's facts: [x(k), x(n+1-k)] covers the median with 1 - 2 P(Bin(n, 1/2) < k)."""
    assert ranks.sign_coverage(3, 1) == 0.75
    assert round(ranks.sign_coverage(5, 1), 3) == 0.938
    assert ranks.sign_coverage(7, 2) == 0.875 and round(ranks.sign_coverage(7, 1), 3) == 0.984
    assert round(ranks.sign_coverage(9, 2), 3) == 0.961 and round(ranks.sign_coverage(11, 3), 3) == 0.935
    # k for 95 % where n allows, else the best n allows (3 runs cannot reach 90 %)
    assert [ranks.sign_rank(n) for n in (3, 5, 7, 9, 11)] == [1, 1, 1, 2, 2]
    assert all(ranks.sign_coverage(n, ranks.sign_rank(n)) >= 0.95 for n in range(6, 200))


def test_mann_whitney_coverage() -> None:
    """[D(k), D(mn+1-k)] of the pairwise differences covers the shift with 1 - 2 P(U < k)."""
    assert round(ranks.shift_coverage(5, 5, 3), 3) == 0.968
    assert round(ranks.shift_coverage(7, 7, 9), 3) == 0.962
    assert round(ranks.shift_coverage(9, 9, 19), 3) == 0.950 and ranks.shift_coverage(9, 9, 19) < 0.95
    assert round(ranks.shift_coverage(11, 11, 31), 3) == 0.953
    assert [ranks.shift_rank(n, n) for n in (5, 7, 9, 11)] == [3, 9, 18, 31]
    # U's distribution sums to all orderings, and is symmetric
    counts = ranks._mw_counts(4, 6)
    assert sum(counts) == math.comb(10, 4) and counts == counts[::-1]


def test_the_kernels_rank_table_is_the_hosts() -> None:
    """lib/stats.c's precomputed ranks (runs=auto decides with them) are ranks.sign_rank's."""
    text = (REPO / "lib" / "stats.c").read_text()
    body = re.search(r"rank95\[STATS_RANKS\] = \{([^}]*)\}", text)
    assert body is not None
    table = [int(x) for x in body.group(1).replace("\n", " ").split(",") if x.strip()]
    assert table == [ranks.sign_rank(n) for n in range(1, len(table) + 1)] and len(table) == 64


# --- simulation: every interval covers at its stated rate ----------------------------------------

SIGMA = 0.3
OUTLIER_SCALE = 5.0
DRAWS = 2000


def lognormal(rng: random.Random) -> float:
    return rng.lognormvariate(0.0, SIGMA)


def mixture(rng: random.Random) -> float:
    """90 % log-normal, 10 % outliers five times as large: heavy-tailed and skewed."""
    x = rng.lognormvariate(0.0, SIGMA)
    return x * OUTLIER_SCALE if rng.random() < 0.1 else x


def mixture_median() -> float:
    """The true median of `mixture`: F(x) = 0.9 Phi(ln x / s) + 0.1 Phi(ln(x / 5) / s) = 1/2."""
    phi = statistics.NormalDist().cdf
    lo, hi = 0.1, 10.0
    for _ in range(100):
        mid = (lo + hi) / 2
        f = 0.9 * phi(math.log(mid) / SIGMA) + 0.1 * phi(math.log(mid / OUTLIER_SCALE) / SIGMA)
        lo, hi = (mid, hi) if f < 0.5 else (lo, mid)
    return (lo + hi) / 2


DISTS: dict[str, tuple[Callable[[random.Random], float], float]] = {
    "lognormal": (lognormal, 1.0), "mixture": (mixture, mixture_median())}


def rec(samples: list[float]) -> dict[str, Any]:
    """A result record as the kernel writes it (lower median), with its samples."""
    return {"n": len(samples), "med": sorted(samples)[(len(samples) - 1) // 2], "samples": samples}


def covered(draw: Callable[[random.Random], tuple[Interval, float]], seed: int) -> tuple[float, float, str]:
    """(share of DRAWS intervals that held the truth, their stated coverage, their method)."""
    rng = random.Random(seed)
    hits, stated, methods = 0, set(), set()
    for _ in range(DRAWS):
        v, truth = draw(rng)
        hits += v.lo <= truth <= v.hi
        stated.add(round(v.coverage, 12))
        methods.add(v.method)
    assert len(stated) == 1 and len(methods) == 1, (stated, methods)
    return hits / DRAWS, stated.pop(), methods.pop()


@pytest.mark.parametrize("n", (3, 5, 7, 9, 11))
@pytest.mark.parametrize("dist", sorted(DISTS))
def test_simulated_coverage(n: int, dist: str) -> None:
    """2 000 draws per n from a log-normal and from a mixture with 10 % outliers: the median's
    interval, the paired difference and ratio of series measured in turn (each round disturbed by a
    drift both share), and the unpaired shift and ratio (Hodges-Lehmann / Mann-Whitney) each cover the
    true value at least at their stated rate minus 2 points."""
    gen, true_median = DISTS[dist]
    shift, factor = 0.7, 1.2

    def median_of(rng: random.Random) -> tuple[Interval, float]:
        return Interval.of(rec([gen(rng) for _ in range(n)])), true_median

    def paired_difference(rng: random.Random) -> tuple[Interval, float]:
        drift = [rng.uniform(0.5, 3.0) for _ in range(n)]  # the machine, shared by a round's cases
        single = [d * 10.0 for d in drift]
        multi = [s + shift + (gen(rng) - true_median) for s in single]  # per-round difference: median `shift`
        return Interval.of(rec(multi), "set") - Interval.of(rec(single), "set"), shift

    def paired_percent(rng: random.Random) -> tuple[Interval, float]:
        single = [rng.uniform(0.5, 3.0) * 1e6 for _ in range(n)]
        multi = [s * factor * gen(rng) / true_median for s in single]  # per-round ratio: median `factor`
        return Interval.of(rec(multi), "set").rel(Interval.of(rec(single), "set")), 100 * (factor - 1)

    def unpaired_shift(rng: random.Random) -> tuple[Interval, float]:
        a, b = [gen(rng) + shift for _ in range(n)], [gen(rng) for _ in range(n)]
        return Interval.of(rec(a)) - Interval.of(rec(b)), shift

    def unpaired_ratio(rng: random.Random) -> tuple[Interval, float]:
        a, b = [gen(rng) * factor for _ in range(n)], [gen(rng) for _ in range(n)]
        return Interval.of(rec(a)).ratio(Interval.of(rec(b))), factor

    cases = {"median": (median_of, MEDIAN), "paired difference": (paired_difference, PAIRED),
             "paired percentage": (paired_percent, PAIRED), "unpaired shift": (unpaired_shift, SHIFT),
             "unpaired ratio": (unpaired_ratio, SHIFT)}
    for i, (what, (draw, method)) in enumerate(cases.items()):
        rate, stated, got = covered(draw, seed=1000 * n + 10 * i + len(dist))
        assert got == method, what
        assert rate >= stated - 0.02, f"{what}, n={n}, {dist}: covered {rate:.3f}, stated {stated:.3f}"


def test_interval_arithmetic_states_a_bonferroni_coverage() -> None:
    """Records without samples: min..max (k = 1) and its combinations, whose coverage is at least
    1 - the sum of what each input misses."""
    a = Interval.of({"n": 5, "med": 110, "min": 100, "max": 130})
    b = Interval.of({"n": 5, "med": 50, "min": 40, "max": 70})
    assert (a.lo, a.hi, a.method, a.coverage) == (100, 130, MEDIAN, ranks.sign_coverage(5, 1))
    d = a - b
    assert (d.mid, d.lo, d.hi, d.method) == (60, 30, 90, ARITH)
    assert d.coverage == pytest.approx(1 - 2 * (1 - 0.9375))


# --- verdicts ----------------------------------------------------------------------------------------

def test_an_outlier_away_from_the_null_widens_without_hiding() -> None:
    """Resolved keeps its meaning for a symmetric interval (narrower than the value's distance from
    the null); an interval made lopsided by one far run is resolved when its side toward the null is
    short; one that reaches most of the way toward the null is not."""
    assert verdict(Interval(20, 15, 25)) == RESOLVED and verdict(Interval(20, 5, 35)) == UNRESOLVED
    assert verdict(Interval(20, 18, 80)) == RESOLVED  # 4 runs near 20, one far above
    assert verdict(Interval(20, 1, 22)) == UNRESOLVED  # reaches nearly to the null
    assert verdict(Interval(-20, -80, -18)) == RESOLVED and verdict(Interval(20, -1, 22)) == NOISE
    assert verdict(Interval(3.0, 2.9, 9.0), 1.0) == RESOLVED


def test_not_resolved_says_how_many_runs_would_resolve_it() -> None:
    v = Interval.of_rounds([2, 3, 5, 9, 14])  # median 5, 93.8 % interval 2..14: wider than 5
    assert verdict(v) == UNRESOLVED
    more = runs_to_resolve(v)
    assert more is not None and more > 5
    # with that many runs of the same spread the interval, narrowing as 1/sqrt(n), would do
    assert (v.width * math.sqrt(5 / more) <= abs(v.mid)
            or 2 * (v.mid - v.lo) * math.sqrt(5 / more) <= abs(v.mid))
    assert runs_to_resolve(Interval.of_rounds([5, 5.1, 5.2, 5.3, 5.4])) is None  # resolved already


# --- the recorded hosted fixture ------------------------------------------------------------------------

def outlier_rows() -> dict[str, derive.Row]:
    rows = derive.derive(load(OUTLIER).records)[1]
    return {r.quantity: r for r in rows if r.size == 2 << 20}


def test_hosted_outlier_fixture_a_consistent_effect_is_a_finding() -> None:
    """A recorded hosted run (5 runs): at 2 MiB per buffer the rounds' multi / single are +22, +19,
    +19, +26 and +9 %, and round 4 ran about 20 % faster in both cases. The old bands (min..max of each
    case by interval arithmetic) overlapped: not a finding. Paired round by round, the drift cancels:
    a finding at 93.8 % coverage."""
    recs = load(OUTLIER).records
    single, multi = (next(r for r in recs if r.get("t") == "result" and r["params"]["size"] == 2 << 20
                          and r["case"] == c) for c in ("single", "multi"))
    per_round = [100 * (m - s) / s for s, m in zip(single["samples"], multi["samples"])]
    assert sorted(round(x) for x in per_round) == [9, 19, 19, 22, 26]
    assert multi["min"] < single["max"]  # the two cases' ranges overlap
    old = (Interval.of({k: v for k, v in multi.items() if k != "samples"})
           .rel(Interval.of({k: v for k, v in single.items() if k != "samples"})))
    assert verdict(old) not in (RESOLVED, EXACT)
    rel = outlier_rows()["conc_rel"].value
    assert verdict(rel) == RESOLVED and rel.method == PAIRED and round(rel.coverage, 3) == 0.938
    assert 18 < rel.mid < 21 and 8 < rel.lo < 10 and rel.hi == pytest.approx(max(per_round))
    assert verdict(outlier_rows()["conc_abs"].value) == RESOLVED


def test_the_legend_and_the_tally_name_method_and_coverage() -> None:
    rows = derive.derive(load(OUTLIER).records)[1]
    text = legend(r.value for r in rows)
    assert "93.8 % (paired by round (sign test), 5 runs)" in text
    counts = tally([r for r in rows if r.quantity == "conc_rel"])
    assert counts.coverage == pytest.approx(ranks.sign_coverage(5, 1)) and counts.rate == pytest.approx(1 / 16)
    if counts.findings > counts.exact and counts.chance_limit > 1:
        assert "at 93.8 % coverage" in counts.text()


def test_compare_uses_the_unpaired_interval(tmp_path: Path) -> None:
    """Two runs are never paired: compare's B/A of a case and B - A of a derived value are
    Hodges-Lehmann / Mann-Whitney intervals of the two runs' samples; a run against itself agrees."""
    a = load(OUTLIER)
    pairs = compare.pair_up(a, a)
    bands = [p.band for p in pairs if p.where == "both"]
    assert bands and all(b.method == SHIFT and b.lo <= 1.0 <= b.hi for b in bands)
    assert all(round(b.coverage, 3) == 0.968 for b in bands)  # 5 and 5 runs, k = 3
    derived = compare.pair_derived(a, a)
    paired_ones = [p for p in derived if p.a is not None and p.a.method == PAIRED]
    # one process each: the interval is the rounds', and no difference of two such runs is a finding
    assert paired_ones and all(p.change.method == SHIFT and p.verdict == ONE_RUN for p in paired_ones)


# --- the multi-CPU reports: cases of one set pair up --------------------------------------------------

def smp_result(bench: str, case: str, samples: list[int], **params: Any) -> dict[str, Any]:
    """A multi-CPU result record as the hosted build writes it: a whole run per sample (per 1)."""
    return {"t": "result", "bench": bench, "case": case, "params": {**params, "paging": "host"}, "unit": "cycles",
            "per": 1, **rec(samples)}


def test_multi_cpu_ratios_pair_the_cases_of_one_set() -> None:
    """falseshare measures packed and padded in turn (one set per op and k), aslock both spaces: a round
    the machine slowed slows both, so their ratio is paired by round and resolves a 3x that the unpaired
    interval of the same samples leaves wide; cases of different sets (another k) compare unpaired."""
    drift = [1.0, 2.6, 1.1, 0.6, 1.9, 1.2, 3.0]  # the machine, round by round
    wobble = [1.0, 1.02, 0.97, 1.01, 0.99, 1.03, 0.98]
    padded = [round(1000 * d) for d in drift]
    packed = [round(3000 * d * w) for d, w in zip(drift, wobble)]
    fs = dict(op="atomic", reps=10, line=64)
    records = [smp_result("falseshare", "packed", packed, cpus=2, stride=4, **fs),
               smp_result("falseshare", "padded", padded, cpus=2, stride=64, **fs),
               smp_result("falseshare", "padded", padded[::-1], cpus=1, stride=64, **fs)]
    rows = {r.k: r for r in smpreport.share_rows(records)}
    paired = rows[2].slowdown
    assert paired.method == PAIRED and verdict(paired, 1.0) == RESOLVED and 2.9 < paired.lo < paired.hi < 3.1
    unpaired = Interval.of(rec(packed)).ratio(Interval.of(rec(padded)))
    assert unpaired.method == SHIFT and unpaired.width > 10 * paired.width
    assert rows[2].padded is not None and rows[1].padded is not None
    assert rows[2].padded.ratio(rows[1].padded).method == SHIFT  # k=2 against k=1: two sets

    spaces = [smp_result("aslock", "map_unmap", s, space=space, cpus=2, pages=4, reps=10, lock="rw")
              for space, s in (("shared", packed), ("isolated", padded))]
    run = Run.of(spaces, {})
    g = smplockreport.grid(smplockreport.points_of(run, smplockreport.ASLOCK), "map_unmap", "space",
                           smplockreport.SPACES)
    ratio = smplockreport.as_ratio(g, 2)
    assert ratio.method == PAIRED and verdict(ratio, 1.0) == RESOLVED


# --- qemu-icount: exact --------------------------------------------------------------------------------

def test_icount_records_carry_samples_and_every_interval_is_exact(quick_icount: tuple[int, dict[str, Any]]) -> None:
    """The quick suite under qemu-icount (make run's two runs a case): every result carries its samples in run
    order, and every derived value is exact (zero width), paired or not."""
    rc, res = quick_icount
    assert rc == 0
    results = [r for r in res["records"] if r.get("t") == "result"]
    assert results and all(len(r["samples"]) == r["n"] and "converged" not in r for r in results)
    _series, rows = derive.derive(results)
    assert rows and all(verdict(r.value) == EXACT for r in rows if r.value.ok)
    costs = derive.switch_costs(derive.collect_ctxsw(results))
    assert costs and all(verdict(c.alone) == EXACT and c.alone.method == PAIRED for c in costs)


# --- runs=auto ----------------------------------------------------------------------------------------

def test_runs_auto_under_icount_converges_at_the_first_decision(tmp_path: Path) -> None:
    """Identical samples: every set's key quantity has zero width after the first 5 rounds."""
    rc, res = boot(tmp_path, "qemu-icount", "bench=workset,ctxsw runs=auto paging=off sizes=0,4K reps=4")
    assert rc == 0
    results = [r for r in res["records"] if r.get("t") == "result"]
    assert results and all(r["n"] == 5 and r["converged"] is True for r in results)
    cfg = next(r for r in res["records"] if r.get("t") == "config")["cfg"]
    header = defaults.load()
    assert (cfg["runs"] == "auto" and cfg["precision"] == header.number("CR_DEF_AUTO_PRECISION_BP")
            and cfg["budget"] == header.number("CR_DEF_QUICK_BUDGET_KERNEL"))


def test_runs_auto_hosted_prints_the_runs_of_every_case(tmp_path: Path) -> None:
    """`run --emulator hosted --cmdline "bench=workset runs=auto"` says per case how many runs it took
    and whether it converged; the records agree; a budget in rounds is never exceeded."""
    out = tmp_path / "auto"
    proc = tool_proc("run", "--emulator", "hosted", "--cmdline",
                     "bench=workset runs=auto sizes=0,64K reps=16 budget=7 precision=100", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    results = [r for r in load(out).records if r.get("t") == "result"]
    assert len(results) == 4
    for r in results:
        assert 5 <= r["n"] <= 7 and len(r["samples"]) == r["n"] and isinstance(r["converged"], bool)
        word = "converged" if r["converged"] else "budget spent"
        line = f"workset {r['case']} size={r['params']['size']}"
        assert any(line in ln and f"{r['n']} runs, {word}" in ln for ln in proc.stdout.splitlines()), proc.stdout
    # a set's cases took the same rounds
    for size in (0, 65536):
        assert len({r["n"] for r in results if r["params"]["size"] == size}) == 1
    assert "runs=auto:" in proc.stdout



def test_a_suites_own_runs_auto_is_one_line(tmp_path: Path) -> None:
    """The hosted quick suite is on runs=auto without being asked (make run: hundreds of cases):
    `run` says how many runs the cases took in one line and where each case's are, no line a case."""
    out = tmp_path / "quick"
    proc = tool_proc("run", "--emulator", "hosted", "--cmdline", "suite=quick bench=tsc", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    results = [r for r in load(out).records if r.get("t") == "result"]
    assert results and all("converged" in r for r in results)
    assert not [ln for ln in proc.stdout.splitlines() if ln.endswith(("converged", "budget spent"))], proc.stdout
    [line] = [ln for ln in proc.stdout.splitlines() if ln.startswith("runs=auto:")]
    assert f"of {len(results)} converged" in line and "results.csv" in line


def test_a_changed_copy_is_what_dataclasses_replace_makes() -> None:
    """interval._with copies an Interval's fields and nothing else: it stays right while the class has no
    __post_init__ and keeps no value of its own beside its fields (a cached property would be copied stale)."""
    from dataclasses import fields, replace

    from cleanroom_host.stats import interval

    v = Interval.of({"n": 5, "med": 3, "samples": [1, 2, 3, 4, 5]}, pair="set")
    assert not hasattr(Interval, "__post_init__")
    assert set(vars(v)) == {f.name for f in fields(Interval)}
    for changes in ({"mid": 7.0}, {"lo": 0.0, "hi": 9.0, "rounds": None}, {"across": True, "turns": "t"}):
        assert interval._with(v, **changes) == replace(v, **changes)
        assert vars(interval._with(v, **changes)) == vars(replace(v, **changes))
    assert v.shift(1.0).mid == 4.0 and v.mid == 3.0  # the original is left as it was
