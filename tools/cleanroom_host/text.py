"""Plain-text helpers shared by the report, the derived tables and compare."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path
from typing import Any, Iterable, Sequence

from .interval import number as interval_number


def not_installed(package: str) -> str:
    """What to do when a pinned Python package is missing (tools/requirements.txt)."""
    return f"{package} is not installed: run tools/setup.sh (it installs tools/requirements.txt into .venv)"


def human_bytes(n: Any) -> str:
    if not isinstance(n, int) or isinstance(n, bool):
        return str(n)
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            value = n / size
            return f"{value:.0f} {unit}" if value == int(value) else f"{value:.1f} {unit}"
    return f"{n} B"


def human_hz(hz: Any) -> str:
    if not isinstance(hz, int) or isinstance(hz, bool) or hz <= 0:
        return "unknown"
    if hz >= 1_000_000_000:
        return f"{hz / 1e9:.3f} GHz"
    return f"{hz / 1e6:.3f} MHz"


def compact(value: Any) -> str:
    """A value as short text: strings bare, everything else as JSON."""
    if value is None:
        return "-"
    if isinstance(value, str):
        return value
    return json.dumps(value, separators=(",", ":"))


def format_params(params: Any) -> str:
    if not isinstance(params, dict) or not params:
        return "-"
    return " ".join(f"{k}={compact(v)}" for k, v in params.items())


def table(headers: list[str], rows: list[list[str]], numeric: set[int] | None = None) -> list[str]:
    """Aligned columns; columns in `numeric` are right-aligned."""
    numeric = numeric or set()
    widths = [len(h) for h in headers]
    for row in rows:
        for i, cell in enumerate(row):
            widths[i] = max(widths[i], len(cell))

    def fmt(cells: list[str]) -> str:
        parts = [c.rjust(widths[i]) if i in numeric else c.ljust(widths[i]) for i, c in enumerate(cells)]
        return "  " + "  ".join(parts).rstrip()

    return [fmt(headers), fmt(["-" * w for w in widths])] + [fmt(r) for r in rows]


def number(v: float, digits: int = 0) -> str:
    """A float for a table or CSV: empty when NaN, integers without a point, signed when negative."""
    return interval_number(v, digits)


def exact(v: float) -> str:
    """A float for a CSV cell: empty when NaN, "inf"/"-inf" when unbounded, as short as is exact to 1e-4."""
    if math.isnan(v):
        return ""
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    if v == int(v):
        return str(int(v))
    return f"{v:.4f}".rstrip("0").rstrip(".")


def write_csv(path: Path, header: Sequence[str], rows: Iterable[Sequence[Any]]) -> Path:
    """Every CSV the tool writes: ASCII (anything else escaped), the header first."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="ascii", errors="backslashreplace") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rows)
    return path


def seconds_text(s: float) -> str:
    """A duration for people: 0.3 s, 12.5 min, 3.2 h."""
    if s < 120:
        return f"{s:.1f} s"
    if s < 2 * 3600:
        return f"{s / 60:.1f} min"
    return f"{s / 3600:.1f} h"


def bench_time_text(run: dict[str, Any]) -> str | None:
    """"time per benchmark: boot 0.3 s, tsc 0.2 s, ..." from results.json's run, if it has them."""
    per_bench = run.get("bench_seconds")
    if not isinstance(per_bench, dict) or not per_bench:
        return None
    return "time per benchmark: " + ", ".join(f"{name} {seconds_text(secs)}" for name, secs in per_bench.items())


def auto_case_lines(results: list[dict[str, Any]]) -> list[str]:
    """runs=auto's results as the run prints them, one a case: 'workset multi size=1024 pages=4k: 7 runs,
    converged', naming only the parameters that tell a benchmark's cases apart."""
    auto = [r for r in results if "converged" in r]
    values: dict[tuple[Any, str], set[str]] = {}
    for r in auto:
        for k, v in (r.get("params") or {}).items():
            values.setdefault((r.get("bench"), k), set()).add(compact(v))
    out = []
    for r in auto:
        params = {k: v for k, v in (r.get("params") or {}).items() if len(values[(r.get("bench"), k)]) > 1}
        word = "converged" if r.get("converged") is True else "budget spent"
        named = f" {format_params(params)}" if params else ""
        out.append(f"{r.get('bench')} {r.get('case')}{named}: {r.get('n')} runs, {word}")
    return out


def auto_text(results: list[dict[str, Any]], config: Any) -> str:
    """runs=auto: how many runs the cases took and how many reached precision= within budget= (config: the
    config record's `cfg`)."""
    cfg: dict[str, Any] = config if isinstance(config, dict) else {}
    auto = [r for r in results if isinstance(r.get("n"), int) and "converged" in r]
    if not auto:
        return "runs=auto"
    ns = sorted(r["n"] for r in auto)
    budget = cfg.get("budget")
    spent = f"{budget[:-1]} s" if isinstance(budget, str) else f"{budget} rounds"
    took = f"{ns[0]}" if ns[0] == ns[-1] else f"{ns[0]}-{ns[-1]} (median {ns[(len(ns) - 1) // 2]})"
    done = sum(1 for r in auto if r.get("converged") is True)
    precision = cfg.get("precision")
    to = f" to precision {precision / 100:g} %" if isinstance(precision, int) else ""
    return (f"runs=auto: {took} recorded runs per case, {done} of {len(ns)} converged{to} within a budget of "
            f"{spent} per set")
