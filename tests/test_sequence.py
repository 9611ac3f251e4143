"""The decision rule under repeated looks (stats/sequence.py): on null sets drawn from real hosted samples,
looking after every process, it claims an effect no more often than its stated rate; a fixed-sample
interval stopped at its first exclusion claims far more (so this test can fail)."""

from __future__ import annotations

import math
import random
from pathlib import Path

import pytest

from cleanroom_host.records.replicas import parse_sets
from cleanroom_host.reports.decisions import default_margin
from cleanroom_host.stats import ranks, sequence

FIXTURE = Path(__file__).parent / "fixtures" / "hosted-workset-processes.log"
SETS = 2000  # null sets per rule
LOOKS = 20  # processes per set at most: a look after each
SLACK = 0.01  # the simulation's own error: sqrt(0.05 * 0.95 / 2000) = 0.005, twice


def _shapes() -> list[tuple[list[float], list[float]]]:
    """Per workset case of the fixture (10 processes x 4 rounds of a hosted workset, both page sizes):
    each process's median over the case's grand median (the between-process variation), and each
    round over its process's median (the skew and outliers inside one)."""
    res = parse_sets(FIXTURE.read_bytes())[0]
    out = []
    for r in res.records:
        if r.get("t") != "result" or r.get("bench") != "workset":
            continue
        by: dict[int, list[float]] = {}
        for v, g in zip(r["samples"], r["replica"]):
            by.setdefault(g, []).append(float(v))
        meds = {g: ranks.median(vs) for g, vs in by.items()}
        grand = ranks.median(list(meds.values()))
        out.append(([m / grand for m in meds.values()], [v / meds[g] for g, vs in by.items() for v in vs]))
    return out


SHAPES = _shapes()


def _null_value(rng: random.Random, between: list[float], within: list[float]) -> float:
    """One process's value of a null quantity: B over A - 1 in %, A and B drawn alike (each its own
    process offset and round), one round a process as make run's hosted part takes."""
    a = rng.choice(between) * rng.choice(within)
    b = rng.choice(between) * rng.choice(within)
    return 100.0 * (b / a - 1.0)


def _claims(rule, seed: int) -> float:
    """The share of SETS null sets in which `rule` (values so far -> claims an effect) claims one at
    some look."""
    rng = random.Random(seed)
    claimed = 0
    for _ in range(SETS):
        between, within = rng.choice(SHAPES)
        values: list[float] = []
        state = rule()
        for _look in range(LOOKS):
            values.append(_null_value(rng, between, within))
            if state(values):
                claimed += 1
                break
    return claimed / SETS


def _anytime():
    running = sequence.Running()

    def look(values: list[float]) -> bool:
        running.add(values[-1])
        return sequence.judge(running, 0.0, default_margin()).kind == sequence.EFFECT
    return look


def _fixed_at_every_look():
    def look(values: list[float]) -> bool:
        if len(values) < 5:  # the fixed interval's first look, as the report's 5 processes give it
            return False
        r = ranks.median_interval(values)
        return r.lo > 0 or r.hi < 0
    return look


def test_the_fixture_has_between_process_variation() -> None:
    """The draws carry what real hosted runs have: processes apart by more than their rounds."""
    spreads = [max(b) - min(b) for b, _ in SHAPES]
    assert len(SHAPES) >= 20 and max(spreads) > 0.02


def test_the_rule_keeps_its_rate_under_repeated_looks() -> None:
    rate = _claims(_anytime, 1)
    assert rate <= sequence.ALPHA + SLACK, rate


def test_a_fixed_interval_stopped_at_its_first_exclusion_exceeds_it() -> None:
    """The same null sets, each process a look: the fixed-sample rank interval (93.8-96.9 % at each n)
    read after every process claims an effect well above 5 %."""
    rate = _claims(_fixed_at_every_look, 1)
    assert rate > 2 * sequence.ALPHA, rate


def test_one_fixed_look_keeps_its_rate() -> None:
    """Read once, at the last look, the fixed interval is within its coverage: the looks make the
    difference, not the draws."""
    rng = random.Random(2)
    misses = 0
    for _ in range(SETS):
        between, within = rng.choice(SHAPES)
        r = ranks.median_interval([_null_value(rng, between, within) for _ in range(LOOKS)])
        misses += r.lo > 0 or r.hi < 0
    assert misses / SETS <= 1 - ranks.median_interval([0.0] * LOOKS).coverage + SLACK


@pytest.mark.parametrize("values, kind", [
    ([70.1, 68.2, 73.0, 66.4, 71.9, 69.5], sequence.EFFECT),  # six processes agree
    ([70.1, 68.2, 73.0, 66.4, 71.9], sequence.OPEN),  # five cannot decide at every look's 95 %
    ([0.2, -0.3, 0.4, 0.1, -0.2, 0.3, 0.0], sequence.NEGLIGIBLE),
    ([0.2, -0.3, 4.0, 0.1, -2.5, 0.3, 0.0], sequence.OPEN),
])
def test_decisions(values: list[float], kind: str) -> None:
    d = sequence.decide(values, 0.0, default_margin())
    assert d.kind == kind and d.lo <= ranks.median(values) <= d.hi
    if kind == sequence.OPEN:
        assert d.more is not None and d.more >= 1


def test_the_sequence_is_never_wider_than_before() -> None:
    """Intersected over the looks: a later look never widens it; an outlier does not move it far."""
    values = [5.0, 6.0, 5.5, 4.8, 5.2, 6.1, 5.9, 400.0, 5.1]
    widths = [sequence.confidence_sequence(values[:t])[1] - sequence.confidence_sequence(values[:t])[0]
              for t in range(6, len(values) + 1)]
    assert all(b <= a for a, b in zip(widths, widths[1:])) and math.isfinite(widths[-1])
    assert sequence.confidence_sequence(values)[1] < 10
