"""What every benchmark's report hooks receive: the records and what they were measured on."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from ..records import model
from ..records.kinds import Units
from ..records.protocol import Record
from ..machines.machine import Machine, model_view


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
        return Run(model.view_records(self.records, info, bench), model_view(self.machine, info), self.doc,
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
class Sweep:
    """Where a derived value of the working-set sweep lies: its curve (series and quantity), its paging
    mode and its size; `compare` draws a quantity against size with a line per set."""

    series: str  # every param but size, reps and the VM axis ('fill=stos switch=pushad')
    quantity: str  # 'conc_rel', 'vm_abs_single', ...
    mode: str  # the row's paging: 'off', 'on/4k', 'on/4k-off' (a VM row), 'host'
    size: int


@dataclass(frozen=True)
class Derived:
    """One derived value as `compare` matches it across runs: which table, which cell."""

    table: str  # 'workset', 'locks', 'create', 'peers', 'aspace'
    key: str  # the cell within the table (series, mode, row, column), as text
    unit: str
    value: Any  # an Interval
    null: float = 0.0  # no effect: 0 for a difference or a percentage, 1 for a ratio
    sweep: Sweep | None = None  # a point of the working-set sweep (reports/workset.py); None elsewhere


def csv_and_plots(run: Run, out: Path, plots: bool, table: Callable[[], Path | None], benches: tuple[str, ...],
                  draw: Callable[[Run, Path], list[Path]]) -> list[Path]:
    """A report module's files: its table (None when it has no rows), then, when asked for
    and the run has its results, its figures (its plot module's write_all, into out/plots;
    matplotlib loads only then)."""
    written = [path for path in [table()] if path is not None]
    if plots and run.results(*benches):
        written += draw(run, out / "plots")
    return written
