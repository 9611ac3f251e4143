"""A measured value with the interval it lies in at a stated coverage, and what that interval allows one
to say.

Every number the report derives (a difference, a per-quantum figure, a percentage, a ratio) is carried as
an Interval: a value, [lo, hi], and the probability (`coverage`) that [lo, hi] covers the quantity's true
value, by the first method the inputs allow (docs/REPORT.md states each, its assumptions and its coverage):

- `median`: one result's median, between the order statistics [x(k), x(n+1-k)] of its samples (the
  record's raw `samples`, else min..max, k = 1), k chosen for 95 % where n allows (ranks.py);
- `paired`: a quantity of cases measured in turn in one set (multi - single, a VM mode against its
  baseline, a switch minus its loop): computed round by round from the samples, then the median and
  order-statistic interval of the per-round values (for a difference the sign-test interval; a ratio or
  percentage likewise of the per-round ratios, which is the interval on logs, taken back);
- `shift`: two unpaired series with samples (two runs in `compare`, cases of different sets): the
  Hodges-Lehmann estimate and the Mann-Whitney interval of the shift, of the logs for a ratio;
- `arith`: where a record has no samples, the inputs' intervals combined by interval arithmetic; its
  coverage is then at least 1 - the sum of what the inputs miss (Bonferroni).

Replicas (records/replicas.py): where a set merges several processes or boots of one command line, each
value is first taken per replica (a record's median of that replica's samples; a paired quantity's median
of that replica's per-round values), and the interval is built over those replica values: the `median`
and `paired` methods become order statistics of the replicas' values (`replicas`), `shift` the
Hodges-Lehmann / Mann-Whitney interval of the two sets' replica values (`replica shift`). The spread of
the rounds inside each replica is kept as `within` (the median, over replicas, of their rounds' range).
Two sets run in turn (`cleanroom ab`: A's k-th process or boot beside B's k-th, in the order A B B A ...;
every result stamped with the same `turns`, records/replicas.py) pair replica by replica: B/A and B - A
are the one-sample Hodges-Lehmann estimate and Wilcoxon signed-rank interval of the pairs' ratios (on
logs) or differences (`replica pairs`), so that what the machine does over the seconds of the run lands
on both sides of a pair alike instead of reading as a difference.
A value from one replica on a real clock (`reps` 1, `exact_clock` False) has not seen the variation
between runs: within its own set it keeps its rounds' interval, but a band of zero width is not exact
there (`one run`), and compared with another run (`across`) it is never a finding.

A value is a finding only when its interval excludes the quantity's null (0 for a difference or a
percentage, 1 for a ratio) and is narrower than the value's distance from the null, or, lopsided, reaches
toward the null less than half that distance; otherwise it is inside the run-to-run noise ("~0", "~1")
or not resolved ("?").
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Hashable, Iterable, Sequence

from ..records.replicas import CLOCK_REAL, ONE_RUN_TEXT, TURNS
from ..records.text import number
from . import ranks

NAN = math.nan
INF = math.inf

# Verdicts, as derived.csv and the other CSVs write them.
EXACT = "exact"  # zero width: every sample of every input was identical (icount, Bochs)
RESOLVED = "resolved"  # the interval excludes the null, and its value is well away from it
NOISE = "inside noise"  # the interval holds the null: no effect can be claimed
UNRESOLVED = "not resolved"  # the interval excludes the null but is too wide toward it
NO_SPREAD = "no spread"  # one run (or no min/max): the spread is unknown
ONE_RUN = "one run"  # one process or boot on a real clock: the variation between runs is not measured
FINDINGS = (EXACT, RESOLVED)


# How an interval was obtained (module docstring).
MEDIAN, PAIRED, SHIFT, ARITH = "median", "paired", "shift", "arith"
REPLICAS, REPLICA_SHIFT = "replicas", "replica shift"  # the same over the replicas' values (module docstring)
REPLICA_PAIRS = "replica pairs"  # two sets run in turn: pair by pair (module docstring)
# exact coverage from ranks: noise alone excludes the null 1 - coverage of the time
RANKED = (MEDIAN, PAIRED, SHIFT, REPLICAS, REPLICA_SHIFT, REPLICA_PAIRS)
METHOD_TEXT = {MEDIAN: "order statistics of the runs", PAIRED: "paired by round (sign test)",
               SHIFT: "Hodges-Lehmann / Mann-Whitney", ARITH: "interval arithmetic of min..max",
               REPLICAS: "order statistics of the processes' or boots' values",
               REPLICA_SHIFT: "Hodges-Lehmann / Mann-Whitney of the processes' or boots' values",
               REPLICA_PAIRS: "Wilcoxon signed-rank of the pairs of processes or boots run in turn"}



def _num(v: Any) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return NAN
    return float(v)


def _bounds(values: list[float]) -> tuple[float, float]:
    """min and max, NaN when any value is NaN (Python's min() would silently skip it or not,
    depending on the order)."""
    if any(math.isnan(v) for v in values):
        return NAN, NAN
    return min(values), max(values)


def bonferroni(*coverages: float) -> float:
    """The coverage of an interval built from several (each covering with its own probability): every
    one of them covers at least 1 - sum(1 - c) of the time, whatever their dependence."""
    if not coverages or any(math.isnan(c) for c in coverages):
        return NAN
    return max(0.0, 1.0 - sum(1.0 - c for c in coverages))


def _groups(rec: dict[str, Any], n: int) -> tuple[int, ...] | None:
    """The replica each of a merged record's n samples came from (records/replicas.py), when it has them."""
    raw = rec.get("replica")
    if not isinstance(raw, list) or len(raw) != n or not all(isinstance(g, int) for g in raw):
        return None
    return tuple(raw)


