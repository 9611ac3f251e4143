"""Every word of a figure on its canvas (issue 38): the titles, axis labels, tick labels, legends and the
run's footnote of every figure each report family draws, and of `compare --plots`, drawn from recorded
runs. Each text is measured with matplotlib's renderer as its PNG is written; the PNG's outermost pixels
are checked for ink as well (a text the measure missed would show there)."""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

from cleanroom_host import cli
from cleanroom_host.records.results import ResultSet, load
from cleanroom_host.reports import clocks, compare, compareplots, comparesets, frame
from cleanroom_host.reports.families import modules as families

pytestmark = pytest.mark.early  # its drawn fixture (~10 s of figures) starts with the run

REPO = Path(__file__).resolve().parent.parent
DATA, FIXTURES = REPO / "docs" / "data", REPO / "tests" / "fixtures"
TOLERANCE_PX = 1.0
# The recorded runs drawn, in this order; each family's figure is drawn once, from the first run that has its
# data (test_every_figure_is_drawn: every figure is), so the runs with the longest words come first. Drawing
# every figure of every recorded run would take minutes.
LOGS = (
    FIXTURES / "qemu-icount-make-run.log",  # make run: Figures 3-8, ctxsw, locks, aspace; the longest footnote
    DATA / "16cpu-intel-2026-11-27" / "hosted-quick.log",  # peers
    DATA / "16cpu-intel-2026-11-27" / "coherence-cpus16.log",  # a 16 x 16 matrix
    FIXTURES / "hosted-smp.log",  # falseshare, isolation: panels side by side
    FIXTURES / "hosted-workset-parallel.log",
    DATA / "qemu-icount-smp2-locks.log",  # smplocks, shootdown, aslock under the emulator's caveat
    FIXTURES / "hosted-smplocks-2cpu.log",  # smplocks' sweep, linuxvm
)
MODEL_LOG = DATA / "qemu-model-prestonia" / "serial.log"  # parsed with its model.jsonl: the misses per quantum
# `compare --plots`, a figure of each kind: a sweep quantity, a table's derived values and a benchmark's
# cases as bars, of three machines; a case against the CPUs working, of two
COMPARED = (DATA / "qemu-icount-quick.log", DATA / "qemu-quick.log", DATA / "hosted-quick.log")
K_COMPARED = (FIXTURES / "hosted-smp.log", FIXTURES / "qemu-smp4.log")


@dataclass
class Drawn:
    """One figure as written: its name, the texts past its canvas, the PNG and its background colour."""

    name: str
    overflows: list[str]
    png: Path
    background: tuple[float, float, float]


def overflow_px(box: Any, width: float, height: float) -> float:
    """How far a box in pixels reaches past 0..width, 0..height (0 or less: inside)."""
    return max(-box.x0, box.x1 - width, -box.y0, box.y1 - height)


def measure(fig: Any, drawn_texts: set[int]) -> list[str]:
    """Each text the last draw of fig drew that reaches past its canvas, with by how much."""
    from matplotlib.text import Text

    renderer = fig.canvas.get_renderer()
    width, height = fig.bbox.width, fig.bbox.height
    out = []
    for text in fig.findobj(Text):
        # a Tick keeps the labels of ticks outside the view, never drawn: only what the draw drew counts
        if id(text) not in drawn_texts or not text.get_visible() or not text.get_text().strip():
            continue
        over = overflow_px(text.get_window_extent(renderer), width, height)
        if over > TOLERANCE_PX:
            out.append(f"{text.get_text()[:60]!r} overflows by {over:.0f} px")
    return out


