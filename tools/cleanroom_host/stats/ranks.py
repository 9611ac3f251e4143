"""Distribution-free intervals from ranks, with their exact coverage (docs/REPORT.md, Uncertainty).

- The median of one series: the order statistics [x(k), x(n+1-k)] cover the true median with
  probability 1 - 2 P(Binomial(n, 1/2) < k), whatever the distribution (continuous, independent runs).
  The same interval of per-round differences (or ratios) of series measured in turn is the sign-test
  interval of the paired shift.
- The shift between two unpaired series of m and n runs: the Hodges-Lehmann estimate (the median of
  the m n pairwise differences D) and the Mann-Whitney interval [D(k), D(mn+1-k)], which covers the
  true shift with probability 1 - 2 P(U < k), U the Mann-Whitney statistic under no difference;
  assumes the two distributions differ by a shift. Ratios: the same on logs (a scale change), i.e.
  the order statistics of the pairwise ratios.
- The shift between two series measured in pairs (the k-th of each side run next to each other,
  `cleanroom ab`): the one-sample Hodges-Lehmann estimate of the pairs' differences d (the median of
  the n (n + 1) / 2 Walsh averages (d_i + d_j) / 2, i <= j) and the Wilcoxon signed-rank interval
  [W(k), W(M+1-k)], which covers the true shift with probability 1 - 2 P(T < k), T the signed-rank
  statistic under no difference; assumes the differences are symmetric about the shift (under no
  difference they are: the two sides of a pair are exchangeable). Ratios: the same on logs.

k is chosen for TARGET coverage where n allows it, else the best n allows (k = 1). A bootstrap would
be too coarse at the few runs a measurement has (n <= 11).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Sequence

TARGET = 0.95  # the coverage the intervals aim at


@dataclass(frozen=True)
class RankInterval:
    """An estimate, its interval [lo, hi] and the probability that the interval covers the truth."""

    est: float
    lo: float
    hi: float
    coverage: float


@lru_cache(maxsize=None)
def sign_coverage(n: int, k: int) -> float:
    """P(x(k) <= median <= x(n+1-k)) for n independent continuous samples: 1 - 2 P(Bin(n, 1/2) < k)."""
    if n < 1 or not 1 <= k <= (n + 1) // 2:
        return math.nan
    return 1.0 - 2.0 * sum(math.comb(n, i) for i in range(k)) / 2 ** n


@lru_cache(maxsize=None)
def sign_rank(n: int, target: float = TARGET) -> int:
    """The largest k whose interval [x(k), x(n+1-k)] still covers with at least `target`; 1 (the whole
    range, the most n allows) when even that falls short."""
    k = 1
    while k + 1 <= (n + 1) // 2 and sign_coverage(n, k + 1) >= target:
        k += 1
    return k


def median(values: Sequence[float]) -> float:
    """The median (the mean of the two middle values for an even count); NaN when empty."""
    s = sorted(values)
    n = len(s)
    if not n:
        return math.nan
    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2.0


def median_interval(values: Sequence[float], target: float = TARGET) -> RankInterval:
    """The median of `values` and the order-statistic interval that covers the true median."""
    s = sorted(values)
    n = len(s)
    if n < 2:
        v = s[0] if s else math.nan
        return RankInterval(v, math.nan, math.nan, math.nan)
    k = sign_rank(n, target)
    return RankInterval(median(s), s[k - 1], s[n - k], sign_coverage(n, k))


@lru_cache(maxsize=None)
def _mw_counts(m: int, n: int) -> tuple[int, ...]:
    """How many of the C(m+n, m) orderings of two samples give U = u, u = 0..mn: the coefficients of
    the Gaussian binomial [m+n, m]_q = prod_{i=1..m} (1 - q^(n+i)) / (1 - q^i)."""
    poly = [1]
    for i in range(1, m + 1):
        grown = poly + [0] * (n + i)
        for j in range(len(poly) - 1, -1, -1):  # times (1 - q^(n+i))
            grown[j + n + i] -= poly[j]
        for j in range(i, len(grown)):  # divided by (1 - q^i): exact
            grown[j] += grown[j - i]
        poly = grown[: m * n + 1] if len(grown) > m * n + 1 else grown
    return tuple(poly[: m * n + 1])


@lru_cache(maxsize=None)
def shift_coverage(m: int, n: int, k: int) -> float:
    """P(D(k) <= shift <= D(mn+1-k)) for samples of m and n that differ by a shift: 1 - 2 P(U < k)."""
    if m < 1 or n < 1 or not 1 <= k <= (m * n + 1) // 2:
        return math.nan
    counts = _mw_counts(min(m, n), max(m, n))
    return 1.0 - 2.0 * sum(counts[:k]) / math.comb(m + n, m)


@lru_cache(maxsize=None)
def shift_rank(m: int, n: int, target: float = TARGET) -> int:
    k = 1
    while k + 1 <= (m * n + 1) // 2 and shift_coverage(m, n, k + 1) >= target:
        k += 1
    return k


def _pairwise_interval(values: list[float], m: int, n: int, target: float) -> RankInterval:
    s = sorted(values)
    k = shift_rank(m, n, target)
    return RankInterval(median(s), s[k - 1], s[len(s) - k], shift_coverage(m, n, k))


def shift_interval(x: Sequence[float], y: Sequence[float], target: float = TARGET) -> RankInterval:
    """x - y for two unpaired series: the Hodges-Lehmann estimate and the Mann-Whitney interval."""
    if not x or not y:
        return RankInterval(math.nan, math.nan, math.nan, math.nan)
    return _pairwise_interval([a - b for a in x for b in y], len(x), len(y), target)


def ratio_interval(x: Sequence[float], y: Sequence[float], target: float = TARGET) -> RankInterval | None:
    """x / y for two unpaired series of positive values: the shift of the logs, taken back (the order
    statistics of the pairwise ratios). None when a value is not positive (no logs)."""
    if not x or not y or min(x) <= 0 or min(y) <= 0:
        return None
    return _pairwise_interval([a / b for a in x for b in y], len(x), len(y), target)


@lru_cache(maxsize=None)
def _signed_rank_counts(n: int) -> tuple[int, ...]:
    """How many of the 2^n sign patterns of ranks 1..n give the signed-rank statistic T = t,
    t = 0..n(n+1)/2: the coefficients of prod_{i=1..n} (1 + q^i)."""
    poly = [1] + [0] * (n * (n + 1) // 2)
    for i in range(1, n + 1):
        for t in range(len(poly) - 1, i - 1, -1):
            poly[t] += poly[t - i]
    return tuple(poly)


@lru_cache(maxsize=None)
def signed_rank_coverage(n: int, k: int) -> float:
    """P(W(k) <= shift <= W(M+1-k)) for n pairs' differences symmetric about the shift: 1 - 2 P(T < k)."""
    if n < 1 or not 1 <= k <= (n * (n + 1) // 2 + 1) // 2:
        return math.nan
    return 1.0 - 2.0 * sum(_signed_rank_counts(n)[:k]) / 2 ** n


@lru_cache(maxsize=None)
def signed_rank_rank(n: int, target: float = TARGET) -> int:
    k = 1
    while k + 1 <= (n * (n + 1) // 2 + 1) // 2 and signed_rank_coverage(n, k + 1) >= target:
        k += 1
    return k


def paired_shift_interval(d: Sequence[float], target: float = TARGET) -> RankInterval:
    """The shift of which the pairs' differences d are samples: the one-sample Hodges-Lehmann estimate
    and the Wilcoxon signed-rank interval (module docstring); NaN for fewer than two pairs."""
    n = len(d)
    if n < 2:
        return RankInterval(math.nan, math.nan, math.nan, math.nan)
    walsh = sorted((d[i] + d[j]) / 2.0 for i in range(n) for j in range(i, n))
    k = signed_rank_rank(n, target)
    return RankInterval(median(walsh), walsh[k - 1], walsh[len(walsh) - k], signed_rank_coverage(n, k))


def paired_ratio_interval(x: Sequence[float], y: Sequence[float], target: float = TARGET) -> RankInterval | None:
    """x / y of series measured in pairs (x[i] beside y[i]), all positive: the paired shift of the logs,
    taken back. None when a value is not positive or the two differ in length."""
    if len(x) != len(y) or not x or min(x) <= 0 or min(y) <= 0:
        return None
    r = paired_shift_interval([math.log(a / b) for a, b in zip(x, y)], target)
    return RankInterval(math.exp(r.est), math.exp(r.lo), math.exp(r.hi), r.coverage)


def runs_for(width: float, distance: float, n: int) -> int:
    """The runs after which a band of `width` from n runs would, narrowing as 1/sqrt(n), become
    narrower than `distance` (the value's distance from its null): what the data suggest."""
    if n < 1 or not (width > 0 and distance > 0) or not math.isfinite(width / distance):
        return n
    return max(n + 1, math.ceil(n * (width / distance) ** 2))