@dataclass(frozen=True)
class Levels:
    """Values grouped by replica: the median of each replica's values, in the order they ran, and the
    median over replicas of each one's own range (what the rounds inside one run vary by)."""

    values: tuple[float, ...]
    within: float

    @classmethod
    def of(cls, values: Sequence[float], groups: Sequence[int] | None) -> "Levels | None":
        """None unless the values come from two replicas or more."""
        if groups is None or len(set(groups)) < 2:
            return None
        by: dict[int, list[float]] = {}
        for v, g in zip(values, groups):
            by.setdefault(g, []).append(v)
        meds = tuple(ranks.median(vs) for vs in by.values())
        return cls(meds, ranks.median([max(vs) - min(vs) for vs in by.values()]))


def _samples(rec: dict[str, Any]) -> tuple[float, ...] | None:
    """A record's raw samples in run order, when it has them all and they are numbers."""
    raw = rec.get("samples")
    n = rec.get("n")
    if not isinstance(raw, list) or not raw or (isinstance(n, int) and len(raw) != n):
        return None
    values = tuple(_num(s) for s in raw)
    return None if any(math.isnan(v) for v in values) else values


@dataclass(frozen=True)
class Interval:
    """A value with the interval [lo, hi] that covers its true value with probability `coverage` (NaN:
    unknown; lo and hi NaN: no interval; +-inf: unbounded). `rounds` are its values round by round
    (a record's samples in run order, or a paired quantity's per-round values); `pair` names the set
    they were measured in: two Intervals with the same `pair` combine round by round. `groups`: the
    replica each round came from, when the set merges several; `reps`: how many replicas the band was
    built over (0: not known, an old record); `within`: the rounds' spread inside a replica;
    `exact_clock`: a zero width is exact (instruction counts); `across`: it compares two runs; `turns`:
    the sets run in turn it belongs to (records/replicas.py): two values of one `turns` pair replica by
    replica."""

    mid: float
    lo: float
    hi: float
    coverage: float = NAN
    method: str = ""
    rounds: tuple[float, ...] | None = None
    pair: Hashable | None = None
    groups: tuple[int, ...] | None = None
    reps: int = 0
    within: float = NAN
    exact_clock: bool = True
    across: bool = False
    turns: Hashable | None = None

    @classmethod
    def of(cls, rec: dict[str, Any], pair: Hashable | None = None) -> "Interval":
        """A result record's median and its interval: order statistics of its raw samples, or min..max
        (the k = 1 interval) when it has none. One run has no spread: the interval is unknown, not zero.
        `pair`: the set the record was measured in, for quantities paired round by round."""
        med = _num(rec.get("med"))
        n = rec.get("n")
        clock = {"exact_clock": rec.get("clock") != CLOCK_REAL}
        samples = _samples(rec)
        groups = _groups(rec, len(samples)) if samples is not None else None
        if samples is not None and groups is not None and len(set(groups)) >= 2:
            return _with(cls.of_rounds(samples, pair, MEDIAN, groups, **clock), turns=rec.get(TURNS))
        replicas = rec.get("replicas")
        if isinstance(replicas, list) and len(replicas) >= 2:  # merged, without samples: each replica's median
            meds = [_num(x.get("med")) if isinstance(x, dict) else NAN for x in replicas]
            spans = [_num(x.get("max")) - _num(x.get("min")) if isinstance(x, dict) else NAN for x in replicas]
            if not any(math.isnan(v) for v in meds):
                r = ranks.median_interval(meds)
                # run in turn: each replica's median its one value, to pair with the other side's
                turned = {"rounds": tuple(meds), "groups": tuple(range(1, len(meds) + 1)), "turns": rec.get(TURNS)} \
                    if rec.get(TURNS) is not None else {}
                return cls(r.est, r.lo, r.hi, r.coverage, REPLICAS, reps=len(meds), within=ranks.median(spans),
                           **clock, **turned)
        reps = 1 if rec.get("clock") is not None else 0
        if isinstance(n, int) and not isinstance(n, bool) and n < 2:
            return cls(med, NAN, NAN, reps=reps, **clock)
        if samples is not None and len(samples) >= 2:
            r = ranks.median_interval(samples)
            mid = med if not math.isnan(med) else r.est
            return cls(mid, min(r.lo, mid), max(r.hi, mid), r.coverage, MEDIAN, samples, pair, reps=reps, **clock)
        lo, hi = _num(rec.get("min")), _num(rec.get("max"))
        coverage = ranks.sign_coverage(n, 1) if isinstance(n, int) and not isinstance(n, bool) else NAN
        return cls(med, lo if not math.isnan(lo) else med, hi if not math.isnan(hi) else med, coverage, MEDIAN,
                   reps=reps, **clock)

    @classmethod
    def of_stats(cls, stats: Any, n: Any = None) -> "Interval":
        """{"min", "med", "max"} of a counter (a result record's `counters` entry)."""
        if not isinstance(stats, dict):
            return cls(NAN, NAN, NAN)
        return cls.of({"med": stats.get("med"), "min": stats.get("min"), "max": stats.get("max"), "n": n})

    @classmethod
    def of_rounds(cls, values: Sequence[float], pair: Hashable | None = None, method: str = PAIRED,
                  groups: Sequence[int] | None = None, reps: int = 0, exact_clock: bool = True) -> "Interval":
        """The median of per-round values and its order-statistic interval; over the replicas' medians
        when `groups` says the rounds came from two or more."""
        if any(math.isnan(v) for v in values):
            return cls(NAN, NAN, NAN)
        kept = tuple(groups) if groups is not None else None
        levels = Levels.of(values, groups)
        if levels is not None:
            r = ranks.median_interval(levels.values)
            return cls(r.est, r.lo, r.hi, r.coverage, REPLICAS, tuple(values), pair, kept, len(levels.values),
                       levels.within, exact_clock)
        r = ranks.median_interval(values)
        return cls(r.est, r.lo, r.hi, r.coverage, method, tuple(values), pair, kept, reps, NAN, exact_clock)

    @classmethod
    def exact(cls, v: float) -> "Interval":
        return cls(v, v, v)

    @classmethod
    def none(cls) -> "Interval":
        return cls(NAN, NAN, NAN)

    @classmethod
    def bound(cls, values: Iterable["Interval"], pick: Callable[[Iterable[float]], float] = max) -> "Interval":
        """The largest (pick=max) or smallest of several values: covered by the same pick of their
        intervals' ends whenever every interval covers its own value."""
        good = [v for v in values if v.ok]
        if not good:
            return cls.none()
        return cls(pick(v.mid for v in good), pick(v.lo for v in good), pick(v.hi for v in good),
                   bonferroni(*(v.coverage for v in good)), ARITH, **good[0]._joined(*good[1:]))

    @property
    def ok(self) -> bool:
        return not math.isnan(self.mid)

    @property
    def known(self) -> bool:
        """The band is known (it may still be unbounded)."""
        return not (math.isnan(self.lo) or math.isnan(self.hi))

    @property
    def bounded(self) -> bool:
        return self.known and math.isfinite(self.lo) and math.isfinite(self.hi)

    @property
    def width(self) -> float:
        return self.hi - self.lo if self.known else NAN

    @property
    def runs(self) -> int:
        """The rounds (or samples) it comes from, or the replicas where its band was built over them;
        0 when unknown."""
        if self.reps >= 2:
            return self.reps
        return len(self.rounds) if self.rounds else 0

    @property
    def between(self) -> bool:
        """Its band has seen the variation between runs: built over replicas, or on a clock that
        repeats to the tick (where one run is every run)."""
        return self.reps >= 2 or self.exact_clock

    def levels(self) -> Levels | None:
        """Its rounds as replica values, where it has rounds from two replicas or more."""
        return Levels.of(self.rounds, self.groups) if self.rounds is not None else None

    def holds(self, x: float) -> bool:
        return self.known and self.lo <= x <= self.hi

    def paired_with(self, other: "Interval") -> bool:
        """Both measured round by round in one set: their rounds pair up."""
        return (self.pair is not None and self.pair == other.pair and self.rounds is not None
                and other.rounds is not None and len(self.rounds) == len(other.rounds) >= 2
                and self.groups == other.groups)

    def in_turn_with(self, other: "Interval") -> bool:
        """Both from sets run in turn (one `turns`), not paired round by round, with as many replicas."""
        if self.turns is None or self.turns != other.turns or self.paired_with(other):
            return False
        mine, theirs = self.levels(), other.levels()
        return mine is not None and theirs is not None and len(mine.values) == len(theirs.values)

    def unpaired_with(self, other: "Interval") -> bool:
        """Both have samples, not from one set: the Hodges-Lehmann / Mann-Whitney methods apply."""
        return (self.rounds is not None and other.rounds is not None and len(self.rounds) >= 2
                and len(other.rounds) >= 2 and not self.paired_with(other))

    def _joined(self, *others: "Interval") -> dict[str, Any]:
        """What a value computed from this one and others inherits: the fewest replicas, whether a zero
        width is exact, whether it compares runs."""
        every = (self, *others)
        return {"reps": min(v.reps for v in every), "exact_clock": all(v.exact_clock for v in every),
                "across": any(v.across for v in every)}

    def _arith(self, mid: float, lo: float, hi: float, *others: "Interval") -> "Interval":
        """A value combined by interval arithmetic from this one and others (no rounds to pair)."""
        return Interval(mid, lo, hi, bonferroni(self.coverage, *(o.coverage for o in others)), ARITH,
                        **self._joined(*others))

    def _each(self, other: "Interval", f: Callable[[float, float], float]) -> "Interval":
        assert self.rounds is not None and other.rounds is not None
        joined = self._joined(other)
        out = Interval.of_rounds([f(a, b) for a, b in zip(self.rounds, other.rounds)], self.pair,
                                 groups=self.groups, reps=joined["reps"], exact_clock=joined["exact_clock"])
        return _with(out, across=joined["across"], turns=self.turns if self.turns == other.turns else None)

    def _in_turn(self, other: "Interval", ratio: bool) -> "Interval | None":
        """self - other (or self / other) of two sets run in turn: the Wilcoxon signed-rank interval of
        the replica pairs' differences (ratios); None where a ratio has a value that is not positive."""
        mine, theirs = self.levels(), other.levels()
        assert mine is not None and theirs is not None
        if ratio:
            r = ranks.paired_ratio_interval(mine.values, theirs.values)
        else:
            r = ranks.paired_shift_interval([a - b for a, b in zip(mine.values, theirs.values)])
        if r is None:
            return None
        joined = self._joined(other)
        joined["reps"] = len(mine.values)
        return Interval(r.est, r.lo, r.hi, r.coverage, REPLICA_PAIRS, **joined)

    def _unpaired(self, other: "Interval", ratio: bool) -> "Interval | None":
        """self - other (or self / other) of two series not measured round by round: Hodges-Lehmann /
        Mann-Whitney over the replicas' values where both have two replicas or more, else over the
        rounds; None where a ratio has a value that is not positive."""
        assert self.rounds is not None and other.rounds is not None
        mine, theirs = self.levels(), other.levels()
        replicated = mine is not None and theirs is not None
        x = mine.values if mine is not None and replicated else self.rounds
        y = theirs.values if theirs is not None and replicated else other.rounds
        r = ranks.ratio_interval(x, y) if ratio else ranks.shift_interval(x, y)
        if r is None:
            return None
        joined = self._joined(other)
        if replicated:
            assert mine is not None and theirs is not None
            joined["reps"] = min(len(mine.values), len(theirs.values))
        return Interval(r.est, r.lo, r.hi, r.coverage, REPLICA_SHIFT if replicated else SHIFT, **joined)

    def __sub__(self, other: "Interval") -> "Interval":
        if self.paired_with(other):
            return self._each(other, lambda a, b: a - b)
        if self.in_turn_with(other):
            out = self._in_turn(other, ratio=False)
            assert out is not None
            return out
        if self.unpaired_with(other):
            out = self._unpaired(other, ratio=False)
            assert out is not None
            return out
        return self._arith(self.mid - other.mid, self.lo - other.hi, self.hi - other.lo, other)

    def compared(self) -> "Interval":
        """This value as a comparison of two runs (compare's B/A): from one run on a real clock it is
        never a finding (verdict: ONE_RUN)."""
        return _with(self, across=True)

    def _map(self, f: Callable[[float], float]) -> "Interval":
        """This value through an increasing f: the same coverage."""
        lo, hi = (f(self.lo), f(self.hi)) if self.known else (NAN, NAN)
        rounds = tuple(f(v) for v in self.rounds) if self.rounds is not None else None
        return _with(self, mid=f(self.mid), lo=lo, hi=hi, rounds=rounds)

    def shift(self, k: float) -> "Interval":
        return self._map(lambda v: v + k)

    def scale(self, k: float) -> "Interval":
        if k >= 0:
            return self._map(lambda v: v * k)
        flipped = self._map(lambda v: v * k)
        return _with(flipped, lo=flipped.hi, hi=flipped.lo)

    def ratio(self, den: "Interval") -> "Interval":
        """self / den. NaN when den's median is 0; unbounded when den's band holds 0 (the ratio can
        then be anything); unknown when either band is. Paired: the per-round ratios; unpaired with
        samples, all positive: the shift of the logs; else interval arithmetic."""
        if not self.ok or not den.ok or den.mid == 0:
            return Interval.none()
        mid = self.mid / den.mid
        if not self.known or not den.known:
            return Interval(mid, NAN, NAN, **self._joined(den))
        if den.lo <= 0 <= den.hi:
            return Interval(mid, -INF, INF, bonferroni(self.coverage, den.coverage), ARITH, **self._joined(den))
        if self.paired_with(den) and den.rounds is not None and all(b != 0 for b in den.rounds):
            return self._each(den, lambda a, b: a / b)
        if self.in_turn_with(den) and (out := self._in_turn(den, ratio=True)) is not None:
            return out
        if self.unpaired_with(den):
            out = self._unpaired(den, ratio=True)
            if out is not None:
                return out
        lo, hi = _bounds([a / b for a in (self.lo, self.hi) for b in (den.lo, den.hi)])
        return self._arith(mid, lo, hi, den)

    def rel(self, base: "Interval") -> "Interval":
        """100 * (self - base) / base. Paired: round by round, exactly 0 in a round whose two values
        are equal. Otherwise the band is 100 * (self / base - 1), so that base enters once (interval
        arithmetic widens an expression in which an input appears twice); the value is
        100 * (self - base) / base, exactly 0 when the medians are equal (self / base - 1 is not always,
        in floating point), and two exact inputs give an exact result."""
        band = self.ratio(base)
        if band.method in (PAIRED, SHIFT) and band.bounded:
            if self.paired_with(base):
                return self._each(base, lambda a, b: 100.0 * (a - b) / b)
            return band.shift(-1.0).scale(100.0)
        band = band.shift(-1.0).scale(100.0)
        if not band.ok:
            return band
        mid = 100.0 * (self.mid - base.mid) / base.mid
        if self.known and base.known and self.width == 0 and base.width == 0:
            return Interval(mid, mid, mid, **self._joined(base))
        if not band.known:
            return Interval(mid, NAN, NAN, **self._joined(base))
        return _with(band, mid=mid, lo=min(band.lo, mid), hi=max(band.hi, mid))


