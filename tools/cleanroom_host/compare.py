"""Two result sets side by side: the same cases, their medians and ratios."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import text
from .protocol import Record
from .results import ResultSet
from .text import exact, format_params, number, table

COMPARE_CSV = "compare.csv"
CSV_HEADER = ["bench", "case", "params", "unit", "n_a", "med_a", "min_a", "max_a",
              "n_b", "med_b", "min_b", "max_b", "ratio_b_a", "in"]
Key = tuple[str, str, str, int]  # bench, case, params as canonical JSON, occurrence


@dataclass
class Pair:
    """One case as each side measured it (None: absent from that side)."""

    key: Key
    a: Record | None
    b: Record | None

    @property
    def ratio(self) -> float:
        """med_b / med_a; NaN when a side lacks the case or med_a is 0."""
        if self.a is None or self.b is None:
            return math.nan
        ma, mb = _num(self.a.get("med")), _num(self.b.get("med"))
        return mb / ma if ma else math.nan

    @property
    def where(self) -> str:
        return "both" if self.a is not None and self.b is not None else "a" if self.a is not None else "b"


def _num(v: Any) -> float:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else math.nan


def keyed(records: list[Record]) -> dict[Key, Record]:
    """Result records by (bench, case, params); a repeated case gets the next occurrence number."""
    out: dict[Key, Record] = {}
    seen: dict[tuple[str, str, str], int] = {}
    for r in records:
        if r.get("t") != "result":
            continue
        params = r.get("params") if isinstance(r.get("params"), dict) else {}
        base = (str(r.get("bench")), str(r.get("case")), json.dumps(params, sort_keys=True, separators=(",", ":")))
        n = seen.get(base, 0)
        seen[base] = n + 1
        out[base + (n,)] = r
    return out


def pair_up(a: ResultSet, b: ResultSet) -> list[Pair]:
    """Cases of both sides in a's order, then those only b has, in b's order."""
    ka, kb = keyed(a.records), keyed(b.records)
    pairs = [Pair(k, ra, kb.get(k)) for k, ra in ka.items()]
    pairs += [Pair(k, None, rb) for k, rb in kb.items() if k not in ka]
    return pairs


def _params_text(p: Pair) -> str:
    rec = p.a if p.a is not None else p.b
    text = format_params(rec.get("params") if rec else None)
    return text + (f" #{p.key[3] + 1}" if p.key[3] else "")


def _stat(rec: Record | None, field: str) -> str:
    return "" if rec is None else exact(_num(rec.get(field)))


def render(a: ResultSet, b: ResultSet, pairs: list[Pair]) -> list[str]:
    both = [p for p in pairs if p.where == "both"]
    out = [f"compare: A = {a.path}", f"         B = {b.path}",
           f"{len(both)} cases in both, {sum(p.where == 'a' for p in pairs)} only in A, "
           f"{sum(p.where == 'b' for p in pairs)} only in B; ratio = B med / A med"]
    if both:
        rows = [[p.key[0], p.key[1], _params_text(p), _stat(p.a, "med"), _stat(p.b, "med"), number(p.ratio, 3)]
                for p in both]
        out += [""] + table(["bench", "case", "params", "A med", "B med", "B/A"], rows, numeric={3, 4, 5})
    for side, name in (("a", "A"), ("b", "B")):
        only = [p for p in pairs if p.where == side]
        if only:
            out += ["", f"only in {name} ({len(only)})"]
            out += table(["bench", "case", "params", "med"],
                         [[p.key[0], p.key[1], _params_text(p), _stat(p.a if side == "a" else p.b, "med")]
                          for p in only], numeric={3})
    return out


def write_csv(pairs: list[Pair], path: Path) -> Path:
    """compare.csv: one row per case of either side (docs/REPORT.md)."""
    rows = []
    for p in pairs:
        rec = p.a if p.a is not None else p.b
        rows.append([p.key[0], p.key[1], format_params(rec.get("params") if rec else None)
                     + (f" #{p.key[3] + 1}" if p.key[3] else ""),
                     (rec or {}).get("unit", ""),
                     _stat(p.a, "n"), _stat(p.a, "med"), _stat(p.a, "min"), _stat(p.a, "max"),
                     _stat(p.b, "n"), _stat(p.b, "med"), _stat(p.b, "min"), _stat(p.b, "max"),
                     "" if math.isnan(p.ratio) else f"{p.ratio:.6g}", p.where])
    return text.write_csv(path, CSV_HEADER, rows)
