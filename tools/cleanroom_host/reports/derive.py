"""The quantities of Klimiankou 2018, Figures 3-8, from `workset` results.

Every input is a result record of bench `workset`: TSC ticks of one whole
series (both buffers refilled `reps` times each), case `single` or `multi`.
A value is carried as an Interval (interval.py) with a stated coverage: the
cases of one size were measured in turn, one sample of each per round, so
a quantity of them is computed round by round and its interval is the
order-statistic interval of the per-round values (records without samples:
interval arithmetic of min..max). docs/REPORT.md gives each formula.

The virtual-memory quantities (Figures 5-8) compare a mode against its
baseline: paging on (4 KiB or 4 MiB pages) against paging off in the kernel;
in the hosted build, where paging cannot be switched off, 4 KiB pages
against 2 MiB pages (`pages=both`): the page-size effect, the part of the
VM overhead that the TLB's reach decides.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any, Iterable

from ..records.kinds import Units
from ..records.protocol import Record
from ..stats.interval import Interval

__all__ = ["Interval", "Series", "Row", "Quantity", "QUANTITIES", "derive", "pick", "extreme", "mode_of"]

NAN = math.nan
WORKSET = "workset"
CTXSW = "ctxsw"
# Params that place a point on a curve rather than name the curve (the quick
# suite scales reps with the size, so reps belongs to the point; pages and
# pages_got are the hosted build's VM axis, as paging is the kernel's).
POINT_KEYS = ("size", "reps", "paging", "pagesize", "pages", "pages_got")
OFF = "off"
HOST = "host"
# The hosted page-size comparison: (mode, its baseline)
HOST_SMALL, HOST_LARGE = "host/4k", "host/2m"

# Hardware events of the `counters` record, in its order, and how the tables name them.
EVENTS = ("core_cycles", "instructions", "l1d_read_misses", "llc_misses", "dtlb_read_misses")
EVENT_SHORT = {"core_cycles": "core cycles", "instructions": "instructions", "l1d_read_misses": "L1d misses",
               "llc_misses": "LLC misses", "dtlb_read_misses": "dTLB misses"}
EVENT_UNIT = {"core_cycles": "core cycles", "instructions": "instructions", "l1d_read_misses": "misses",
              "llc_misses": "misses", "dtlb_read_misses": "misses"}
# The cache/TLB model's figures (qemu-model, model.py): a workset result seen through the model carries
# them as its counters, already per operation. Misses count loads and stores, the page walks' reads included.
MODEL_EVENTS = ("l1d_misses", "l2_misses", "l3_misses", "tlb_misses", "walk_reads")
MISS_EVENTS = ("l1d_read_misses", "llc_misses", "dtlb_read_misses") + MODEL_EVENTS[:4]
EVENT_SHORT.update({"l1d_misses": "L1d misses (model)", "l2_misses": "L2 misses (model)",
                    "l3_misses": "L3 misses (model)", "tlb_misses": "dTLB misses (model)",
                    "walk_reads": "page-walk reads (model)"})
EVENT_UNIT.update({e: "misses" for e in MODEL_EVENTS[:4]}, walk_reads="reads")


def mode_of(params: dict[str, Any]) -> str:
    """'off', 'on/4k' or 'on/4m'; hosted: 'host', or 'host/4k' and 'host/2m' when the run says which
    pages it asked for (`pages`); any other value as it is."""
    paging = str(params.get("paging", OFF))
    if paging == HOST and params.get("pages") is not None:
        return f"{HOST}/{params.get('pages')}"
    if paging != "on":
        return paging
    return f"{paging}/{params.get('pagesize', '4k')}"


def series_of(params: dict[str, Any]) -> str:
    """The curve a point belongs to: every param but size, reps and the VM axis, as text."""
    return " ".join(f"{k}={params[k]}" for k in params if k not in POINT_KEYS)


def vm_pairs(modes: Iterable[str]) -> list[tuple[str, str]]:
    """(mode, baseline) pairs of Figures 5-8: every paging-on mode against off; hosted 4 KiB
    against 2 MiB pages."""
    ms = list(modes)
    out = [(m, OFF) for m in ms if m.startswith("on/") and OFF in ms]
    if HOST_SMALL in ms and HOST_LARGE in ms:
        out.append((HOST_SMALL, HOST_LARGE))
    return out


def vm_label(mode: str, base: str = OFF) -> str:
    """The paging column of a VM row: 'on/4k-off'; hosted 'host/4k-2m'."""
    return f"{mode}-{base.rsplit('/', 1)[-1]}"


def effect_name(base: str) -> str:
    """What a VM comparison against this baseline measures."""
    if base == HOST_LARGE:
        return "page-size effect (4 KiB vs 2 MiB pages)"
    return "virtual memory"


@dataclass
class Series:
    """One curve family: workset medians by paging mode, size and case."""

    name: str
    points: dict[str, dict[int, dict[str, Interval]]] = field(default_factory=dict)
    reps: dict[int, int] = field(default_factory=dict)  # size -> reps (refills per buffer)
    runs: int = 1  # largest n seen: bands are drawn when > 1
    # mode -> size -> case -> event -> counter total per series (already divided by `per`)
    counters: dict[str, dict[int, dict[str, dict[str, Interval]]]] = field(default_factory=dict)
    # mode -> size -> case -> pages_got, where it differs from what was asked (hosted)
    got: dict[str, dict[int, dict[str, str]]] = field(default_factory=dict)

    def modes(self) -> list[str]:
        return sorted(self.points, key=lambda m: (m != OFF, m))

    def sizes(self, mode: str) -> list[int]:
        return sorted(self.points.get(mode, {}))

    def get(self, mode: str, size: int, case: str) -> Interval | None:
        return self.points.get(mode, {}).get(size, {}).get(case)

    def counter(self, mode: str, size: int, case: str, event: str) -> Interval | None:
        return self.counters.get(mode, {}).get(size, {}).get(case, {}).get(event)

    def events(self) -> list[str]:
        """The counter events any point of the series has, in the record's order."""
        seen = {e for by_size in self.counters.values() for cases in by_size.values()
                for evs in cases.values() for e in evs}
        known = EVENTS + MODEL_EVENTS
        return [e for e in known if e in seen] + sorted(seen - set(known))

    def fixed_reps(self) -> int | None:
        """The one reps value of every point, or None when it varies (quick suite)."""
        values = set(self.reps.values())
        return values.pop() if len(values) == 1 else None


