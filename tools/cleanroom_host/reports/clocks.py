"""Comparing machines in time, not in ticks of two clocks.

An invariant TSC is a clock of its own rate on each machine: the ticks of two machines are two units,
like instructions and ticks, which compare already refuses to divide. Where the sets of a comparison
were timed by TSCs of different rates (more apart than their rates' stated uncertainty, and than
SAME_CLOCK), every TSC-timed figure is taken in nanoseconds, each set's ticks over its own rate: its
cases' medians, samples and intervals, and its derived values in ticks. A set whose rate is unknown
(`tsc.hz` 0) keeps ticks of its own, a unit nothing else shares (never divided). Instruction counts
(qemu-icount, Bochs) stay instructions; values without a unit of time (ratios, percentages, counts)
compare as they are. Sets on one clock compare in ticks, as they always did.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from ..records import model
from ..records.results import ResultSet
from ..machines.machine import Machine
from .context import Derived, Run
from .paper import describe_cpu, size_text

NS = "ns"
MODEL_NOTE = "with the cache/TLB model"  # a qemu-model run's platform
SAME_CLOCK = 1e-3  # two rates this close (0.1 %) are one clock, whatever their stated uncertainty
# A rate whose record states no uncertainty (an older log, a PIT calibration): the kernel's own tolerance
# for two sources to agree (tsc.tolerance_ppm: lib/clockpick.c)
UNSTATED_PPM = 5000
TICKED = ("med", "min", "max", "mean")  # a result's figures in its unit (and its `samples`)


@dataclass(frozen=True)
class Clock:
    """One set's TSC as a clock: its rate (0: unknown), how it was known, and how sure."""

    hz: float
    method: str
    ppm: float  # the rate's stated uncertainty, parts per million
    ticks: bool  # the set's TSC-timed values are ticks of this clock (False: instructions)

    @classmethod
    def of(cls, rs: ResultSet, machine: Machine) -> "Clock":
        tsc = rs.first("tsc") or {}
        hz = tsc.get("hz") if isinstance(tsc.get("hz"), (int, float)) else 0
        method = str(tsc.get("method") or "none")
        spread = tsc.get("spread_ppm") if isinstance(tsc.get("spread_ppm"), dict) else {}
        stated = [v for v in (spread.get(method), tsc.get("pair_ppm") if tsc.get("agree") else None)
                  if isinstance(v, (int, float)) and v > 0]
        ppm = max(stated) if stated else UNSTATED_PPM
        return cls(float(hz or 0), method, float(ppm), machine.units.short != "instructions")

    @property
    def known(self) -> bool:
        return self.hz > 0

    def same(self, other: "Clock") -> bool:
        """Two known rates within their uncertainties (and SAME_CLOCK) of each other."""
        allowed = max(SAME_CLOCK, (self.ppm + other.ppm) / 1e6)
        return abs(self.hz - other.hz) <= allowed * max(self.hz, other.hz)

    def text(self) -> str:
        if not self.ticks:
            return "TSC counts instructions"
        if not self.known:
            return "TSC rate unknown (its ticks are a unit of their own)"
        return f"TSC {self.hz / 1e9:.3f} GHz ({self.method}, +-{self.ppm:g} ppm)"


@dataclass(frozen=True)
class Timing:
    """How one comparison takes its sets' TSC-timed figures: in ticks (one clock), or in nanoseconds."""

    ids: list[str]
    clocks: list[Clock]
    in_ns: bool  # the known rates differ
    timed: int  # how many sets count TSC ticks (an unknown rate is a unit of its own where there are two)

    def factor(self, i: int) -> float | None:
        """Nanoseconds per tick of set i, when its ticks are converted; None: as they are."""
        c = self.clocks[i]
        return 1e9 / c.hz if self.in_ns and c.ticks and c.known else None

    def own_unit(self, i: int) -> str | None:
        """Set i's ticks as a unit of their own (a rate unknown where the others are converted)."""
        c = self.clocks[i]
        return f"TSC ticks of {self.ids[i]}" if self.timed > 1 and c.ticks and not c.known else None

    def unit_text(self, i: int, units_name: str) -> str:
        """What set i's TSC-timed figures are counted in, for the key."""
        if self.factor(i) is not None:
            return f"{NS}: its TSC ticks / {self.clocks[i].hz / 1e9:.3f} GHz"
        own = self.own_unit(i)
        return f"{own}: its rate is unknown, never divided" if own else units_name

    def note(self) -> list[str]:
        """The lines that say why the figures are in nanoseconds (none on one clock)."""
        own = [self.ids[i] for i in range(len(self.clocks)) if self.own_unit(i)]
        unknown = ([f"{', '.join(own)}: TSC rate unknown, so {'its' if len(own) == 1 else 'their'} ticks are a "
                    "unit of their own, never divided"] if own else [])
        if not self.in_ns:
            return unknown
        rates = ", ".join(f"{i} {c.hz / 1e9:.3f} GHz" for i, c in zip(self.ids, self.clocks) if c.ticks and c.known)
        return [f"in time: the sets' TSCs run at different rates ({rates}): every TSC-timed median, interval "
                f"and ratio is in {NS}, each set's ticks over its own rate (compare.csv keeps the ticks); "
                "ratios, percentages and counts compare as they are"] + unknown


