"""runs=auto across processes (boots): a sweep that decides every size.

Where the clock is real a run is several processes (hosted) or boots, and the unit of replication is
the process (records/replicas.py). After the run's first ones (`run --boots N`, default 5), this adds
processes to the sets still open, one at a time, and looks again after each: every point of the
working-set sweep (reports/decisions.py: Figure 4's concurrency overhead, Figure 7's page-size effect) is
decided by a confidence sequence that stays valid however often it is looked at (stats/sequence.py):
its effect is there, it is negligible (inside margin=), or it is open. An added process measures the
open sizes only (`bench=workset sizes=... added=K`, the run's command line otherwise), the most
promising first (the fewest processes still to go), and runs the rounds each of the first took, so
that its values are drawn as theirs were; records/replicas.py merges it with the run.

It stops when every size is decided, or when the next process would overrun the budget: budget=Ns
on the command line is, on a real clock, the whole run's seconds (taken off the command line the
kernel gets: the kernel alone, in a capture or from a stick, reads it per set); without it, the
added processes may take as long as the first ones took (DEFAULT_ADDED_SHARE).
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable

from .machines import emulators
from .records.protocol import ParseResult
from .records.replicas import ADDED_KEY, level_of, parse_sets, stamp_clock
from .records.results import SERIAL_LOG, write_results
from .reports import decisions
from .reports.derive import WORKSET, derive
from .stats import sequence

# Without budget=Ns: the added processes may take this share of what the first ones took.
DEFAULT_ADDED_SHARE = 1.0
# The share of a process's time that is its start and its buffers' first touch whatever it measures,
# not its sets' rounds (a hosted make run's process: ~0.5 s of 2.3).
FIXED_SHARE = 0.2
_BUDGET = re.compile(r"^budget=([0-9]+)s$")
DECISION_FIELD = "decision"  # results.csv / results.json: each workset result's set decided or open


def take_budget(cmdline: str | None) -> tuple[str | None, float | None]:
    """The command line without a budget in seconds, and those seconds (None: none given)."""
    if cmdline is None:
        return None, None
    kept, seconds = [], None
    for token in cmdline.split():
        m = _BUDGET.match(token)
        if m:
            seconds = float(m.group(1))
        else:
            kept.append(token)
    return " ".join(kept), seconds


def _with(cmdline: str, **keys: str) -> str:
    """The command line with keys set (replaced where present, appended where not)."""
    out = [t for t in cmdline.split() if t.split("=", 1)[0] not in keys]
    return " ".join(out + [f"{k}={v}" for k, v in keys.items()])


@dataclass
class Sweep:
    """runner.MoreBoots: the processes added to decide the open sets (module docstring)."""

    budget: float | None  # the whole run's seconds (budget=Ns), None: DEFAULT_ADDED_SHARE
    word: str  # "process" or "boot"
    clock: Callable[[], float] = time.monotonic
    started: float = field(default=0.0)
    first: float = 0.0  # seconds the run's first processes took
    first_ran: int = 0  # how many they were
    scale: float = 1.0  # the most an added process took over _model's estimate (at least 1)
    cost: dict[int, float] = field(default_factory=dict)  # each size's share of a round (_size_seconds)
    added: list[dict[str, Any]] = field(default_factory=list)
    stopped: str = ""
    tallies: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.started = self.clock()

    def _limit(self) -> float:
        return self.budget if self.budget is not None else self.first * (1 + DEFAULT_ADDED_SHARE)

    def _stop(self, why: str) -> None:
        self.stopped = why

    def _model(self, share: float) -> float:
        """A process's seconds for sizes of this share of a whole round (1: every size): its start and
        first touches, plus its share of a first process's rounds; scaled by the most any added process
        has taken over this model (`self.scale`)."""
        per = self.first / max(self.first_ran, 1)
        return self.scale * per * (FIXED_SHARE + (1 - FIXED_SHARE) * share)

    def next(self, spec: emulators.RunSpec, out_dir: Path, ran: int) -> tuple[emulators.RunSpec, str] | None:
        now = self.clock() - self.started
        if not self.added:
            self.first, self.first_ran = now, ran
        else:  # what the last one took (its start to now, this look included) against what was expected
            last = self.added[-1]
            last["seconds"] = round(now - last["at"], 3)
            self.scale = max(self.scale, last["seconds"] / max(self._model(last["share"]) / self.scale, 1e-3))
        sets = parse_sets((out_dir / SERIAL_LOG).read_bytes())
        res = sets[-1]
        if len(sets) != 1 or res.replicas != ran:
            return self._stop(f"the {ran} {self.word}es did not merge into one set")
        cfg = res.first("config")
        runs = cfg.get("cfg", {}).get("runs") if cfg is not None and isinstance(cfg.get("cfg"), dict) else None
        if runs != "auto":
            return self._stop("runs= is a number: the run takes what it says")
        found = _points(res)
        self.tallies = [f"{t.series}: {t.text()}" for t in decisions.tallies(found, self.word)]
        if not found:
            return self._stop("no working-set sweep to decide")
        opened = [p for p in found if p.decision.kind == sequence.OPEN]
        if not opened:
            return self._stop("every size decided")
        if not self.added:
            self.cost = _size_seconds(res.records)
        whole = sum(self.cost.values()) or 1.0
        # the most promising first: the fewest processes still to go (None: not at this spread)
        order: dict[int, int] = {}
        for p in opened:
            more = p.decision.more if p.decision.more is not None else sequence.MORE_MAX
            order[p.row.size] = max(order.get(p.row.size, 0), more)
        left = self._limit() - (self.clock() - self.started)
        chosen: list[int] = []
        share = 0.0
        for size in sorted(order, key=lambda s: (order[s], s)):
            more = self.cost.get(size, 0.0) / whole
            if self._model(share + more) <= left:
                chosen.append(size)
                share += more
        if not chosen:
            least = min(self.cost.get(s, 0.0) for s in order) / whole
            return self._stop(f"budget spent ({self._limit():.1f} s; {left:.1f} s left, the next {self.word} "
                              f"would take ~{self._model(least):.1f} s)")
        k = len(self.added) + 1
        sizes = sorted(chosen)
        cmdline = _with(spec.cmdline, bench=WORKSET, sizes=",".join(str(s) for s in sizes), **{ADDED_KEY: str(k)})
        self.added.append({"sizes": sizes, "at": round(self.clock() - self.started, 3), "share": round(share, 4)})
        label = f"{self.word} {ran + 1}: added for {len(sizes)} open size{'s' if len(sizes) != 1 else ''}"
        return replace(spec, cmdline=cmdline), label

    def info(self) -> dict[str, Any]:
        return {"sweep": {"budget_seconds": self.budget, "limit_seconds": round(self._limit(), 3),
                          "first_seconds": round(self.first, 3), "added": self.added, "stopped": self.stopped,
                          "method": sequence.coverage_text(), "tallies": self.tallies}}


def _points(res: ParseResult) -> list[decisions.Point]:
    """The set's decided points, its records read as the report reads them (each told its clock)."""
    _series, rows = derive(stamp_clock([dict(r) for r in res.records]))
    return decisions.points(rows, decisions.margin_points(res.records))