def _int(v: Any) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def _counters(rec: Record) -> dict[str, Interval]:
    """A result's counters per operation: totals per sample divided by the record's `per`."""
    raw = rec.get("counters")
    if not isinstance(raw, dict):
        return {}
    per = _int(rec.get("per")) or 1
    return {str(name): Interval.of_stats(stats, rec.get("n")).scale(1.0 / per) for name, stats in raw.items()
            if isinstance(stats, dict)}


def collect_workset(records: Iterable[Record]) -> list[Series]:
    """Group workset results into series; a repeated point keeps the first. The cases of one size
    (every mode, single and multi) were measured in one set: their samples pair up round by round."""
    found: dict[str, Series] = {}
    token = object()  # one per collection: sets of two different runs never pair
    for r in records:
        if r.get("t") != "result" or r.get("bench") != WORKSET:
            continue
        params = r.get("params")
        case = r.get("case")
        if not isinstance(params, dict) or case not in ("single", "multi"):
            continue
        size = _int(params.get("size"))
        if size is None or size < 0:
            continue
        name = series_of(params)
        s = found.setdefault(name, Series(name))
        reps = _int(params.get("reps"))
        if reps is not None and reps > 0:
            s.reps.setdefault(size, reps)
        mode = mode_of(params)
        cases = s.points.setdefault(mode, {}).setdefault(size, {})
        if str(case) in cases:
            continue
        cases[str(case)] = Interval.of(r, pair=(token, name, size))
        ctrs = _counters(r)
        if ctrs:
            s.counters.setdefault(mode, {}).setdefault(size, {})[str(case)] = ctrs
        got = params.get("pages_got")
        if got is not None and got != params.get("pages"):
            s.got.setdefault(mode, {}).setdefault(size, {})[str(case)] = str(got)
        n = _int(r.get("n"))
        if n is not None:
            s.runs = max(s.runs, n)
    return list(found.values())


@dataclass(frozen=True)
class Quantity:
    key: str
    figure: int
    unit: str  # "{u}" stands for the run's unit ("TSC ticks", "instructions")
    title: str

    def unit_text(self, units: Units | None) -> str:
        return self.unit.replace("{u}", units.short if units else "TSC ticks")