def _with(v: Interval, **changes: Any) -> Interval:
    """v with some fields changed, as dataclasses.replace makes it (an Interval has no __post_init__ and keeps
    nothing but its fields: tests/test_intervals.py), without its look at the class's fields on every call:
    1 us against 5.6 (every derived band through shift, scale, ratio and rel: ~5,000 of them in the report of
    make run's kernel log, tests/fixtures/qemu-icount-make-run.log, figures drawn)."""
    new = object.__new__(Interval)
    new.__dict__.update(v.__dict__, **changes)
    return new


def verdict(v: Interval, null: float = 0.0) -> str:
    """What the interval allows one to say about v against the null (0: no difference; 1: equal):
    resolved when it excludes the null and is narrower than the value's distance from it, or, lopsided,
    reaches from the value toward the null less than half that distance: a run far out on the other
    side (an outlier the machine caused) widens the interval without hiding the effect."""
    if not v.ok:
        return ""
    if v.across and not v.between:
        return ONE_RUN
    if not v.known:
        return NO_SPREAD
    if v.width == 0 and v.exact_clock:
        return EXACT
    if v.width == 0 and v.reps < 2:
        return ONE_RUN
    if v.lo <= null <= v.hi:
        return NOISE
    distance = abs(v.mid - null)
    if v.width > distance and _toward_null(v, null) > distance / 2:
        return UNRESOLVED
    return RESOLVED


