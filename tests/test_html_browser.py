"""The pages in a real browser (headless Chromium, tests/browser.py): every page a fixture or docs/data
log gives, a page with every family's figures, make run's index.html, compare --html of three sets: each
loads from file:// with no console error, no failed or outside request, every figure drawn (natural width
> 0), no sideways scroll at 400 px but inside a table's own box, its tables of answers drawn with the
values the text summary has, and their text selectable. A planted broken figure is caught."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from booting import tool_proc
from browser import Browser, Page as Shown
from test_html import LOGS, Page, answer_text, make_run_dir, png_ok, read, row_problems, spaced

from cleanroom_host.reports import frame as report
from cleanroom_host.records.results import load

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "tests" / "fixtures"
PHONE, DESKTOP = 400, 1200  # CSS px: the QR path ends on a phone
ANSWERS, VALUES, FULL = "table.answers", "tr.answer .value", "table.full"


def shown_problems(shown: Shown, parsed: Page) -> list[str]:
    """What is wrong with a page as drawn (Page.problems), and with its answers: a table of them not drawn
    or wider than the window, values other than the HTML's, text that cannot be selected."""
    out = shown.problems()
    out += [f"{ANSWERS} drawn {w:.0f} x {h:.0f} px" for w, h in shown.boxes[ANSWERS]
            if not 0 < w <= shown.width or h <= 0]
    if shown.texts[VALUES] != [spaced(row.cells.get("value", "")) for row in parsed.rows]:
        out.append(f"values drawn {shown.texts[VALUES][:5]}..., the HTML's {[r.cells.get('value') for r in parsed.rows][:5]}...")
    first = next((spaced(row.cells["value"]) for row in parsed.rows if row.cells.get("value")), None)
    if first is not None and first not in spaced(shown.selected[ANSWERS] or ""):
        out.append(f"selecting the answers gives {shown.selected[ANSWERS]!r}, not {first!r}")
    return out


@pytest.mark.parametrize("log", LOGS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_logs_page_reads_clean_on_a_phone(log: Path, tmp_path: Path, browser: Browser) -> None:
    """Its rows the summary's answers (test_html.row_problems), nothing from elsewhere, every link a file
    beside it; clean in Chromium at 400 px, its answers drawn and selectable."""
    written = report.write_outputs(load(log), tmp_path, plots=False)
    assert tmp_path / "report.html" in written
    parsed = read(tmp_path / "report.html", answers_only=True)
    assert row_problems(parsed, answer_text(tmp_path / "report.txt")) == []
    assert parsed.external == [] and parsed.images == []
    assert all((tmp_path / href).is_file() for href in parsed.links), parsed.links
    shown = browser.open(tmp_path / "report.html", width=PHONE, selectors=(ANSWERS, VALUES))
    assert shown_problems(shown, parsed) == []


def test_a_page_with_figures_draws_every_one(tmp_path: Path, browser: Browser) -> None:
    """On a phone and on a desktop: every figure drawn with its caption, the answers' tables drawn within the
    window (on a phone a card a row), the full tables there, the text selectable."""
    log = FIXTURES / "hosted-smp.log"
    report.write_outputs(load(log), tmp_path, plots=True)
    pngs = sorted((tmp_path / "plots").glob("*.png"))
    parsed = read(tmp_path / "report.html")
    assert pngs and all(png_ok(src) for src in parsed.images)
    for width in (PHONE, DESKTOP):
        shown = browser.open(tmp_path / "report.html", width=width, selectors=(ANSWERS, VALUES, FULL, "figcaption"))
        assert shown_problems(shown, parsed) == []
        assert len(shown.images) == len(pngs) and all(i.natural_width > 0 for i in shown.images)
        assert len(shown.texts["figcaption"]) == len(pngs)
        assert shown.boxes[FULL] and all(w > 0 and h > 0 for w, h in shown.boxes[FULL])
        assert "coherence_matrix.png" in shown.texts["figcaption"][0]


def test_make_runs_index_reads_clean_on_a_phone_and_a_desktop(tmp_path: Path, browser: Browser) -> None:
    root = make_run_dir(tmp_path)
    parsed = read(root / "index.html")
    for width in (PHONE, DESKTOP):
        shown = browser.open(root / "index.html", width=width, selectors=(ANSWERS, "section h2", ".lines"))
        assert shown.problems() == []
        assert [t.split(":")[0] for t in shown.texts["section h2"]] == ["kernel", "hosted", "smp"]
        assert len(shown.boxes[ANSWERS]) == 3 and all(0 < w <= width for w, _h in shown.boxes[ANSWERS])
        assert spaced(parsed.rows[0].cells["words"]) in spaced(shown.selected[ANSWERS] or "")
        assert "AMD EPYC" in shown.texts[".lines"][1]


@pytest.mark.early
def test_compare_of_three_sets_has_three_columns_and_every_familys_figures(tmp_path: Path, browser: Browser) -> None:
    """Three sets whose families are all five (make run's kernel half: workset, locks, aspace; hosted smp;
    hosted smplocks): a column each, every figure drawn after its own family's answers with its caption;
    and the same page with one figure's data cut short fails (the test of the test). The logs lie under a
    long path (each column is headed by its log's path: CI's checkout, 6 characters deeper than this
    machine's, once pushed those past a phone's width)."""
    deep = tmp_path / "a-researchers-runs" / "2026-11-28-sixteen-cpu-machine-lent-for-the-afternoon"
    deep.mkdir(parents=True)
    logs = [deep / name for name in ("hosted-smp.log", "hosted-smplocks-2cpu.log", "qemu-icount-make-run.log")]
    for log in logs:
        shutil.copy(FIXTURES / log.name, log)
    page_path = tmp_path / "compare.html"
    p = tool_proc("compare", *map(str, logs), "--out", str(tmp_path / "c"), "--html", str(page_path))
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines()[-1] == f"wrote {page_path}"
    text = page_path.read_text(encoding="utf-8")
    parsed = read(page_path)
    assert parsed.external == [] and parsed.images and all(png_ok(src) for src in parsed.images)
    assert "the figure of the answers above" not in text  # every figure has its family's caption
    groups = [text.index(f'id="C-{name}"') for name in ("workset", "locks", "aspace")]
    assert groups == sorted(groups)
    assert groups[0] < text.index("<figcaption>fig3-") < groups[1] < text.index("<figcaption>litethreads.png") \
        < groups[2] < text.index("<figcaption>aspace-commit.png")
    for name in ("coherence_matrix", "smplocks-contended", "linuxvm"):
        assert f"<figcaption>{name}.png: " in text
    page = browser.open(page_path, width=1400, selectors=(".column", ".column h2:first-child"))
    assert page.problems() == [], page.problems()
    assert [t.split(":")[0] for t in page.texts[".column h2:first-child"]] == ["A", "B", "C"]
    assert len(page.texts[".column"]) == 3 and len(page.images) == len(parsed.images)
    assert all(i.natural_width > 0 for i in page.images)
    assert browser.open(page_path, width=PHONE).problems() == []
    m = re.search(r'src="data:image/png;base64,([^"]+)"', text)
    assert m
    broken = tmp_path / "broken.html"
    broken.write_text(text[:m.start(1)] + m.group(1)[:len(m.group(1)) // 3] + text[m.end(1):], encoding="utf-8")
    cut = browser.open(broken, width=PHONE)
    assert cut.problems() and sum(i.natural_width == 0 for i in cut.images) == 1