# The paper's Figures 3-8, one entry per plotted quantity (docs/REPORT.md).
QUANTITIES: tuple[Quantity, ...] = (
    Quantity("conc_abs", 3, "{u}/series", "concurrency overhead: multi - single"),
    Quantity("conc_per_quantum", 3, "{u}/quantum", "the same per quantum: (multi - single) / (2 reps)"),
    Quantity("conc_rel", 4, "%", "relative concurrency overhead: (multi - single) / single"),
    Quantity("vm_on_conc", 5, "%", "impact of VM on concurrency overhead: (ovh_on - ovh_off) / ovh_off"),
    Quantity("vm_abs_single", 6, "{u}/series", "VM overhead, single: single_on - single_off"),
    Quantity("vm_abs_multi", 6, "{u}/series", "VM overhead, multi: multi_on - multi_off"),
    Quantity("vm_abs_single_per_quantum", 6, "{u}/quantum", "the same per refill: / (2 reps)"),
    Quantity("vm_abs_multi_per_quantum", 6, "{u}/quantum", "the same per quantum: / (2 reps)"),
    Quantity("vm_rel_single", 7, "%", "relative VM overhead, single: (single_on - single_off) / single_off"),
    Quantity("vm_rel_multi", 7, "%", "relative VM overhead, multi: (multi_on - multi_off) / multi_off"),
    Quantity("conc_on_vm", 8, "%", "impact of concurrency on VM overhead: (vm_multi - vm_single) / vm_single"),
) + tuple(
    Quantity(f"conc_{e}_per_quantum", 3, f"{EVENT_UNIT[e]}/quantum",
             f"{EVENT_SHORT[e]} per quantum of multi - single (counters)") for e in EVENTS + MODEL_EVENTS
) + tuple(
    Quantity(f"vm_{e}_{case}_per_refill", 6, f"{EVENT_UNIT[e]}/refill",
             f"{EVENT_SHORT[e]} per refill, {case}: on - off (counters)")
    for e in EVENTS + MODEL_EVENTS for case in ("single", "multi")
)
QUANTITY = {q.key: q for q in QUANTITIES}


def conc_counter(event: str) -> str:
    return f"conc_{event}_per_quantum"


def vm_counter(event: str, case: str) -> str:
    return f"vm_{event}_{case}_per_refill"


@dataclass(frozen=True)
class Row:
    """One derived value: a quantity of a series at one paging mode and size."""

    series: str
    paging: str  # 'off', 'on/4k'; a VM row: 'on/4k-off' ('host/4k-2m' hosted)
    size: int
    quantity: str
    value: Interval
    base: str = ""  # a VM row's baseline mode ('off', 'host/2m'); '' otherwise
    runs: int = 0  # recorded runs per input (the series' n): how often noise passes for a finding

    @property
    def figure(self) -> int:
        return QUANTITY[self.quantity].figure if self.quantity in QUANTITY else 0

    @property
    def is_vm(self) -> bool:
        return bool(self.base)

    @property
    def mode(self) -> str:
        """The mode of a row; a VM row's measured mode (not its baseline)."""
        return self.paging[: -len(self.base.rsplit("/", 1)[-1]) - 1] if self.base else self.paging

    def unit(self, units: Units | None = None) -> str:
        q = QUANTITY.get(self.quantity)
        return q.unit_text(units) if q else ""


def derive_series(s: Series) -> list[Row]:
    """Every quantity of Figures 3-8 (and the counters' per-quantum figures) the series has data for."""
    rows: list[Row] = []
    overhead: dict[str, dict[int, Interval]] = {}
    events = s.events()
    for mode in s.modes():
        for size in s.sizes(mode):
            single, multi = s.get(mode, size, "single"), s.get(mode, size, "multi")
            if single is None or multi is None:
                continue
            reps = s.reps.get(size)
            ovh = multi - single
            overhead.setdefault(mode, {})[size] = ovh
            rows.append(Row(s.name, mode, size, "conc_abs", ovh))
            if reps:
                rows.append(Row(s.name, mode, size, "conc_per_quantum", ovh.scale(1.0 / (2 * reps))))
            rows.append(Row(s.name, mode, size, "conc_rel", multi.rel(single)))
            for e in events:
                cs, cm = s.counter(mode, size, "single", e), s.counter(mode, size, "multi", e)
                if cs is not None and cm is not None and reps:
                    rows.append(Row(s.name, mode, size, conc_counter(e), (cm - cs).scale(1.0 / (2 * reps))))
    for mode, base in vm_pairs(s.modes()):
        label = vm_label(mode, base)
        for size in s.sizes(mode):
            reps = s.reps.get(size)
            vm: dict[str, Interval] = {}
            for case in ("single", "multi"):
                on, off = s.get(mode, size, case), s.get(base, size, case)
                if on is None or off is None:
                    continue
                vm[case] = on - off
                rows.append(Row(s.name, label, size, f"vm_abs_{case}", vm[case], base))
                if reps:
                    rows.append(Row(s.name, label, size, f"vm_abs_{case}_per_quantum",
                                    vm[case].scale(1.0 / (2 * reps)), base))
                rows.append(Row(s.name, label, size, f"vm_rel_{case}", on.rel(off), base))
                for e in events:
                    c_on, c_off = s.counter(mode, size, case, e), s.counter(base, size, case, e)
                    if c_on is not None and c_off is not None and reps:
                        rows.append(Row(s.name, label, size, vm_counter(e, case),
                                        (c_on - c_off).scale(1.0 / (2 * reps)), base))
            ovh_on, ovh_off = overhead.get(mode, {}).get(size), overhead.get(base, {}).get(size)
            if ovh_on is not None and ovh_off is not None:
                rows.append(Row(s.name, label, size, "vm_on_conc", ovh_on.rel(ovh_off), base))
            if "single" in vm and "multi" in vm:
                rows.append(Row(s.name, label, size, "conc_on_vm", vm["multi"].rel(vm["single"]), base))
    rows = [replace(r, runs=s.runs) for r in rows]
    order = {q.key: i for i, q in enumerate(QUANTITIES)}
    rows.sort(key=lambda r: (order.get(r.quantity, len(order)), r.paging != OFF, r.paging, r.size))
    return rows


