"""What every benchmark's report hooks receive: the records and what they were measured on."""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from . import model
from .machine import Machine, Units
from .protocol import Record


@dataclass
class Run:
    """One result set as the report modules see it."""

    records: list[Record]
    machine: Machine
    doc: dict[str, Any] = field(default_factory=dict)  # results.json (run info, problems); {} for a bare list
    figures: str = "auto"  # report --figures: model, tsc or auto (model.FIGURE_CHOICES)

    @classmethod
    def of(cls, records: list[Record], doc: dict[str, Any] | None = None, figures: str = "auto") -> "Run":
        doc = doc or {}
        run = doc.get("run") if isinstance(doc.get("run"), dict) else None
        recs = [r for r in records if isinstance(r, dict)]
        return cls(recs, Machine.of(recs, run), doc, figures)

    @property
    def model_info(self) -> dict[str, Any] | None:
        """results.json's run.model: the preset the model figures were made with (qemu-model)."""
        return model.run_info(self.doc)

    def modelled(self, bench: str) -> "Run":
        """This run as `bench`'s report reads it: its results in modelled cycles, with the model's caches
        and unit, when --figures (auto: the results carry model figures) says so; else itself."""
        if not model.use_model(self.records, self.figures, bench):
            return self
        info = self.model_info
        return Run(model.view_records(self.records, info, bench), model.view_machine(self.machine, info), self.doc,
                   self.figures)

    @property
    def is_model(self) -> bool:
        return self.machine.kind == model.MODEL_KIND

    @property
    def units(self) -> Units:
        return self.machine.units

    def first(self, t: str) -> Record | None:
        return next((r for r in self.records if r.get("t") == t), None)

    def results(self, *benches: str) -> list[Record]:
        return [r for r in self.records if r.get("t") == "result" and (not benches or r.get("bench") in benches)]


@dataclass(frozen=True)
class Derived:
    """One derived value as `compare` matches it across two runs: which table, which cell."""

    table: str  # 'workset', 'locks', 'create', 'peers', 'aspace'
    key: str  # the cell within the table (series, mode, row, column), as text
    unit: str
    value: Any  # an Interval
    null: float = 0.0  # no effect: 0 for a difference or a percentage, 1 for a ratio


CELL_HEADER = ["table", "paging", "row", "column", "unit", "value", "min", "max", "verdict"]


@dataclass(frozen=True)
class Cell:
    """One cell of a benchmark's table as its CSV (locks.csv, aspace.csv) writes it."""

    table: str
    mode: str  # the paging mode: 'off', 'on/4k', 'host'
    row: str
    column: str
    unit: str
    value: Any  # an Interval
    null: float = 0.0  # 1 for a ratio
    derived: bool = False  # computed from several records (a ratio, a difference), not one median

    def csv(self) -> list[str]:
        from .interval import verdict
        from .text import exact

        v = self.value
        return [self.table, self.mode, self.row, self.column, self.unit, exact(v.mid), exact(v.lo), exact(v.hi),
                verdict(v, self.null)]

    def as_derived(self, group: str) -> Derived:
        return Derived(group, f"{self.table} {self.mode} {self.row} {self.column}", self.unit, self.value, self.null)


def csv_and_plots(run: Run, out: Path, plots: bool, table: Callable[[], Path | None], benches: tuple[str, ...],
                  plot_module: str) -> list[Path]:
    """A report module's files: its table (None when it has no rows), then its
    plots when asked for and the run has its results. The plot module is
    imported only then, so that matplotlib loads only for plots."""
    written = [path for path in [table()] if path is not None]
    if plots and run.results(*benches):
        written += importlib.import_module(f".{plot_module}", __package__).write_all(run, out / "plots")
    return written
