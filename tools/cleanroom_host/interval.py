"""A measured value with the band it may lie in, and what that band allows one to say.

Every number the report derives (a difference, a per-quantum figure, a
percentage, a ratio) is carried as an Interval: the value computed from the
records' medians, and [lo, hi] computed from their minima and maxima by
interval arithmetic. With the default runs=3 the band is the whole range of
the three samples of each input, combined so that every value the recorded
extremes allow lies inside it: wide, never optimistic. docs/REPORT.md states
the method.

A value is a finding only when its band excludes the quantity's null (0 for a
difference or a percentage, 1 for a ratio) and is narrower than the value's
distance from that null; otherwise it is inside the run-to-run noise ("~0",
"~1") or not resolved ("?").
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

NAN = math.nan
INF = math.inf

# Verdicts, as derived.csv and the other CSVs write them.
EXACT = "exact"  # zero width: every sample of every input was identical (icount, Bochs)
RESOLVED = "resolved"  # the band excludes the null and is narrower than the effect
NOISE = "inside noise"  # the band holds the null: no effect can be claimed
UNRESOLVED = "not resolved"  # the band excludes the null but is wider than the effect
NO_SPREAD = "no spread"  # one run (or no min/max): the spread is unknown
FINDINGS = (EXACT, RESOLVED)


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


@dataclass(frozen=True)
class Interval:
    """A median with the band [lo, hi] it may lie in (NaN: unknown; +-inf: unbounded)."""

    mid: float
    lo: float
    hi: float

    @classmethod
    def of(cls, rec: dict[str, Any]) -> "Interval":
        """A result record's median and the range of its samples (the raw samples when the record
        has them, else min and max). One run has no spread: the band is unknown, not zero."""
        med = _num(rec.get("med"))
        samples = rec.get("samples")
        if isinstance(samples, list) and samples and all(not math.isnan(_num(s)) for s in samples):
            lo, hi = min(_num(s) for s in samples), max(_num(s) for s in samples)
        else:
            lo, hi = _num(rec.get("min")), _num(rec.get("max"))
        n = rec.get("n")
        if isinstance(n, int) and not isinstance(n, bool) and n < 2:
            return cls(med, NAN, NAN)
        return cls(med, lo if not math.isnan(lo) else med, hi if not math.isnan(hi) else med)

    @classmethod
    def of_stats(cls, stats: Any, n: Any = None) -> "Interval":
        """{"min", "med", "max"} of a counter (a result record's `counters` entry)."""
        if not isinstance(stats, dict):
            return cls(NAN, NAN, NAN)
        return cls.of({"med": stats.get("med"), "min": stats.get("min"), "max": stats.get("max"), "n": n})

    @classmethod
    def exact(cls, v: float) -> "Interval":
        return cls(v, v, v)

    @classmethod
    def none(cls) -> "Interval":
        return cls(NAN, NAN, NAN)

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

    def holds(self, x: float) -> bool:
        return self.known and self.lo <= x <= self.hi

    def __sub__(self, other: "Interval") -> "Interval":
        return Interval(self.mid - other.mid, self.lo - other.hi, self.hi - other.lo)

    def shift(self, k: float) -> "Interval":
        return Interval(self.mid + k, self.lo + k, self.hi + k)

    def scale(self, k: float) -> "Interval":
        lo, hi = _bounds([self.lo * k, self.hi * k]) if self.known else (NAN, NAN)
        return Interval(self.mid * k, lo, hi)

    def ratio(self, den: "Interval") -> "Interval":
        """self / den. NaN when den's median is 0; unbounded when den's band holds 0 (the ratio can
        then be anything); unknown when either band is."""
        if not self.ok or not den.ok or den.mid == 0:
            return Interval.none()
        mid = self.mid / den.mid
        if not self.known or not den.known:
            return Interval(mid, NAN, NAN)
        if den.lo <= 0 <= den.hi:
            return Interval(mid, -INF, INF)
        lo, hi = _bounds([a / b for a in (self.lo, self.hi) for b in (den.lo, den.hi)])
        return Interval(mid, lo, hi)

    def rel(self, base: "Interval") -> "Interval":
        """100 * (self - base) / base. The band is 100 * (self / base - 1), so that base enters once:
        interval arithmetic widens an expression in which an input appears twice. The value is
        100 * (self - base) / base, exactly 0 when the medians are equal (self / base - 1 is not
        always, in floating point), and two exact inputs give an exact result."""
        band = self.ratio(base).shift(-1.0).scale(100.0)
        if not band.ok:
            return band
        mid = 100.0 * (self.mid - base.mid) / base.mid
        if self.known and base.known and self.width == 0 and base.width == 0:
            return Interval.exact(mid)
        if not band.known:
            return Interval(mid, NAN, NAN)
        return Interval(mid, min(band.lo, mid), max(band.hi, mid))


def verdict(v: Interval, null: float = 0.0) -> str:
    """What the band allows one to say about v against the null (0: no difference; 1: equal)."""
    if not v.ok:
        return ""
    if not v.known:
        return NO_SPREAD
    if v.width == 0:
        return EXACT
    if v.lo <= null <= v.hi:
        return NOISE
    if v.width > abs(v.mid - null):
        return UNRESOLVED
    return RESOLVED


def is_finding(v: Interval, null: float = 0.0) -> bool:
    return verdict(v, null) in FINDINGS


def number(v: float, digits: int = 0) -> str:
    """A float for a table: empty when NaN, no "-0", +-inf spelled out."""
    if math.isnan(v):
        return ""
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    text = f"{v:.{digits}f}"
    return text[1:] if text.startswith("-") and float(text) == 0 else text


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
    "resolved": every one of the `runs` samples of one input above every one of the other's,
    2 / C(2 runs, runs) for exchangeable samples (0.1 with runs=3, 0.008 with runs=5). An
    upper bound for the quantities built from four inputs, whose bands are wider."""
    if runs < 2:
        return 0.0  # no band at all (NO_SPREAD), or an unknown count: nothing to correct
    return 2.0 / math.comb(2 * runs, runs)


LEGEND = ("value (min..max): the band from the runs' minima and maxima (interval arithmetic); "
          "~0 (~1 for a ratio): the band holds it, inside the run-to-run noise; ?: not resolved, the band is "
          "wider than the value; unbounded: a denominator's band holds 0; no band: every sample identical")

# The summary's legend of the words it judges values with (one line of the summary's width);
# paper.py's Tally writes NOISE_ALONE.
NOISE_ALONE = "noise alone"
SUMMARY_LEGEND = (f"legend: ~0, ~1: inside the runs' noise; 7?: not resolved; {NOISE_ALONE}: how many chance "
                  "resolves")