def _size_seconds(records: list[dict[str, Any]]) -> dict[int, float]:
    """Each size's share of a round: its workset cases' median ticks summed (relative: the unit cancels)."""
    out: dict[int, float] = {}
    for r in records:
        if r.get("t") == "result" and r.get("bench") == WORKSET and isinstance(r.get("params"), dict):
            size, med = r["params"].get("size"), r.get("med")
            if isinstance(size, int) and isinstance(med, (int, float)):
                out[size] = out.get(size, 0.0) + max(float(med), 0.0)
    return out


def stamp(out_dir: Path, outcome_run: dict[str, Any]) -> list[str]:
    """Each workset result of the run's set told its set's decision (`decision`: decided or open), results.json
    and results.csv written again; the tallies, one line a series."""
    sets = parse_sets((out_dir / SERIAL_LOG).read_bytes())
    if len(sets) != 1:
        return []
    res = sets[0]
    found = _points(res)
    if not found:
        return []
    by_size = decisions.set_decisions(found)
    for r in res.records:
        if r.get("t") == "result" and r.get("bench") == WORKSET and isinstance(r.get("params"), dict):
            d = by_size.get(r["params"].get("size"))
            if d is not None:
                r[DECISION_FIELD] = d
    write_results(out_dir, res, SERIAL_LOG, outcome_run)
    return [f"{t.series}: {t.text()}" for t in decisions.tallies(found, level_of(res.records))]