def _toward_null(v: Interval, null: float) -> float:
    """How far v's interval reaches from its value toward the null."""
    return abs(v.mid - (v.lo if v.mid > null else v.hi))


def runs_to_resolve(v: Interval, null: float = 0.0) -> int | None:
    """For a value not resolved: the runs after which its interval, narrowing as 1/sqrt(runs), would
    reach the verdict's limit (what the data suggest); None when unknown or not applicable."""
    if verdict(v, null) != UNRESOLVED or not v.runs:
        return None
    distance = abs(v.mid - null)
    return min(ranks.runs_for(v.width, distance, v.runs), ranks.runs_for(2 * _toward_null(v, null), distance, v.runs))


def is_finding(v: Interval, null: float = 0.0) -> bool:
    return verdict(v, null) in FINDINGS


def null_text(null: float) -> str:
    return f"~{null:g}"


def precision(v: Interval, digits: int) -> int:
    """The digits a value needs so that its band, when narrower than `digits` can show, still shows
    (up to two more)."""
    if not v.bounded or v.lo == v.hi:
        return digits
    for d in range(digits, digits + 2):
        if number(v.lo, d) != number(v.hi, d):
            return d
    return digits + 2


def band_text(v: Interval, digits: int = 0) -> str:
    """"(lo..hi)", or "(unbounded)" when a denominator's band held 0."""
    if not v.bounded:
        return "(unbounded)"
    return f"({number(v.lo, digits)}..{number(v.hi, digits)})"