def derive(records: Iterable[Record]) -> tuple[list[Series], list[Row]]:
    series = collect_workset(records)
    rows = [row for s in series for row in derive_series(s)]
    return series, rows


def pick(rows: Iterable[Row], quantity: str, series: str | None = None,
         paging: str | None = None) -> list[Row]:
    """The rows of one quantity (optionally one series and paging label), by size."""
    out = [r for r in rows if r.quantity == quantity
           and (series is None or r.series == series) and (paging is None or r.paging == paging)]
    return sorted(out, key=lambda r: r.size)


def extreme(rows: Iterable[Row], want: str = "max") -> Row | None:
    """The row with the largest (or smallest) median, NaN ignored."""
    good = [r for r in rows if r.value.ok]
    if not good:
        return None
    return (max if want == "max" else min)(good, key=lambda r: r.value.mid)


# --- ctxsw -----------------------------------------------------------------

SYMMETRIC, ASYMMETRIC, RR = "symmetric", "asymmetric", "rr"
SHAPES = (SYMMETRIC, ASYMMETRIC)
LOOP = "loop"


@dataclass(frozen=True)
class SwitchPoint:
    case: str  # pushad, callee, fxsave, fxsave/fnsave, jump, rr, loop
    mode: str
    n: int  # fibers (2 for the ping-pong cases)
    value: Interval
    runs: int
    shape: str = ""  # symmetric, asymmetric, rr; "" in a log from before the shapes
    routine: str = ""  # params.switch: the routine (a loop: the routine it was measured beside)


def collect_ctxsw(records: Iterable[Record]) -> list[SwitchPoint]:
    """The ctxsw results; a routine's shapes and loops were measured in one set, the round robins and
    their loop in another (per paging mode): their samples pair up round by round."""
    points: list[SwitchPoint] = []
    token = object()
    for r in records:
        if r.get("t") != "result" or r.get("bench") != CTXSW:
            continue
        raw = r.get("params")
        params: dict[str, Any] = raw if isinstance(raw, dict) else {}
        case = str(r.get("case"))
        if case == "fxsave" and params.get("save") not in (None, "fxsave"):
            case = f"fxsave/{params.get('save')}"
        n = params.get("n")
        runs = r.get("n")
        shape = str(params.get("shape", ""))
        pair = (token, str(params.get("switch", "")), shape == RR, mode_of(params))
        points.append(SwitchPoint(case, mode_of(params), n if isinstance(n, int) else 2,
                                  Interval.of(r, pair), runs if isinstance(runs, int) else 1,
                                  shape, str(params.get("switch", ""))))
    return points


@dataclass(frozen=True)
class SwitchCost:
    """One switch routine (or the round robin over n fibers) in one shape and memory mode: the run's
    total per switch, the loop measured beside it (the same loop with an empty call for the switch),
    and the switch alone, total - loop, round by round (interval arithmetic without samples). A log
    from before the shapes recorded only the difference: total and loop are unknown there."""

    variant: str  # pushad, callee, fxsave, fxsave/fnsave, jump, rr
    shape: str  # symmetric, asymmetric, rr, or ""
    mode: str
    n: int
    total: Interval
    loop: Interval
    alone: Interval
    runs: int


def switch_costs(points: Iterable[SwitchPoint]) -> list[SwitchCost]:
    """Every non-loop point with its loop (same routine, shape and mode), in record order."""
    pts = list(points)
    loops = {(p.routine, p.shape, p.mode): p for p in pts if p.case == LOOP}
    out: list[SwitchCost] = []
    for p in pts:
        if p.case == LOOP:
            continue
        if not p.shape:  # before the shapes: the record was already the switch minus its loop
            out.append(SwitchCost(p.case, "", p.mode, p.n, Interval.none(), Interval.none(), p.value, p.runs))
            continue
        loop = loops.get((p.routine, p.shape, p.mode))
        base = loop.value if loop is not None else Interval.none()
        out.append(SwitchCost(p.case, p.shape, p.mode, p.n, p.value, base, p.value - base, p.runs))
    return out
