"""`compare --plots`: the figures of several result sets, beside compare.csv. Each quantity of the
working-set sweep against size with a line per set (and paging mode), and each other table that
compares (a benchmark's cases, a report table's values in one unit) as bars, a group per row and a bar
per set. Sets in different units never share an axis: a figure has one panel per unit. Only tables
that two sets or more have are drawn, and bars only where a table has at most BARS_MOST rows (the
sweep's cases are its lines)."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from ..records.text import format_params
from ..stats.interval import Interval
from . import comparesets as cs
from .compare import OUTCOME_PARAMS, DerivedMatch, Match, common_prefix, params_common, params_rest
from .plotkit import DPI, errors_of, pyplot, save_figure, size_axis

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

BARS_MOST = 40  # rows a bar chart holds at the most
PANEL = (10.0, 4.6)  # inches per panel (one per unit)
KEY_WIDTH = 160  # characters of the sets' key a line above the first panel
LOG_SPAN = 50  # a bar chart's values spanning more than this factor get a log axis
STYLES = ("-o", "--s", ":^", "-.v", "-D")  # one per paging mode of a sweep figure (a variant of a k figure)
K_LINES = 8  # a k figure's lines per set at the most (its variants in the sets' order)


def color(i: int) -> str:
    return f"C{i % 10}"


def _panels(title: str, sides: list[cs.Side], present: list[int], n: int) -> tuple["Figure", list["Axes"]]:
    """A figure of n panels stacked (one per unit), its title and the key of the sets it shows."""
    fig, axes = pyplot().subplots(n, 1, figsize=(PANEL[0], PANEL[1] * n), dpi=DPI, squeeze=False)
    fig.suptitle(title, fontsize=12, fontweight="bold")
    key = "; ".join(f"{sides[i].id}: {sides[i].short}" for i in present)
    axes[0][0].set_title("\n".join(textwrap.wrap(key, KEY_WIDTH)), fontsize=8, color="dimgray")
    return fig, [row[0] for row in axes]


def by_unit(units: dict[int, set[str]]) -> dict[str, list[int]]:
    """The sets per unit (a set in several units goes with its first, in sorted order)."""
    out: dict[str, list[int]] = {}
    for i, u in units.items():
        if u:
            out.setdefault(sorted(u)[0], []).append(i)
    return out


def sweep_figure(title: str, rows: list[DerivedMatch], sides: list[cs.Side], path: Path) -> Path | None:
    """The quantity against size, a line per set and paging mode (its interval shaded); a panel per unit."""
    present = cs.having(rows, cs.derived_values, len(sides))
    panels = by_unit(cs.derived_units(rows, present))
    drawn = False
    fig, axes = _panels(title, sides, present, len(panels))
    for ax, (unit, ids) in zip(axes, panels.items()):
        sizes: list[int] = []
        for i in ids:
            modes = list(dict.fromkeys(m.sweep.mode for m in rows if m.sweep and m.values[i] is not None))
            for k, mode in enumerate(modes):
                pts = [(m.sweep.size, v) for m in rows if m.sweep and m.sweep.mode == mode and m.units[i] == unit
                       and (v := m.values[i]) is not None and v.ok and m.sweep.size > 0]
                if not pts:
                    continue
                xs, vs = [x for x, _v in pts], [v for _x, v in pts]
                ax.plot(xs, [v.mid for v in vs], STYLES[k % len(STYLES)], color=color(i), markersize=3.5,
                        linewidth=1.2, label=f"{sides[i].id} {mode}")
                banded = [(x, v) for x, v in pts if v.bounded]
                if banded:
                    ax.fill_between([x for x, _v in banded], [v.lo for _x, v in banded], [v.hi for _x, v in banded],
                                    color=color(i), alpha=0.15, linewidth=0)
                sizes += xs
                drawn = True
        if sizes:
            size_axis(ax, sizes, [])
        ax.set_ylabel(unit)
        ax.legend(fontsize=8, ncol=2)
    if not drawn:
        pyplot().close(fig)
        return None
    return save_figure(fig, path, "")


def _bars(ax: "Axes", labels: list[str], ids: list[int], value: Callable[[int, int], Interval | None],
          sides: list[cs.Side]) -> bool:
    """Grouped bars, a group per row that one of these sets has and a bar per set, with their intervals;
    log y when all are positive and span more than LOG_SPAN."""
    rows = [x for x in range(len(labels)) if any((v := value(x, i)) is not None and v.ok for i in ids)]
    width = 0.8 / max(len(ids), 1)
    mids: list[float] = []
    for k, i in enumerate(ids):
        got = [(n, v) for n, x in enumerate(rows) if (v := value(x, i)) is not None and v.ok]
        if got:
            vs = [v for _n, v in got]
            ax.bar([n - 0.4 + width * (k + 0.5) for n, _v in got], [v.mid for v in vs], width, color=color(i),
                   label=sides[i].id, yerr=errors_of(vs), capsize=2, error_kw={"elinewidth": 0.8})
            mids += [v.mid for v in vs]
    ax.set_xticks(range(len(rows)))
    ax.set_xticklabels([labels[x] for x in rows], rotation=60, ha="right", fontsize=7)
    if mids and min(mids) > 0 and max(mids) > LOG_SPAN * min(mids):
        ax.set_yscale("log")
    ax.grid(True, which="major", axis="y", alpha=0.3)
    ax.legend(fontsize=8)
    return bool(mids)


def bar_figure(title: str, labels: list[str], units: dict[int, set[str]], value: Callable[[int, int], Interval | None],
               sides: list[cs.Side], path: Path) -> Path | None:
    """Bars of a table's rows, a panel per unit."""
    present = [i for i, u in units.items() if u]
    panels = by_unit(units)
    fig, axes = _panels(title, sides, present, len(panels))
    drawn = False
    for ax, (unit, ids) in zip(axes, panels.items()):
        drawn = _bars(ax, labels, ids, value, sides) or drawn
        ax.set_ylabel(f"{unit} (median)")
    if not drawn:
        pyplot().close(fig)
        return None
    return save_figure(fig, path, "")