def cell(v: Interval | None, digits: int = 0, null: float = 0.0, unit: str = "") -> str:
    """A value for a table with its band and verdict:
    "1075594 (1070210..1080233)" resolved; "~0 (-102960..5000)" inside noise; "52.3? (1.0..120.0)"
    not resolved; "7" exact (zero width); "7 (1 run)" when the spread is unknown. `unit` (e.g. " %")
    follows the value."""
    if v is None or not v.ok:
        return ""
    kind = verdict(v, null)
    digits = precision(v, digits)
    value = number(v.mid, digits) + unit
    if kind == EXACT:
        return value
    if kind == NO_SPREAD:
        return f"{value} (1 run)"
    if kind == ONE_RUN:
        return f"{value} ({kind})" if not v.bounded or v.width == 0 else f"{value}, {kind} {band_text(v, digits)}"
    if kind == NOISE:
        return f"{null_text(null)}{unit} {band_text(v, digits)}"
    return f"{number(v.mid, digits)}{'?' if kind == UNRESOLVED else ''}{unit} {band_text(v, digits)}"


def short(v: Interval | None, digits: int = 0, null: float = 0.0, unit: str = "") -> str:
    """A value for a sentence: like cell(), but a finding whose band is narrow (within 2 % of
    the value) is printed without it, and noise says only "~0"."""
    if v is None or not v.ok:
        return "-"
    kind = verdict(v, null)
    if kind == NOISE:
        return null_text(null) + unit
    if kind == RESOLVED and v.width <= 0.02 * abs(v.mid):
        return number(v.mid, digits) + unit
    return cell(v, digits, null, unit)


