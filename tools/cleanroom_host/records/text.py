"""Plain-text helpers shared by the report, the derived tables and compare."""

from __future__ import annotations

import csv
import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Sequence



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


WIDTH = 100  # columns: no summary line and no `compare` line is wider (the tests hold every fixture to it)
CONTINUED = 4  # a wrapped line goes on this many columns further in than the line began
# Where a long line may break, best first: before the two spaces that set a paper's numbers apart, after
# a "; ", after a ", ", after any space. A break is taken where it keeps at least GOOD_BREAK of the room
# (before a paper's numbers: anywhere) and, first, outside parentheses and brackets and not between a
# value and its band "(lo..hi)"; then between a value and its band; then inside parentheses; then at the
# last space at all.
BREAKS: tuple[tuple[str, bool], ...] = (("  [", False), ("; ", True), (", ", True), (" ", True))
GOOD_BREAK = 0.5
WORD_BREAKS = "|,"  # inside a word wider than the room: after one of these (alternatives, list items)
# a band as interval.band_text and cell() write it
BAND = re.compile(r"\((-?[0-9][0-9.]*|-?inf)\.\.|\(unbounded\)|\(1 run\)")


def _depth0(text: str) -> list[bool]:
    """For each position of text: is it outside every ( ) and [ ] pair?"""
    out, depth = [], 0
    for c in text:
        if c in ")]":
            depth = max(depth - 1, 0)
        out.append(depth == 0)
        if c in "([":
            depth += 1
    return out


def _break(text: str, room: int) -> tuple[str, str]:
    """text (longer than room) as a good first piece of at most `room` columns and the rest."""
    outside = _depth0(text)
    for nested, band, least in ((False, False, GOOD_BREAK), (False, True, GOOD_BREAK), (True, True, GOOD_BREAK),
                                (True, True, 0.0)):
        for sep, after in BREAKS:
            at = [i for i in range(1, room + 1) if text.startswith(sep, i) and (nested or outside[i])
                  and (band or not BAND.match(text, i + len(sep)))]
            cuts = [i + len(sep.rstrip()) if after else i for i in at]
            cuts = [c for c in cuts if (least * room <= c or sep == BREAKS[0][0]) and c <= room]
            if cuts:
                return text[:cuts[-1]].rstrip(" "), text[cuts[-1]:].lstrip(" ")
    # one word wider than the room: broken after its last WORD_BREAKS character that fits (a list of names, as
    # an error record's `accepted` gives them: never a name cut in two), else at the room; never lost
    at = max(text.rfind(c, 0, room) for c in WORD_BREAKS) + 1
    return (text[:at], text[at:]) if at > 0 else (text[:room], text[room:])


def wrap(line: str, width: int = WIDTH, continued: int = CONTINUED) -> list[str]:
    """A line as lines of at most `width` columns: broken where BREAKS says, each further line
    indented `continued` columns more than the first."""
    indent = len(line) - len(line.lstrip(" "))
    text, out, lead = line[indent:], [], " " * indent
    while len(lead) + len(text) > width:
        piece, text = _break(text, max(width - len(lead), 1))
        out.append(lead + piece)
        lead = " " * (indent + continued)
    return out + [lead + text]


def fit(lines: list[str], width: int = WIDTH) -> list[str]:
    """Every line wrapped to `width` columns."""
    return [piece for line in lines for piece in wrap(line, width)]


CELL_CONTINUED = 2  # a wrapped cell goes on this many columns further in
NARROWEST = 8  # a column of text is never made narrower than this, nor than its longest word


def _narrow(widths: list[int], rows: list[list[str]], numeric: set[int], width: int) -> list[int]:
    """Column widths that fit `width` (two columns of indent, two between columns): the widest
    columns of text give up room first, numbers only when text alone cannot."""
    widths = list(widths)
    least = [max([NARROWEST] + [len(w) + CELL_CONTINUED for row in rows if i < len(row) for w in row[i].split()])
             for i in range(len(widths))]

    def over() -> int:
        return 2 + sum(widths) + 2 * (len(widths) - 1) - width

    for pool in ([i for i in range(len(widths)) if i not in numeric], list(range(len(widths)))):
        while over() > 0:
            shrinkable = [i for i in pool if widths[i] > least[i]]
            if not shrinkable:
                break
            i = max(shrinkable, key=lambda j: widths[j])
            widths[i] = max(widths[i] - over(), least[i])
    return widths


@dataclass(frozen=True)
class Grid:
    """A table's cells, as table() was given them: report.html draws it as an HTML table."""

    headers: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    numeric: frozenset[int]


class TableLine(str):
    """A line of table()'s text that knows the table it is part of (its grid): the report's sections stay
    lines of text (report.txt), and the page draws the grid of consecutive lines of one table instead."""

    grid: Grid

    def __new__(cls, text: str, grid: Grid) -> "TableLine":
        line = super().__new__(cls, text)
        line.grid = grid
        return line


def table(headers: list[str], rows: list[list[str]], numeric: set[int] | None = None,
          width: int | None = None) -> list[str]:
    """Aligned columns; columns in `numeric` are right-aligned. With `width`, a table wider than
    that wraps its widest cells of text onto further lines (numbers only if it must). Each line is a
    TableLine of the table's Grid."""
    numeric = numeric or set()
    grid = Grid(tuple(headers), tuple(tuple(r) for r in rows), frozenset(numeric))
    widths = [len(h) for h in headers]
    for row in rows:
        for i, cell in enumerate(row):
            widths[i] = max(widths[i], len(cell))
    if width is not None:
        widths = _narrow(widths, [headers] + rows, numeric, width)

    def fmt(cells: list[str]) -> list[str]:
        parts = [wrap(c, widths[i], CELL_CONTINUED) for i, c in enumerate(cells)]
        out = []
        for n in range(max(len(p) for p in parts)):
            line = [p[n] if n < len(p) else "" for p in parts]
            out.append("  " + "  ".join(c.rjust(widths[i]) if i in numeric else c.ljust(widths[i])
                                        for i, c in enumerate(line)).rstrip())
        return out

    text = fmt(headers) + fmt(["-" * w for w in widths]) + [line for r in rows for line in fmt(r)]
    return [TableLine(line, grid) for line in text]


def number(v: float, digits: int = 0) -> str:
    """A float for a table: empty when NaN, no "-0", +-inf spelled out."""
    if math.isnan(v):
        return ""
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    text = f"{v:.{digits}f}"
    return text[1:] if text.startswith("-") and float(text) == 0 else text


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
    replicas = cfg.get("replicas")
    shared = f", shared among {replicas} boots or processes" if isinstance(replicas, int) and replicas > 1 else ""
    return (f"runs=auto: {took} recorded runs per case, {done} of {len(ns)} converged{to} within a budget of "
            f"{spent} per set{shared}")
