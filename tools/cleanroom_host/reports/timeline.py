"""`cleanroom history`'s answer: each case's figure over a range of commits, and the commit where each changed,
as text (history.txt, what the command prints), CSV (history.csv: a row a case, a column a commit) and one
offline page (history.html: the changes, the cases that moved over the commits as a table and a figure).

Under an exact clock (the TSC counts instructions) a commit is compared with the one before it that has
results, by the exact gate's own comparison (check.moves): a count that differs changed at that commit, with
no step detection and no noise to allow for. Under a real clock two commits are two runs made at different
times: a case whose unpaired B/A interval (check's words: Hodges-Lehmann / Mann-Whitney over the runs'
processes or samples) is resolved is named as a candidate only; what the machine did between the runs is not
told apart from the commit, and `cleanroom ab` of the two builds (then `check`) says whether it holds.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from pathlib import Path

from ..records import text
from ..records.results import ResultSet
from ..records.text import WIDTH, exact, fit, table
from ..stats.interval import RESOLVED, cell, verdict
from . import html
from .check import Move, case_name, moves
from .compare import Key, keyed, match_up, side_units
from .plotkit import pyplot, save_figure

HISTORY_TXT, HISTORY_CSV, HISTORY_HTML, HISTORY_PNG = "history.txt", "history.csv", "history.html", "history.png"
SHORT = 10  # a commit's hash as the tables show it
FIGURE_CASES = 12  # the figure draws at most this many of the cases that moved (the table has them all)


@dataclass
class Point:
    """One commit of the range, oldest first, and what history got of it."""

    sha: str
    subject: str
    date: str  # the commit's date, ISO 8601
    set: ResultSet | None  # its results (None: no build, or no results to load)
    what: str  # how it went: "kept", "built and ran", "build failed (...)", "run ended with status N"
    ok: bool = True  # it built and its run ended done ok, whole

    @property
    def short(self) -> str:
        return self.sha[:SHORT]


@dataclass
class Step:
    """What changed at one commit against the one before it that has results."""

    point: Point
    since: Point
    moves: list[Move] = field(default_factory=list)


def exact_clock(points: list[Point]) -> bool:
    """Every set's TSC counts instructions (no set: exact, nothing to say otherwise)."""
    sets = [p.set for p in points if p.set is not None]
    return all(u.exact for u in side_units(*sets)) if sets else True


def _candidates(a: ResultSet, b: ResultSet) -> list[Move]:
    """Real clock: the cases whose unpaired B/A is resolved, and the cases one set lacks."""
    out = []
    for m in match_up([a, b]):
        rec = m.sides[0] if m.sides[0] is not None else m.sides[1]
        assert rec is not None
        name = case_name(rec, m.key[3])
        if None in m.sides:
            out.append(Move("case", name, "absent" if m.sides[0] is None else exact(float(rec.get("med", 0))),
                            "absent" if m.sides[1] is None else exact(float(rec.get("med", 0))),
                            "new" if m.sides[0] is None else "gone"))
            continue
        band = m.ratio_to(1, 0)
        if verdict(band, 1.0) == RESOLVED:
            out.append(Move("case", name, exact(float(m.sides[0].get("med", 0))),  # type: ignore[union-attr]
                            exact(float(m.sides[1].get("med", 0))),  # type: ignore[union-attr]
                            f"B/A {cell(band, 3, null=1.0)}, unpaired: a candidate", band.mid))
    return out


def steps(points: list[Point]) -> list[Step]:
    """Each commit with results against the one before it that has results."""
    exact_ = exact_clock(points)
    out: list[Step] = []
    before: Point | None = None
    for p in points:
        if p.set is None:
            continue
        if before is not None and before.set is not None:
            out.append(Step(p, before, moves(before.set, p.set) if exact_ else _candidates(before.set, p.set)))
        before = p
    return out


def cases(points: list[Point]) -> tuple[list[Key], dict[Key, str], dict[Key, list[float | None]]]:
    """Every case of any commit (first seen first), its name, and its median at each commit (None: absent)."""
    per = [keyed(p.set.records) if p.set is not None else {} for p in points]
    order = list(dict.fromkeys(k for ks in per for k in ks))
    names = {k: case_name(next(ks[k] for ks in per if k in ks), k[3]) for k in order}
    meds: dict[Key, list[float | None]] = {}
    for k in order:
        meds[k] = [float(ks[k]["med"]) if k in ks and isinstance(ks[k].get("med"), (int, float)) else None
                   for ks in per]
    return order, names, meds


def _cell(v: float | None) -> str:
    return "-" if v is None else exact(v)


def moved_keys(points: list[Point], found: list[Step]) -> list[Key]:
    """The cases named by some step, in the cases' order."""
    named = {m.what for s in found for m in s.moves if m.kind == "case"}
    order, names, _meds = cases(points)
    return [k for k in order if names[k] in named]