def coverage_cell(v: Interval, null: float = 0.0) -> str:
    """What a value's interval is, for a page's cell beside it: '95.3 % rank interval', 'min..max' (no rank
    coverage: interval arithmetic), 'exact' (zero width on a clock that repeats), 'one run', ..."""
    kind = verdict(v, null)
    if kind in (EXACT, ONE_RUN):
        return kind
    if kind == NO_SPREAD:
        return "no spread: 1 run"
    if not v.bounded:
        return "unbounded: a denominator's interval holds 0"
    if v.method in RANKED and not math.isnan(v.coverage):
        return f"{percent(v.coverage)} rank interval" + (f" over {v.reps} replicas" if v.reps >= 2 else "")
    return "min..max"


def cells(v: Interval | None, digits: int = 0, null: float = 0.0, unit: str = "") -> tuple[str, str, str]:
    """A value as a page's three cells: the value as short() writes it, without its band (with its
    verdict's marks: "~0", "7?"); its interval "lo..hi" at the digits cell() shows it ("" where it has
    none); and what the interval is (coverage_cell)."""
    if v is None or not v.ok:
        return "-", "", ""
    kind = verdict(v, null)
    digits_shown = precision(v, digits)
    if kind == NOISE:
        value = null_text(null) + unit
    elif kind == RESOLVED and v.width <= 0.02 * abs(v.mid):
        value = number(v.mid, digits) + unit
    else:
        value = number(v.mid, digits_shown) + ("?" if kind == UNRESOLVED else "") + unit
    band = band_text(v, digits_shown)[1:-1] if v.known and v.width != 0 else ""
    return value, band, coverage_cell(v, null)


