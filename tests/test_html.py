"""report.html, compare --html and make run's index.html (tools/cleanroom_host/reports/html.py): every
page a fixture or docs/data log gives is one file that needs nothing else, and says what the text summary
says. Read here by the standard library's HTML parser; tests/test_html_browser.py loads them in Chromium."""

from __future__ import annotations

import base64
import io
from html.parser import HTMLParser
from pathlib import Path

import pytest
from PIL import Image

from cleanroom_host.reports import frame as report
from cleanroom_host.records.results import load

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "tests" / "fixtures"
DATA = REPO / "docs" / "data"
LOGS = sorted(FIXTURES.glob("*.log")) + sorted(DATA.glob("*.log")) + sorted(DATA.glob("*/*.log"))


class Page(HTMLParser):
    """What a page holds: its answers' lines (class "answer"), images, links and external references."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.answers: list[str] = []
        self.images: list[str] = []
        self.links: list[str] = []
        self.external: list[str] = []
        self._in_answer = False
        self._text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "div" and a.get("class") == "answer":
            self._in_answer, self._text = True, []
        if tag == "img":
            self.images.append(a.get("src") or "")
        if tag == "a":
            self.links.append(a.get("href") or "")
        if tag in ("script", "iframe", "object", "embed"):
            self.external.append(f"<{tag}>")
        for key in ("src", "href"):
            v = a.get(key) or ""
            if v.startswith(("http:", "https:", "//")):
                self.external.append(v)

    def handle_endtag(self, tag: str) -> None:
        if tag == "div" and self._in_answer:
            self.answers.append("".join(self._text))
            self._in_answer = False

    def handle_data(self, data: str) -> None:
        if self._in_answer:
            self._text.append(data)


def read(path: Path) -> Page:
    page = Page()
    page.feed(path.read_text(encoding="utf-8"))
    return page


def answer_lines(rs_path: Path) -> list[str]:
    _head, _answers_head, groups = report.summary_parts(load(rs_path))
    return [line for _name, lines in groups for line in lines]


def png_ok(src: str) -> bool:
    head = "data:image/png;base64,"
    if not src.startswith(head):
        return False
    img = Image.open(io.BytesIO(base64.b64decode(src[len(head):], validate=True)))
    img.verify()
    return img.size[0] > 0


@pytest.mark.parametrize("log", LOGS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_log_gives_a_page_that_says_what_the_summary_says(log: Path, tmp_path: Path) -> None:
    rs = load(log)
    written = report.write_outputs(rs, tmp_path, plots=False)
    page_path = tmp_path / "report.html"
    assert page_path in written
    page = read(page_path)
    assert page.answers == answer_lines(log)
    assert page.external == [] and page.images == []  # no figures without plots; nothing from elsewhere
    assert all((tmp_path / href).is_file() for href in page.links if "://" not in href), page.links


@pytest.fixture(scope="module")
def drawn(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Path]]:
    """A set with every family's figures: make run's kernel half (workset, ctxsw, locks, create, aspace)."""
    out = tmp_path_factory.mktemp("drawn")
    return out, report.write_outputs(load(FIXTURES / "qemu-icount-make-run.log"), out, plots=True)


def test_figures_are_inline_after_their_familys_answers_with_captions(drawn: tuple[Path, list[Path]]) -> None:
    out, written = drawn
    text = (out / "report.html").read_text(encoding="utf-8")
    page = read(out / "report.html")
    pngs = sorted(p.name for p in written if p.suffix == ".png")
    assert pngs and len(page.images) == len(pngs) and all(png_ok(src) for src in page.images)
    assert all(f"<figcaption>{name}: " in text for name in pngs)
    assert "the figure of the answers above" not in text  # every figure has its family's caption
    # each family's figures come after its own answers and before the next family's
    groups = [text.index(f'id="run-{name}"') for name in ("workset", "locks", "aspace")]
    assert groups == sorted(groups)
    assert groups[0] < text.index("<figcaption>fig3-") < groups[1] < text.index("<figcaption>litethreads.png") \
        < groups[2] < text.index("<figcaption>aspace-commit.png")


def test_a_broken_figure_is_seen(drawn: tuple[Path, list[Path]], tmp_path: Path) -> None:
    """The test of the test: a page whose first figure's data is cut is caught by png_ok."""
    out, _written = drawn
    page = read(out / "report.html")
    broken = page.images[0][:len(page.images[0]) // 2]
    with pytest.raises(Exception):
        assert png_ok(broken)