def _short(label: str, most: int = 32) -> str:
    """A bar's label: its start and its end (where a case's paging mode is), the middle left out."""
    return label if len(label) <= most else label[:most // 2 - 2] + "..." + label[-(most - most // 2 - 1):]


def case_figure(bench: str, rows: list[Match], sides: list[cs.Side], path: Path) -> Path | None:
    common = params_common(rows) if len(rows) > 1 else {}
    labels = [_short(f"{m.key[1]} {params_rest(m, common)}") for m in rows]
    units = cs.case_units(rows, sides, cs.having(rows, cs.case_values, len(sides)))
    return bar_figure(f"{bench}: each set's median per case", labels, units,
                      lambda x, i: cs.median(rows[x].sides[i]), sides, path)


def derived_figure(title: str, rows: list[DerivedMatch], sides: list[cs.Side], path: Path) -> Path | None:
    prefix = common_prefix([m.key for m in rows])
    labels = [_short(m.key[len(prefix):].strip()) for m in rows]
    present = cs.having(rows, cs.derived_values, len(sides))
    return bar_figure(title, labels, cs.derived_units(rows, present), lambda x, i: rows[x].values[i], sides, path)


def k_sweeps(matches: list[Match]) -> dict[tuple[str, str], dict[str, dict[int, Match]]]:
    """The multi-CPU cases by (bench, case), then by variant (their params but the CPUs, the paging and
    what a run says of itself: compare.OUTCOME_PARAMS), then by k: those with two k or more."""
    out: dict[tuple[str, str], dict[str, dict[int, Match]]] = {}
    for m in matches:
        rec = next(r for r in m.sides if r is not None)
        params = rec.get("params") if isinstance(rec.get("params"), dict) else {}
        k = params.get("cpus")
        if not isinstance(k, int) or isinstance(k, bool):
            continue
        variant = format_params({p: v for p, v in params.items()
                                 if p not in OUTCOME_PARAMS and p not in ("cpus", "paging", "pagesize", "of")}) or "-"
        out.setdefault((m.key[0], m.key[1]), {}).setdefault(variant, {})[k] = m
    return {key: {v: ks for v, ks in variants.items() if len(ks) > 1}
            for key, variants in out.items() if any(len(ks) > 1 for ks in variants.values())}


def k_figure(title: str, variants: dict[str, dict[int, Match]], sides: list[cs.Side], path: Path) -> Path | None:
    """Each set's median against the CPUs working (k), a line per variant (the first K_LINES) and set; a
    panel per unit (nanoseconds where the sets' clocks differ: clocks.py)."""
    shown = dict(list(variants.items())[:K_LINES])
    rows = [m for ks in shown.values() for m in ks.values()]
    present = cs.having(rows, cs.case_values, len(sides))
    panels = by_unit(cs.case_units(rows, sides, present))
    fig, axes = _panels(title + (f" (the first {K_LINES} of {len(variants)})" if len(variants) > K_LINES else ""),
                        sides, present, len(panels))
    drawn = False
    for ax, (unit, ids) in zip(axes, panels.items()):
        for i in ids:
            for n, (variant, ks) in enumerate(shown.items()):
                pts = [(k, v) for k, m in sorted(ks.items()) if (rec := m.sides[i]) is not None
                       and cs.case_unit(rec, sides[i].units) == unit and (v := cs.median(rec)) is not None and v.ok]
                if len(pts) < 2:
                    continue
                ax.errorbar([k for k, _v in pts], [v.mid for _k, v in pts], yerr=errors_of([v for _k, v in pts]),
                            fmt=STYLES[n % len(STYLES)], color=color(i), markersize=3.5, linewidth=1.2, capsize=2,
                            label=f"{sides[i].id} {_short(variant, 40)}")
                drawn = True
        ax.set_xscale("log", base=2)
        ax.set_xlabel("CPUs working (k)")
        ax.set_ylabel(f"{unit} (median)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=6, ncol=2)
    if not drawn:
        pyplot().close(fig)
        return None
    return save_figure(fig, path, "")


def write_all(sides: list[cs.Side], matches: list[Match], derived: list[DerivedMatch], out: Path) -> list[Path]:
    """Every figure there is data for, into out (beside compare.csv); the files written."""
    written: list[Path | None] = []
    groups: dict[Any, list[DerivedMatch]]
    groups, _single = cs.in_some(cs.derived_groups(derived, sides), cs.derived_values, len(sides))
    for (table, what), rows in groups.items():
        title = cs.group_title((table, what), rows)
        if table == cs.SWEEP:
            written.append(sweep_figure(title, rows, sides, out / cs.file_name("sweep", what)))
        elif len(rows) <= BARS_MOST:
            written.append(derived_figure(title, rows, sides, out / cs.file_name(table, what)))
    cases, _single = cs.in_some(cs.case_groups(matches), cs.case_values, len(sides))
    for bench, rows in cases.items():
        if len(rows) <= BARS_MOST:
            written.append(case_figure(bench, rows, sides, out / cs.file_name("cases", bench)))
    shared = [m for rows in cases.values() for m in rows]
    for (bench, case), variants in k_sweeps(shared).items():
        written.append(k_figure(f"{bench} {case}: each set's median against the CPUs working", variants, sides,
                                out / cs.file_name("k", bench, case)))
    return [p for p in written if p is not None]