CHANCE_LEVEL = 0.05  # how unlikely a count of resolved points must be under noise alone to count


def chance_limit(points: int, p: float) -> int:
    """The fewest resolved points out of `points` that noise alone (each resolved with probability
    p, independently) reaches with probability at most CHANCE_LEVEL: fewer than that is no more
    than chance."""
    if p <= 0.0 or points <= 0:
        return 1
    tail = 1.0  # P(X >= k), from k = 0 up
    for k in range(points + 1):
        if tail <= CHANCE_LEVEL:
            return k
        tail -= math.comb(points, k) * p ** k * (1.0 - p) ** (points - k)
    return points + 1


def chance(runs: int) -> float:
    """The probability that a difference of two inputs with no true effect still comes out
    "resolved" under interval arithmetic of min..max (records without samples): every one of the
    `runs` samples of one input above every one of the other's, 2 / C(2 runs, runs) for exchangeable
    samples (0.1 with runs=3, 0.008 with runs=5). An upper bound for the quantities built from four
    inputs, whose bands are wider."""
    if runs < 2:
        return 0.0  # no band at all (NO_SPREAD), or an unknown count: nothing to correct
    return 2.0 / math.comb(2 * runs, runs)


def false_rate(v: Interval, runs: int) -> float:
    """How often noise alone (no true effect) makes v's interval exclude the null: 1 - its coverage
    for the rank methods (exactly so for continuous data); chance(runs) for interval arithmetic."""
    if v.method in RANKED and not math.isnan(v.coverage):
        return 1.0 - v.coverage
    return chance(runs)


