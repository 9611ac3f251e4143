"""Every word of a figure on its canvas (issue 38): the titles, axis labels, tick labels, legends and the
run's footnote of every figure each report family draws, of the generic report of a benchmark no family
claims, and of `compare --plots`, drawn from recorded runs: every log under tests/fixtures and docs/data,
found here. Each text is measured with matplotlib's renderer as its PNG is written; the PNG's outermost
pixels are checked for ink as well (a text the measure missed would show there). A family's figures are
its FIGURES (families.figures: none where it has none); its figures outside them are measured too."""

from __future__ import annotations

import io
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

import docfamily
from cleanroom_host import cli
from cleanroom_host.records.protocol import parse_log
from cleanroom_host.records.results import ResultSet, load, to_json_doc
from cleanroom_host.reports import clocks, compare, compareplots, comparesets, frame, generic
from cleanroom_host.reports import families as families_module
from cleanroom_host.reports.families import figures as family_figures, modules as families

sys.path.insert(0, str(Path(__file__).resolve().parent / "fixtures"))
import synth_workset  # noqa: E402

pytestmark = pytest.mark.early  # its drawn fixture (~10 s of figures) starts with the run

REPO = Path(__file__).resolve().parent.parent
DATA, FIXTURES = REPO / "docs" / "data", REPO / "tests" / "fixtures"
TOLERANCE_PX = 1.0
MODEL_LOG = DATA / "qemu-model-prestonia" / "serial.log"  # parsed with its model.jsonl: the misses per quantum
# The recorded runs drawn: every log under tests/fixtures and docs/data. Each family's figure is drawn once,
# from the first run that has its data (test_every_figure_is_drawn: every figure is), so these runs, with the
# longest words, come first; every other log follows, in its directory's order, for a figure none of them has
# (a new family's: nothing to add here). Drawing every figure of every recorded run would take minutes.
FIRST = (
    FIXTURES / "qemu-icount-make-run.log",  # make run: Figures 3-8, ctxsw, locks, aspace; the longest footnote
    DATA / "16cpu-intel-2026-11-27" / "hosted-quick.log",  # peers
    DATA / "16cpu-intel-2026-11-27" / "coherence-cpus16.log",  # a 16 x 16 matrix
    FIXTURES / "hosted-smp.log",  # falseshare, isolation: panels side by side
    FIXTURES / "hosted-workset-parallel.log",
    DATA / "qemu-icount-smp2-locks.log",  # smplocks, shootdown, aslock under the emulator's caveat
    FIXTURES / "hosted-smplocks-2cpu.log",  # smplocks' sweep, linuxvm
)


def recorded_logs() -> list[Path]:
    """Every recorded run's log under tests/fixtures and docs/data, FIRST first (the model run is drawn from
    its parsed directory, MODEL_LOG)."""
    found = sorted(FIXTURES.rglob("*.log")) + sorted(DATA.rglob("*.log"))
    return list(FIRST) + [p for p in found if p not in FIRST and p != MODEL_LOG]


LOGS = recorded_logs()
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


def measuring(mp: pytest.MonkeyPatch, figures: list[Drawn], where: dict[str, str]) -> None:
    """Every figure saved from now on (until mp undoes it) measured as it is written, into figures, named
    after where["log"]."""
    from matplotlib.figure import Figure
    from matplotlib.text import Text

    texts: set[int] = set()
    save, draw_text = Figure.savefig, Text.draw

    def measured_save(fig: Figure, fname: Any, *args: Any, **kwargs: Any) -> None:
        texts.clear()
        save(fig, fname, *args, **kwargs)
        figures.append(Drawn(f"{where['log']}: {Path(fname).name}", measure(fig, texts), Path(fname),
                             tuple(fig.get_facecolor()[:3])))

    def recorded_draw(text: Text, renderer: Any) -> None:
        texts.add(id(text))
        draw_text(text, renderer)

    mp.setattr(Figure, "savefig", measured_save)
    mp.setattr(Text, "draw", recorded_draw)


