"""The benchmark families the report walks, one line each, as bench/registry.def has one line per benchmark:
the summary, report.txt, the files and `compare` take them in this order, and know none by name.

A family is one module of this package providing the hooks named in HOOKS (docs/REPORT.md, "Adding a
benchmark's report"):

- BENCHES: the `bench` names it reports;
- summary(run) -> [Answer]: its answers to the papers' questions, a few lines' worth (answers.py: the
  summary writes each as a line, report.html as table rows; a plain str is a line without values);
- sections(run) -> lines: its full tables, for report.txt;
- derived(run) -> [Derived]: its derived values with their bands, which `compare` sets side by side;
- files(run, out, plots) -> [Path]: its CSV files and (with plots) figures, written into out.

and may provide the hooks named in OPTIONAL, which default to nothing where it has none (figures(),
captions()):

- FIGURES: (name, fn) pairs, fn(plotkit.FigureContext, plots_dir) -> Path | None drawing one figure where
  the run has its data (plotkit.draw draws them for files); tests/test_figure_text.py draws each from the
  recorded logs (tests/fixtures, docs/data) and fails for one that none of them draws;
- CAPTIONS: {start of a figure's file name: what to look at in it}, report.html's caption (html.figure).

A benchmark that no family names in BENCHES gets the generic report (generic.py): a summary line, a
report.txt table and a figure, with no module of its own.

A family's module imports the shared kit (answers, context, cells, plotkit, paper, derive) and the layers below,
never another family's module nor the frame (tests/test_imports.py)."""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Callable


@dataclass(frozen=True)
class Family:
    module: str  # its module in this package
    what: str    # its benchmarks and papers, for people


FAMILIES: tuple[Family, ...] = (
    Family("workset", "ctxsw, workset: Klimiankou 2018, Figures 3-8"),
    Family("locks", "locks, create, peers: LiteThreads, Valchanov-Andreev"),
    Family("aspace", "aspace: PATHREADS, Sheriff, Dthreads"),
    Family("smp", "coherence, falseshare, isolation (and workset's parallel): Liu, Predator, Dthreads, PATHREADS"),
    Family("smplocks", "smplocks, shootdown, aslock, linuxvm: locks and address spaces across CPUs"),
)
HOOKS = ("BENCHES", "summary", "sections", "derived", "files")
OPTIONAL: dict[str, object] = {"FIGURES": (), "CAPTIONS": {}}  # and what a family without them has


@cache
def modules() -> tuple[ModuleType, ...]:
    """Each family's module, in FAMILIES' order."""
    return tuple(importlib.import_module(f"{__package__}.{f.module}") for f in FAMILIES)


def name(module: ModuleType) -> str:
    """A family's name: its module's, as FAMILIES lists it."""
    return module.__name__.rsplit(".", 1)[-1]


def figures(module: ModuleType) -> tuple[tuple[str, Callable[..., Path | None]], ...]:
    """A family's FIGURES; none where it has none."""
    return tuple(getattr(module, "FIGURES", OPTIONAL["FIGURES"]))


def captions(module: ModuleType) -> dict[str, str]:
    """A family's CAPTIONS; none where it has none (report.html then gives each figure a plain caption)."""
    return dict(getattr(module, "CAPTIONS", OPTIONAL["CAPTIONS"]))