def percent(p: float) -> str:
    """A coverage as the report prints it: '93.8 %', '95 %'."""
    return f"{100 * p:.1f}".rstrip("0").rstrip(".") + " %"


def _span(coverages: list[float]) -> str:
    """'93.8 %', or '75-93.8 %' for several."""
    lo, hi = percent(min(coverages)), percent(max(coverages))
    return lo if lo == hi else f"{lo[:-2]}-{hi}"


def coverage_range(values: Iterable[Interval]) -> str:
    """The coverage of some values' intervals, '93.8 %' or '87.5-98.4 %'; empty when none is known."""
    known = [v.coverage for v in values if v.bounded and v.width > 0 and not math.isnan(v.coverage)]
    return _span(known) if known else ""


def coverage_text(values: Iterable[Interval]) -> str:
    """The coverage of some values' intervals and how they were obtained: '93.8 % (paired by round
    (sign test), 5 runs)'; several methods joined by '; '. Empty when none has a known coverage."""
    by: dict[str, list[Interval]] = {}
    for v in values:
        if v.bounded and v.width > 0 and not math.isnan(v.coverage):
            by.setdefault(v.method or MEDIAN, []).append(v)
    parts = []
    for method in (PAIRED, SHIFT, MEDIAN, ARITH):
        got = by.get(method)
        if not got:
            continue
        cov = _span([v.coverage for v in got])
        runs = sorted({v.runs for v in got if v.runs})
        n = "" if not runs else f", {runs[0]} runs" if len(runs) == 1 else f", {runs[0]}-{runs[-1]} runs"
        parts.append(f"{cov} ({METHOD_TEXT[method]}{n})")
    return "; ".join(parts)


def summary_band(values: Iterable[Interval]) -> str:
    """What the summary's values in parentheses are, short enough for its heading line: 'value (lo..hi):
    93.8-96.9 % rank interval' (order statistics, paired by round or Mann-Whitney: docs/REPORT.md),
    ', else min..max' when some come from records without samples; the runs' min..max when none has a
    rank interval."""
    banded = [v for v in values if v.bounded and v.width > 0]
    ranked = [v.coverage for v in banded if v.method in RANKED and not math.isnan(v.coverage)]
    if not ranked:
        return "value (min..max) over the runs"
    rest = ", else min..max" if len(ranked) < len(banded) else ""
    reps = sorted({v.reps for v in banded if v.reps >= 2})
    over = "" if not reps else f" over {reps[-1]} replicas" if len(reps) == 1 else f" over {reps[0]}-{reps[-1]} replicas"
    return f"value (lo..hi): {_span(ranked)} rank interval{over}{rest}"


def legend(values: Iterable[Interval] = ()) -> str:
    """The legend line of a table: what its intervals are, at which coverage, and what the marks mean."""
    cov = coverage_text(values)
    head = (f"value (lo..hi): an interval covering the true value with the stated probability, {cov}"
            if cov else "value (lo..hi): the interval of the value over the runs")
    return (head + "; ~0 (~1 for a ratio): it holds the null, inside the run-to-run noise; ?: not resolved, "
            "wider than the value and reaching more than half of it toward the null; unbounded: a denominator's "
            "interval holds 0; no band: every sample identical; one run: " + ONE_RUN_TEXT + "; methods and coverage: "
            "docs/REPORT.md")


# The summary's legend of the words it judges values with (one line of the summary's width);
# paper.py's Tally writes NOISE_ALONE.
NOISE_ALONE = "noise alone"
SUMMARY_LEGEND = (f"legend: ~0, ~1: inside the runs' noise; 7?: not resolved; {NOISE_ALONE}: how many chance "
                  "resolves")
