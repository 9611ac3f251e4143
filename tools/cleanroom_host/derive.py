"""The quantities of Klimiankou 2018, Figures 3-8, from `workset` results.

Every input is a result record of bench `workset`: cycles of one whole
series (both buffers refilled `reps` times each), case `single` or `multi`.
A value is carried as an Interval: the median (`med`) and a band from the
run's min and max, combined by interval arithmetic, so a band holds every
value the recorded extremes allow. docs/REPORT.md gives each formula.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Iterable

from .protocol import Record

NAN = math.nan
WORKSET = "workset"
CTXSW = "ctxsw"
# Params that place a point on a curve rather than name the curve (the quick
# suite scales reps with the size, so reps belongs to the point).
POINT_KEYS = ("size", "reps", "paging", "pagesize")
OFF = "off"


@dataclass(frozen=True)
class Interval:
    """A median with the band [lo, hi] it may lie in (NaN: unknown)."""

    mid: float
    lo: float
    hi: float

    @classmethod
    def of(cls, rec: Record) -> "Interval":
        med = _num(rec.get("med"))
        lo, hi = _num(rec.get("min")), _num(rec.get("max"))
        return cls(med, lo if not math.isnan(lo) else med, hi if not math.isnan(hi) else med)

    @property
    def ok(self) -> bool:
        return not math.isnan(self.mid)

    def __sub__(self, other: "Interval") -> "Interval":
        return Interval(self.mid - other.mid, self.lo - other.hi, self.hi - other.lo)

    def scale(self, k: float) -> "Interval":
        a, b = self.lo * k, self.hi * k
        return Interval(self.mid * k, min(a, b), max(a, b))

    def ratio(self, den: "Interval") -> "Interval":
        """self / den; NaN when den's median is 0, no band when den's band holds 0."""
        if not self.ok or not den.ok or den.mid == 0:
            return Interval(NAN, NAN, NAN)
        mid = self.mid / den.mid
        if math.isnan(den.lo) or math.isnan(den.hi) or den.lo <= 0 <= den.hi:
            return Interval(mid, NAN, NAN)
        q = [a / b for a in (self.lo, self.hi) for b in (den.lo, den.hi)]
        return Interval(mid, min(q), max(q))

    def percent_of(self, den: "Interval") -> "Interval":
        """100 * self / den."""
        return self.ratio(den).scale(100.0)


def _num(v: Any) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return NAN
    return float(v)


def mode_of(params: dict[str, Any]) -> str:
    """'off', 'on/4k' or 'on/4m'; any other value as it is ('host': the hosted
    build, where Linux pages and the page size is not the kernel's)."""
    paging = str(params.get("paging", OFF))
    if paging != "on":
        return paging
    return f"{paging}/{params.get('pagesize', '4k')}"


def series_of(params: dict[str, Any]) -> str:
    """The curve a point belongs to: every param but size, reps and paging, as text."""
    return " ".join(f"{k}={params[k]}" for k in params if k not in POINT_KEYS)


@dataclass
class Series:
    """One curve family: workset medians by paging mode, size and case."""

    name: str
    points: dict[str, dict[int, dict[str, Interval]]] = field(default_factory=dict)
    reps: dict[int, int] = field(default_factory=dict)  # size -> reps (refills per buffer)
    runs: int = 1  # largest n seen: bands are drawn when > 1

    def modes(self) -> list[str]:
        return sorted(self.points, key=lambda m: (m != OFF, m))

    def sizes(self, mode: str) -> list[int]:
        return sorted(self.points.get(mode, {}))

    def get(self, mode: str, size: int, case: str) -> Interval | None:
        return self.points.get(mode, {}).get(size, {}).get(case)

    def fixed_reps(self) -> int | None:
        """The one reps value of every point, or None when it varies (quick suite)."""
        values = set(self.reps.values())
        return values.pop() if len(values) == 1 else None


def collect_workset(records: Iterable[Record]) -> list[Series]:
    """Group workset results into series; a repeated point keeps the first."""
    found: dict[str, Series] = {}
    for r in records:
        if r.get("t") != "result" or r.get("bench") != WORKSET:
            continue
        params = r.get("params")
        case = r.get("case")
        if not isinstance(params, dict) or case not in ("single", "multi"):
            continue
        size = params.get("size")
        if not isinstance(size, int) or isinstance(size, bool) or size < 0:
            continue
        name = series_of(params)
        s = found.setdefault(name, Series(name))
        reps = params.get("reps")
        if isinstance(reps, int) and not isinstance(reps, bool) and reps > 0:
            s.reps.setdefault(size, reps)
        cases = s.points.setdefault(mode_of(params), {}).setdefault(size, {})
        cases.setdefault(str(case), Interval.of(r))
        n = r.get("n")
        if isinstance(n, int) and not isinstance(n, bool):
            s.runs = max(s.runs, n)
    return list(found.values())


@dataclass(frozen=True)
class Quantity:
    key: str
    figure: int
    unit: str
    title: str


# The paper's Figures 3-8, one entry per plotted quantity (docs/REPORT.md).
QUANTITIES: tuple[Quantity, ...] = (
    Quantity("conc_abs", 3, "cycles/series", "concurrency overhead: multi - single"),
    Quantity("conc_per_quantum", 3, "cycles/quantum", "the same per quantum: (multi - single) / (2 reps)"),
    Quantity("conc_rel", 4, "%", "relative concurrency overhead: (multi - single) / single"),
    Quantity("vm_on_conc", 5, "%", "impact of VM on concurrency overhead: (ovh_on - ovh_off) / ovh_off"),
    Quantity("vm_abs_single", 6, "cycles/series", "VM overhead, single: single_on - single_off"),
    Quantity("vm_abs_multi", 6, "cycles/series", "VM overhead, multi: multi_on - multi_off"),
    Quantity("vm_abs_single_per_quantum", 6, "cycles/quantum", "the same per refill: / (2 reps)"),
    Quantity("vm_abs_multi_per_quantum", 6, "cycles/quantum", "the same per quantum: / (2 reps)"),
    Quantity("vm_rel_single", 7, "%", "relative VM overhead, single: (single_on - single_off) / single_off"),
    Quantity("vm_rel_multi", 7, "%", "relative VM overhead, multi: (multi_on - multi_off) / multi_off"),
    Quantity("conc_on_vm", 8, "%", "impact of concurrency on VM overhead: (vm_multi - vm_single) / vm_single"),
)
QUANTITY = {q.key: q for q in QUANTITIES}


@dataclass(frozen=True)
class Row:
    """One derived value: a quantity of a series at one paging mode and size."""

    series: str
    paging: str  # 'off', 'on/4k', or 'on/4k-off' for the VM quantities
    size: int
    quantity: str
    value: Interval

    @property
    def figure(self) -> int:
        return QUANTITY[self.quantity].figure

    @property
    def unit(self) -> str:
        return QUANTITY[self.quantity].unit


def vm_label(mode: str) -> str:
    return f"{mode}-{OFF}"


def derive_series(s: Series) -> list[Row]:
    """Every quantity of Figures 3-8 the series has data for."""
    rows: list[Row] = []
    overhead: dict[str, dict[int, Interval]] = {}
    for mode in s.modes():
        for size in s.sizes(mode):
            single, multi = s.get(mode, size, "single"), s.get(mode, size, "multi")
            if single is None or multi is None:
                continue
            ovh = multi - single
            overhead.setdefault(mode, {})[size] = ovh
            rows.append(Row(s.name, mode, size, "conc_abs", ovh))
            if size in s.reps:
                rows.append(Row(s.name, mode, size, "conc_per_quantum", ovh.scale(1.0 / (2 * s.reps[size]))))
            rows.append(Row(s.name, mode, size, "conc_rel", ovh.percent_of(single)))
    for mode in s.modes():
        if mode == OFF or OFF not in s.points:
            continue
        label = vm_label(mode)
        for size in s.sizes(mode):
            vm: dict[str, Interval] = {}
            for case in ("single", "multi"):
                on, off = s.get(mode, size, case), s.get(OFF, size, case)
                if on is None or off is None:
                    continue
                vm[case] = on - off
                rows.append(Row(s.name, label, size, f"vm_abs_{case}", vm[case]))
                if size in s.reps:
                    rows.append(Row(s.name, label, size, f"vm_abs_{case}_per_quantum",
                                    vm[case].scale(1.0 / (2 * s.reps[size]))))
                rows.append(Row(s.name, label, size, f"vm_rel_{case}", vm[case].percent_of(off)))
            ovh_on, ovh_off = overhead.get(mode, {}).get(size), overhead.get(OFF, {}).get(size)
            if ovh_on is not None and ovh_off is not None:
                rows.append(Row(s.name, label, size, "vm_on_conc", (ovh_on - ovh_off).percent_of(ovh_off)))
            if "single" in vm and "multi" in vm:
                rows.append(Row(s.name, label, size, "conc_on_vm", (vm["multi"] - vm["single"]).percent_of(vm["single"])))
    order = {q.key: i for i, q in enumerate(QUANTITIES)}
    rows.sort(key=lambda r: (order[r.quantity], r.paging != OFF, r.paging, r.size))
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

@dataclass(frozen=True)
class SwitchPoint:
    case: str  # pushad, callee, fxsave, fxsave/fnsave, rr
    mode: str
    n: int  # fibers (2 for the ping-pong cases)
    value: Interval
    runs: int


def collect_ctxsw(records: Iterable[Record]) -> list[SwitchPoint]:
    points: list[SwitchPoint] = []
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
        points.append(SwitchPoint(case, mode_of(params), n if isinstance(n, int) else 2,
                                  Interval.of(r), runs if isinstance(runs, int) else 1))
    return points
