"""A decision per set that survives looking after every process: an anytime-valid confidence sequence for
the median of the processes' (or boots') values, and what it decides.

runs=auto on a real clock adds processes to the sets whose answer is still open and looks again after
each (machines/sweep.py). A fixed-sample interval read after every look and stopped at the first one
that excludes the null claims effects far more often than its coverage says (optional stopping;
tests/test_sequence.py measures it). This module's interval is valid at every look at once:

- each process gives one value of a quantity (its median of the rounds, Interval.levels);
- for a candidate median m, the signs of value - m are fair coin flips while m is the true median, so
  the wealth of a gambler who bets a share lambda of it on each sign's side, W = prod(1 + lambda s_i), is a
  nonnegative martingale with mean 1 (a betting confidence sequence in the sense of Waudby-Smith and
  Ramdas 2023, on the signs, which are bounded whatever the values' skew or outliers); a mixture over
  the shares (LAMBDAS) is one too;
- by Ville's inequality the wealth ever reaches 2 / alpha with probability at most alpha / 2, on either
  side, however many looks and whatever the stopping rule: the m whose wealth got there are ruled out,
  and the rest, intersected over the looks so far, is a 1 - alpha confidence sequence (Howard, Ramdas,
  McAuliffe and Sekhon 2021).

Its ends are order statistics of the values, like the fixed-sample rank interval's, one or two further
in: what coverage at every look costs (with all values on one side, the first decision comes at the
sixth process, where the fixed-sample interval needs five).

The decision, against the quantity's null (0 for a difference or a percentage, 1 for a ratio) and a
margin (`margin=`, in points of the quantity's baseline):
- `negligible`: the sequence lies inside null +- margin (an effect smaller than the margin, if any);
- `effect`: it excludes the null;
- `open`: neither yet; `more` estimates the processes it would take, at the spread seen so far.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Sequence

ALPHA = 0.05  # the sequence covers the median at every look at once with probability 1 - ALPHA
# The mixture of betting shares and their weights: all-in on one side (one sign against ends it) decides
# six processes that agree; the smaller shares keep deciding when a value or two in ten disagree.
LAMBDAS = ((1.0, 0.45), (0.8, 0.3), (0.6, 0.15), (0.4, 0.1))
MORE_MAX = 200  # `more` looks this far ahead; beyond: None (not at this spread)

EFFECT, NEGLIGIBLE, OPEN = "effect", "negligible", "open"
DECIDED = (EFFECT, NEGLIGIBLE)
METHOD = "anytime-valid sign-betting confidence sequence over the processes or boots"


@lru_cache(maxsize=None)
def wealth(above: int, below: int) -> float:
    """The mixture's wealth after `above` signs on its side and `below` against (ties count neither)."""
    return sum(w * (1.0 + lam) ** above * (1.0 - lam) ** below for lam, w in LAMBDAS)


def _ends(values: Sequence[float], alpha: float) -> tuple[float, float]:
    """One look's sequence [lo, hi]: every m below lo (above hi) has wealth >= 2 / alpha on the side
    above (below) it. -inf / inf where no m is ruled out."""
    bar = 2.0 / alpha
    s = sorted(values)
    n = len(s)
    lo, hi = -math.inf, math.inf
    # m just below s[j]: s[j:] above, s[:j] below (equal values fall on one side together)
    for j in range(n - 1, -1, -1):
        if j > 0 and s[j - 1] == s[j]:
            continue
        if wealth(n - j, j) >= bar:
            lo = s[j]
            break
    for j in range(n):
        if j + 1 < n and s[j + 1] == s[j]:
            continue
        if wealth(j + 1, n - j - 1) >= bar:
            hi = s[j]
            break
    return lo, hi


@dataclass
class Running:
    """The sequence as values arrive: [lo, hi] intersected over every look so far."""

    alpha: float = ALPHA
    values: list[float] = field(default_factory=list)
    lo: float = -math.inf
    hi: float = math.inf

    def add(self, value: float) -> "Running":
        self.values.append(value)
        a, b = _ends(self.values, self.alpha)
        self.lo, self.hi = max(self.lo, a), min(self.hi, b)
        return self

    @classmethod
    def of(cls, values: Sequence[float], alpha: float = ALPHA) -> "Running":
        out = cls(alpha)
        for v in values:
            out.add(v)
        return out


def confidence_sequence(values: Sequence[float], alpha: float = ALPHA) -> tuple[float, float]:
    """The sequence after the last of `values` (in the order they were measured)."""
    r = Running.of(values, alpha)
    return r.lo, r.hi


@dataclass(frozen=True)
class Decision:
    kind: str  # EFFECT, NEGLIGIBLE or OPEN
    lo: float
    hi: float
    n: int  # the values (processes, boots) it saw
    more: int | None = None  # OPEN: about how many more values would decide it at this spread; None: none would

    @property
    def decided(self) -> bool:
        return self.kind in DECIDED


def _needed(frac: float, n: int, alpha: float) -> int | None:
    """Values needed for a side's wealth to reach 2 / alpha when a share `frac` of them falls on it."""
    if frac <= 0.5:
        return None
    for k in range(max(n, 1), n + MORE_MAX + 1):
        a = round(k * frac)
        if wealth(a, k - a) >= 2.0 / alpha:
            return k
    return None


def _more(values: Sequence[float], null: float, margin: float, alpha: float) -> int | None:
    """How many more values would decide, if the next ones spread as these do: the nearer of the effect
    (the share on the median's side of the null) and negligible (the smaller share inside either end of
    the margin)."""
    n = len(values)
    if not n:
        return None
    up = sum(v > null for v in values) / n
    down = sum(v < null for v in values) / n
    options = [_needed(max(up, down), n, alpha)]
    if margin > 0:
        inside = min(sum(v < null + margin for v in values), sum(v > null - margin for v in values)) / n
        options.append(_needed(inside, n, alpha))
    found = [k for k in options if k is not None]
    return max(1, min(found) - n) if found else None


def judge(r: Running, null: float = 0.0, margin: float = 0.0) -> Decision:
    """The decision a running sequence allows now."""
    lo, hi, n = r.lo, r.hi, len(r.values)
    if margin > 0 and null - margin < lo and hi < null + margin:
        return Decision(NEGLIGIBLE, lo, hi, n)
    if lo > null or hi < null:
        return Decision(EFFECT, lo, hi, n)
    return Decision(OPEN, lo, hi, n, _more(r.values, null, margin, r.alpha))


def decide(values: Sequence[float], null: float = 0.0, margin: float = 0.0, alpha: float = ALPHA) -> Decision:
    """The decision after `values` (one per process or boot, in the order they ran; NaN ones left out)."""
    return judge(Running.of([v for v in values if not math.isnan(v)], alpha), null, margin)


def first_decision() -> int:
    """The fewest values that can decide (all on one side)."""
    return next(k for k in range(1, MORE_MAX) if wealth(k, 0) >= 2.0 / ALPHA)


def coverage_text(alpha: float = ALPHA) -> str:
    return f"{100 * (1 - alpha):.0f} % at every look ({METHOD})"
