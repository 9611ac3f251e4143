"""report.html, compare --html and make run's index.html (tools/cleanroom_host/reports/html.py), read by
the standard library's HTML parser: what a page holds (its answers' lines, images, links, anything from
elsewhere). tests/test_html_browser.py writes every page and loads it in Chromium as well."""

from __future__ import annotations

import base64
import io
from html.parser import HTMLParser
from pathlib import Path

from PIL import Image

from cleanroom_host.reports import frame as report
from cleanroom_host.records.results import ResultSet, load

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


def answer_lines(rs: Path | ResultSet) -> list[str]:
    _head, _answers_head, groups = report.summary_parts(load(rs) if isinstance(rs, Path) else rs)
    return [line for _name, lines in groups for line in lines]


def png_ok(src: str) -> bool:
    head = "data:image/png;base64,"
    if not src.startswith(head):
        return False
    img = Image.open(io.BytesIO(base64.b64decode(src[len(head):], validate=True)))
    img.verify()
    return img.size[0] > 0


def test_a_figure_takes_its_familys_caption(tmp_path: Path) -> None:
    """By the longest CAPTIONS key its file's name begins with: fig3-misses is not fig3; none: a plain one."""
    from cleanroom_host.reports import html

    png = tmp_path / "fig3-misses-x.png"
    Image.new("RGB", (2, 2)).save(png)
    captions = {"fig3": "three", "fig3-misses": "misses"}
    assert html.figure(png, captions).caption == "misses"
    assert html.figure(png.rename(tmp_path / "fig3-y.png"), captions).caption == "three"
    other = html.figure(tmp_path / "fig3-y.png", {})
    assert other.caption == "the figure of the answers above" and png_ok(f"data:image/png;base64,{other.data}")