def lines(points: list[Point], found: list[Step], head: list[str]) -> list[str]:
    """history.txt: the head (what ran, where), each commit and what it did, what changed where, and the
    cases that moved over the commits."""
    exact_ = exact_clock(points)
    out = list(head)
    out.append("exact clock: a count that differs from the commit before changed at that commit" if exact_ else
               "real clock: each commit is a run of its own, made at its own time; a case named below differs "
               "beyond its unpaired interval from the commit before, which may be the machine rather than the "
               "commit: confirm it with `cleanroom ab` of the two builds and `cleanroom check`")
    out += ["", f"commits ({len(points)}, oldest first):"]
    out += [f"  {p.short} {p.date[:10]} {p.subject[:50]}: {p.what}" for p in points]
    changed = [s for s in found if s.moves]
    quiet = [s for s in found if not s.moves]
    out += ["", f"changes: at {len(changed)} of {len(found)} commits compared with the one before"
            + (f"; nothing changed at {', '.join(s.point.short for s in quiet)}" if quiet else "")]
    for s in changed:
        n_case = sum(m.kind == "case" for m in s.moves)
        out.append(f"{s.point.short} {s.point.subject[:60]} (against {s.since.short}): {n_case} case"
                   f"{'s' if n_case != 1 else ''}, {len(s.moves) - n_case} derived quantit"
                   f"{'ies' if len(s.moves) - n_case != 1 else 'y'}")
        out += [m.line() for m in s.moves]
    keys = moved_keys(points, found)
    if keys:
        _order, names, meds = cases(points)
        out += ["", f"the cases that moved, their medians over the commits ({len(keys)}):"]
        rows = [[names[k]] + [_cell(v) for v in meds[k]] for k in keys]
        out += table(["case"] + [p.short for p in points], rows, numeric=set(range(1, len(points) + 1)), width=WIDTH)
    return fit(out, WIDTH)


def write_csv(points: list[Point], path: Path) -> Path:
    """history.csv: a row a case, its median at each commit (a column a commit, named by its hash)."""
    order, names, meds = cases(points)
    return text.write_csv(path, ["case"] + [p.sha for p in points], [[names[k]] + [_cell(v) for v in meds[k]]
                                                                      for k in order])


def write_figure(points: list[Point], found: list[Step], path: Path, note: str) -> Path | None:
    """history.png: each case that moved (the first FIGURE_CASES), its median over the commits relative to
    its first, as steps; None when nothing moved."""
    keys = moved_keys(points, found)[:FIGURE_CASES]
    if not keys:
        return None
    _order, names, meds = cases(points)
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(9.0, 4.8), dpi=110)
    for k in keys:
        first = next((v for v in meds[k] if v), None)
        if first is None:
            continue
        xs = [i for i, v in enumerate(meds[k]) if v is not None]
        ax.step(xs, [meds[k][i] / first for i in xs], where="post", marker="o", label=names[k][:60])
    ax.set_xticks(range(len(points)), [p.short[:7] for p in points], rotation=45, ha="right")
    ax.set_ylabel("median / its first")
    ax.set_title("the cases that moved, over the commits (oldest first)")
    ax.legend(fontsize=7, loc="best")
    ax.grid(alpha=0.3)
    save_figure(fig, path, note)
    plt.close(fig)
    return path


def write_page(points: list[Point], found: list[Step], head: list[str], path: Path, figure: Path | None) -> Path:
    """history.html: one offline page, the same words as history.txt, the figure inlined."""
    keys = moved_keys(points, found)
    _order, names, meds = cases(points)
    png = base64.b64encode(figure.read_bytes()).decode("ascii") if figure is not None else None
    rows = [{"name": names[k], "cells": [{"v": _cell(v), "moved": i > 0 and v != meds[k][i - 1]}
                                         for i, v in enumerate(meds[k])]} for k in keys]
    path.write_text(html.render("history.html.j2", title=f"cleanroom history: {head[0]}", head=head,
                                exact=exact_clock(points), points=points, steps=found, rows=rows, figure=png,
                                csv=HISTORY_CSV, txt=HISTORY_TXT, figure_cases=FIGURE_CASES), encoding="utf-8")
    return path


def write_all(points: list[Point], head: list[str], out_dir: Path, plots: bool = True) -> tuple[list[str], list[Path]]:
    """history.txt, history.csv, history.png (where something moved) and history.html into out_dir: (the text's
    lines, the files written)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    found = steps(points)
    text_lines = lines(points, found, head)
    (out_dir / HISTORY_TXT).write_text("\n".join(text_lines) + "\n", encoding="utf-8")
    written = [out_dir / HISTORY_TXT, write_csv(points, out_dir / HISTORY_CSV)]
    figure = write_figure(points, found, out_dir / HISTORY_PNG, head[0]) if plots else None
    written += [figure] if figure is not None else []
    written.append(write_page(points, found, head, out_dir / HISTORY_HTML, figure))
    return text_lines, written
