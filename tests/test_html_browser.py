"""The pages in a real browser (headless Chromium, tests/browser.py): every page a fixture or docs/data
log gives, a page with every family's figures, compare --html of three sets: each loads from file://
with no console error, no failed or outside request, every figure drawn (natural width > 0), no sideways
scroll at 400 px but inside the tables' own box, and its answers' lines as the text summary's. A planted
broken figure is caught."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from browser import Browser
from test_html import LOGS, answer_lines

from cleanroom_host.reports import frame as report
from cleanroom_host.records.results import load

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "tests" / "fixtures"
PHONE = 400  # CSS px: the QR path ends on a phone


def stripped(lines: list[str]) -> list[str]:
    """The lines as the browser's text of each (Page.texts: innerText, trimmed; tests/test_html.py compares
    them whole, indentation included)."""
    return [line.strip() for line in lines]


@pytest.mark.parametrize("log", LOGS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_logs_page_reads_clean_on_a_phone(log: Path, tmp_path: Path, browser: Browser) -> None:
    report.write_outputs(load(log), tmp_path, plots=False)
    page = browser.open(tmp_path / "report.html", width=PHONE, selectors=(".answer",))
    assert page.problems() == [], page.problems()
    assert page.texts[".answer"] == stripped(answer_lines(log))


@pytest.fixture(scope="module")
def drawn(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """make run's kernel half with its figures (workset, ctxsw, locks, create, aspace) and a hosted smp set."""
    out = tmp_path_factory.mktemp("drawn")
    for log in ("qemu-icount-make-run.log", "hosted-smp.log"):
        report.write_outputs(load(FIXTURES / log), out / log, plots=True)
    return out


@pytest.mark.parametrize("width", [PHONE, 1200])
@pytest.mark.parametrize("log", ["qemu-icount-make-run.log", "hosted-smp.log"])
def test_a_page_with_figures_draws_every_one(drawn: Path, log: str, width: int, browser: Browser) -> None:
    page = browser.open(drawn / log / "report.html", width=width, selectors=(".answer", "figcaption"))
    assert page.problems() == [], page.problems()
    pngs = sorted((drawn / log / "plots").glob("*.png"))
    assert pngs and len(page.images) == len(pngs) and all(i.natural_width > 0 for i in page.images)
    assert len(page.texts["figcaption"]) == len(pngs)
    assert page.texts[".answer"] == stripped(answer_lines(FIXTURES / log))


def test_a_planted_broken_figure_fails(drawn: Path, tmp_path: Path, browser: Browser) -> None:
    """The test of the test: the same page with its first figure's data cut short."""
    text = (drawn / "hosted-smp.log" / "report.html").read_text(encoding="utf-8")
    m = re.search(r'src="data:image/png;base64,([^"]+)"', text)
    assert m
    broken = tmp_path / "report.html"
    broken.write_text(text[:m.start(1)] + m.group(1)[:len(m.group(1)) // 3] + text[m.end(1):], encoding="utf-8")
    page = browser.open(broken, width=PHONE)
    assert page.problems() and any(i.natural_width == 0 for i in page.images)


def test_compare_of_three_sets_has_three_columns(tmp_path: Path, cleanroom_tool: Path, browser: Browser) -> None:
    logs = [FIXTURES / "hosted-smp.log", FIXTURES / "hosted-smplocks-2cpu.log", FIXTURES / "qemu-icount-make-run.log"]
    page_path = tmp_path / "compare.html"
    p = subprocess.run([str(cleanroom_tool), "compare", *map(str, logs), "--out", str(tmp_path / "c"),
                        "--html", str(page_path)], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines()[-1] == f"wrote {page_path}"
    page = browser.open(page_path, width=1400, selectors=(".column", ".column h2:first-child"))
    assert page.problems() == [], page.problems()
    assert [t.split(":")[0] for t in page.texts[".column h2:first-child"]] == ["A", "B", "C"]
    assert len(page.texts[".column"]) == 3 and all(i.natural_width > 0 for i in page.images) and page.images
    phone = browser.open(page_path, width=PHONE)
    assert phone.problems() == [], phone.problems()