@pytest.fixture(scope="module")
def drawn(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Each family's figures from LOGS and the model run, each once, and a few comparisons' figures, drawn
    once for all the tests here: the figures, and the names of the families' figure functions that drew."""
    from matplotlib.figure import Figure
    from matplotlib.text import Text

    figures: list[Drawn] = []
    used: set[str] = set()
    texts: set[int] = set()
    where = {"log": ""}
    save, draw_text = Figure.savefig, Text.draw

    def measured_save(fig: Figure, fname: Any, *args: Any, **kwargs: Any) -> None:
        texts.clear()
        save(fig, fname, *args, **kwargs)
        figures.append(Drawn(f"{where['log']}: {Path(fname).name}", measure(fig, texts), Path(fname),
                             tuple(fig.get_facecolor()[:3])))

    def recorded_draw(text: Text, renderer: Any) -> None:
        texts.add(id(text))
        draw_text(text, renderer)

    def once(name: str, fn: Callable[..., Path | None]) -> Callable[..., Path | None]:
        def call(*args: Any) -> Path | None:
            path = None if name in used else fn(*args)
            if path is not None:
                used.add(name)
            return path
        return call

    def draw_families(label: str, rs: ResultSet) -> None:
        where["log"] = label
        run = frame.run_of(rs)
        for module in families():
            module.files(run, tmp_path_factory.mktemp("report"), True)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(Figure, "savefig", measured_save)
        mp.setattr(Text, "draw", recorded_draw)
        for module in families():
            mp.setattr(module, "FIGURES", tuple((name, once(name, fn)) for name, fn in module.FIGURES))
        for log in LOGS:
            draw_families(str(log.relative_to(REPO)), load(log))
        parsed = tmp_path_factory.mktemp("model")
        assert cli.main(["parse", str(MODEL_LOG), "--out", str(parsed)], io.StringIO(), io.StringIO()) == 0
        draw_families(str(MODEL_LOG.parent.relative_to(REPO)), load(parsed))
        for paths, derived, cases in (
                (COMPARED, lambda m: m.table == "ctxsw" or bool(m.sweep and m.sweep.quantity == "conc_abs"),
                 lambda m: m.key[0] == "tsc"),
                (K_COMPARED, lambda m: False, lambda m: m.key[:2] == ("falseshare", "packed"))):
            where["log"] = "compare " + " ".join(p.name for p in paths)
            draw_comparison(paths, derived, cases, tmp_path_factory.mktemp("compare"))
    return {"figures": figures, "used": used}


def draw_comparison(paths: tuple[Path, ...], derived: Callable[[compare.DerivedMatch], bool],
                    cases: Callable[[compare.Match], bool], out: Path) -> None:
    """`compare --plots` of these sets as cmd_compare draws it, of the derived values and cases kept."""
    sets = [load(p) for p in paths]
    timing = clocks.timing(comparesets.set_ids(len(sets)), sets)
    values = [m for m in compare.match_derived(sets, timing) if derived(m)]
    sets = clocks.in_time(timing, sets)
    matches = [m for m in compare.match_up(sets) if cases(m)]
    assert compareplots.write_all(comparesets.sides_of(sets), matches, values, out)


def figures_of(drawn: dict[str, Any]) -> Iterator[Drawn]:
    assert len(drawn["figures"]) > 30, "the figures were not all seen being written"
    yield from drawn["figures"]


def test_every_text_inside_its_canvas(drawn: dict[str, Any]) -> None:
    bad = [f"{d.name}: {o}" for d in figures_of(drawn) for o in d.overflows]
    assert not bad, f"{len(bad)} texts past their figure's edge:\n" + "\n".join(bad)


def edge_ink(png: Path, background: tuple[float, float, float]) -> list[str]:
    """The edges of a PNG (its outermost row or column) with pixels other than the background."""
    import matplotlib.image as mpimg
    import numpy as np

    pixels = mpimg.imread(str(png))[:, :, :3]
    edges = {"top": pixels[0], "bottom": pixels[-1], "left": pixels[:, 0], "right": pixels[:, -1]}
    out = []
    for edge, line in edges.items():
        inked = int(np.count_nonzero(np.abs(line - background).max(axis=1) > 0.02))
        if inked:
            out.append(f"ink in {inked} pixels of its {edge} edge")
    return out


def test_no_ink_on_the_edges(drawn: dict[str, Any]) -> None:
    bad = [f"{d.name}: {e}" for d in figures_of(drawn) for e in edge_ink(d.png, d.background)]
    assert not bad, "\n".join(bad)


def test_every_figure_is_drawn(drawn: dict[str, Any]) -> None:
    """A figure no recorded run draws is one this file cannot check: give LOGS a run that has it."""
    names = {name for module in families() for name, _fn in module.FIGURES}
    missing = sorted(names - drawn["used"])
    assert not missing, f"no run of LOGS draws {', '.join(missing)}"