def timing(ids: list[str], sets: list[ResultSet]) -> Timing:
    """The clocks of these sets, and whether their ticks are one unit."""
    clocks = [Clock.of(rs, Run.of(rs.records, rs.doc).machine) for rs in sets]
    known = [c for c in clocks if c.ticks and c.known]
    in_ns = any(not a.same(b) for a in known for b in known)
    return Timing(ids, clocks, in_ns, sum(c.ticks for c in clocks))


def platform_of(rs: ResultSet, machine: Machine) -> str:
    """'qemu-icount', 'hosted', 'qemu-icount with the cache/TLB model (prestonia)'."""
    info = model.run_info(rs.doc)
    return machine.kind + (f" {MODEL_NOTE} ({info.get('preset', '?')})" if info else "")


def machine_text(rs: ResultSet, clock: Clock) -> str:
    """One set's machine and clock for the key: CPU, platform, the TSC's rate and how it was known, caches."""
    run = Run.of(rs.records, rs.doc)
    caches = ", ".join(f"{c.name} {size_text(c.size)}" for c in run.machine.caches)
    return (f"{describe_cpu(run.first('cpu'))}, {platform_of(rs, run.machine)}; {clock.text()}"
            + (f"; caches {caches}" if caches else ""))


def _scaled_record(rec: dict[str, Any], factor: float | None, own: str | None) -> dict[str, Any]:
    """A result in ns (its ticks kept under `ticks`), or in its set's own unit; others as they are."""
    if rec.get("t") != "result" or rec.get("unit") != "cycles" or (factor is None and own is None):
        return rec
    out = dict(rec)
    if own is not None:
        out["unit"] = own
        return out
    assert factor is not None
    out["ticks"] = {k: rec[k] for k in (*TICKED, "samples") if k in rec}
    for k in TICKED:
        if isinstance(rec.get(k), (int, float)) and not isinstance(rec.get(k), bool):
            out[k] = rec[k] * factor
    if isinstance(rec.get("samples"), list):
        out["samples"] = [s * factor if isinstance(s, (int, float)) else s for s in rec["samples"]]
    out["unit"] = NS
    return out


def in_time(t: Timing, sets: list[ResultSet]) -> list[ResultSet]:
    """The sets with their TSC-timed results in this comparison's unit (the sets themselves on one clock)."""
    if not any(t.factor(i) is not None or t.own_unit(i) for i in range(len(sets))):
        return sets
    out = []
    for i, rs in enumerate(sets):
        doc = dict(rs.doc)
        doc["records"] = [_scaled_record(r, t.factor(i), t.own_unit(i)) if isinstance(r, dict) else r
                          for r in rs.records]
        out.append(replace(rs, doc=doc))
    return out


def derived_in_time(t: Timing, i: int, derived: list[Derived], ticks: str) -> list[Derived]:
    """Set i's derived values with those in TSC ticks (unit `ticks`, or `ticks/...`) in ns, or in its own
    unit; the rest (ratios, percentages, instructions) as they are."""
    factor, own = t.factor(i), t.own_unit(i)
    if factor is None and own is None:
        return derived
    out = []
    for d in derived:
        if d.unit == ticks or d.unit.startswith(ticks + "/"):
            unit = (own or NS) + d.unit[len(ticks):]
            value = d.value.scale(factor) if factor is not None and d.value is not None else d.value
            d = replace(d, unit=unit, value=value)
        out.append(d)
    return out