@pytest.fixture(scope="module")
def drawn(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Each family's figures from LOGS and the model run, each once, the generic report's, and a few
    comparisons' figures, drawn once for all the tests here: the figures, and the names of the families'
    figure functions that drew."""
    figures: list[Drawn] = []
    used: set[str] = set()
    where = {"log": ""}

    def once(name: str, fn: Callable[..., Path | None]) -> Callable[..., Path | None]:
        def call(*args: Any) -> Path | None:
            path = None if name in used else fn(*args)
            if path is not None:
                used.add(name)
            return path
        return call

    def draw_families(label: str, rs: ResultSet) -> None:
        """What the report draws of this run (frame.files_by_family), less the families whose every figure is
        drawn already (their tables, made again, cost a second of these runs)."""
        where["log"] = label
        run, out = frame.run_of(rs), tmp_path_factory.mktemp("report")
        for module in families():
            names = {name for name, _fn in family_figures(module)}
            if not (names and names <= used):
                module.files(run, out, True)
        generic.files(run, out, True, frame.unclaimed(run))

    with pytest.MonkeyPatch.context() as mp:
        measuring(mp, figures, where)
        for module in families():
            mp.setattr(module, "FIGURES", tuple((name, once(name, fn)) for name, fn in family_figures(module)))
        for log in LOGS:
            draw_families(str(log.relative_to(REPO)), load(log))
        parsed = tmp_path_factory.mktemp("model")
        assert cli.main(["parse", str(MODEL_LOG), "--out", str(parsed)], io.StringIO(), io.StringIO()) == 0
        draw_families(str(MODEL_LOG.parent.relative_to(REPO)), load(parsed))
        draw_families("a made-up benchmark of long names", crowded_generic(tmp_path_factory.mktemp("crowded")))
        for paths, derived, cases in (
                (COMPARED, lambda m: m.table == "ctxsw" or bool(m.sweep and m.sweep.quantity == "conc_abs"),
                 lambda m: m.key[0] == "tsc"),
                (K_COMPARED, lambda m: False, lambda m: m.key[:2] == ("falseshare", "packed"))):
            where["log"] = "compare " + " ".join(p.name for p in paths)
            draw_comparison(paths, derived, cases, tmp_path_factory.mktemp("compare"))
    return {"figures": figures, "used": used}


def crowded_generic(where: Path) -> ResultSet:
    """A benchmark no family claims at its most crowded: 24 cases with long names and the params that tell
    them apart, three paging modes, medians from 1 to 100000 (a log axis), wide bands."""
    recs = synth_workset.records()
    for i, (paging, pagesize) in enumerate((("off", "4k"), ("on", "4k"), ("on", "4m"))):
        for j in range(24):
            med = int(10 ** (j / 4.6)) + i
            samples = [max(1, med // 2), med, med, med + 1, med + 3 * j + 2]
            recs.insert(-1, {"t": "result", "bench": "a_snippet_with_a_long_name", "n": 5, "per": 1000,
                             "case": f"user_snippet_number_{j % 12}_with_a_long_descriptive_name",
                             "params": {"unroll": 1 + j // 12, "paging": paging, "pagesize": pagesize},
                             "min": min(samples), "med": med, "max": max(samples), "samples": samples})
    recs = [dict(r, seq=i) for i, r in enumerate(recs)]
    recs[-1]["records"] = len(recs) - 1
    return ResultSet(where / "crowded.log", to_json_doc(parse_log(synth_workset.log_of(recs)), "crowded"))


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
    """A figure no recorded run draws is one this file cannot check: add a log that has it under tests/fixtures
    or docs/data. The generic report's is drawn from a benchmark no family claims
    (tests/fixtures/qemu-icount-planted-xchg.log: tests/test_one_file_bench.py's xchg)."""
    names = {name for module in families() for name, _fn in family_figures(module)}
    missing = sorted(names - drawn["used"])
    assert not missing, f"no run of LOGS draws {', '.join(missing)}"
    assert any(Path(d.name.split(": ")[-1]).name.startswith(generic.FILE_PREFIX) for d in drawn["figures"])


def test_a_family_written_from_the_docs_is_drawn_and_measured(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/REPORT.md's smallest module (no FIGURES, no CAPTIONS: families.figures and .captions give it none)
    registered beside the families: the report draws its figure, inside its canvas, and report.html captions
    it plainly."""
    toy = docfamily.load("toy")
    try:
        assert family_figures(toy) == () and families_module.captions(toy) == {}
        recs = synth_workset.records()
        for i, case in enumerate(("a_case_with_a_long_name", "b", "c")):
            recs.insert(-1, {"t": "result", "bench": "toy", "case": case, "n": 3, "min": 9 + i, "med": 10 + i,
                             "max": 12 + i, "params": {"paging": "off"}})
        recs = [dict(r, seq=i) for i, r in enumerate(recs)]
        recs[-1]["records"] = len(recs) - 1
        rs = ResultSet(tmp_path / "toy.log", to_json_doc(parse_log(synth_workset.log_of(recs)), "toy"))
        every = families()
        monkeypatch.setattr(frame, "families", lambda: (*every, toy))
        figures: list[Drawn] = []
        with pytest.MonkeyPatch.context() as mp:
            measuring(mp, figures, {"log": "toy"})
            frame.write_outputs(rs, tmp_path / "out")
        (mine,) = [d for d in figures if d.png.name == "toy.png"]
        assert mine.overflows == [] and edge_ink(mine.png, mine.background) == []
        assert not any(d.png.name.startswith(generic.FILE_PREFIX) for d in figures)  # the family has it
        page = (tmp_path / "out" / "report.html").read_text()
        assert "toy.png" in page and "the figure of the answers above" in page
    finally:
        sys.modules.pop(toy.__name__, None)
