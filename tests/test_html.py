"""report.html, compare --html and make run's index.html (tools/cleanroom_host/reports/html.py), read by
the standard library's HTML parser: what a page holds (its answers' rows, its full tables, images, links,
anything from elsewhere), held against the text the tool prints and writes (report.txt): the same numbers,
the same papers' numbers. tests/test_html_browser.py writes every page and loads it in Chromium as well."""

from __future__ import annotations

import base64
import io
import re
import shutil
from collections import Counter
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

import pytest
from PIL import Image

from test_report_summary import unwrap

from cleanroom_host.cli import MAKE_RUN_STEPS, main, make_run_index
from cleanroom_host.records.results import ResultSet, load
from cleanroom_host.records.text import Grid, TableLine
from cleanroom_host.reports import frame as report
from cleanroom_host.reports.answers import SOURCE_NAMES

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "tests" / "fixtures"
DATA = REPO / "docs" / "data"
LOGS = sorted(FIXTURES.glob("*.log")) + sorted(DATA.glob("*.log")) + sorted(DATA.glob("*/*.log"))
# Logs whose pages are held against their text here: make run's three parts, each family, a run with no
# answers (plain QEMU), one with the cache model's figures.
# (tests/test_html_browser.py holds every log's page against its text the same way, in the browser's test.)
ANSWERED = [FIXTURES / name for name in ("qemu-icount-make-run.log", "hosted-quick-locks.log", "hosted-smp.log",
                                         "hosted-smplocks-2cpu.log", "qemu-quick-suite.log")] + [
    DATA / "qemu-model-prestonia" / "serial.log"]
# make run's parts from recorded logs: (its directory, the log, words its machine line names)
MAKE_RUN_PARTS = {"kernel": ("qemu-icount-make-run.log", "QEMU Virtual CPU version 2.5+"),
                  "hosted": ("hosted-quick-locks.log", "AMD EPYC"), "smp": ("hosted-smp.log", "AMD EPYC")}
NUMBER = re.compile(r"\d+(?:\.\d+)?")


@dataclass
class Row:
    """A row of a page's table of answers (or index.html's headlines): its cells' texts by class."""
    depth: str
    more: bool
    section: str  # the id of the section it is in (index.html: the part's name)
    cells: dict[str, str] = field(default_factory=dict)

    def text(self) -> str:
        return " ".join(self.cells.values())


class Page(HTMLParser):
    """What a page holds: its answers' rows, its full tables (cells), images, links, external references, and
    each section's lines (class "lines", by the id of the section they are in)."""

    CELLS = ("q", "question", "label", "note", "value", "where", "i", "c", "p", "words")

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.rows: list[Row] = []
        self.tables: list[list[list[str]]] = []  # table.full: rows of cells, the header first
        self.images: list[str] = []
        self.links: list[str] = []
        self.external: list[str] = []
        self.lines: dict[str, list[str]] = {}
        self._open: list[tuple[str, list[str]]] = []  # (tag, classes) of the elements we are in
        self._classes: Counter[str] = Counter()        # and how many of them have each class
        self._section = ""

    def _in(self, cls: str) -> bool:
        return self._classes[cls] > 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        cls = a.get("class") or ""
        if tag == "div" and self._in("lines"):
            self.lines.setdefault(self._section, []).append("")
        if tag not in ("img", "br", "meta"):
            self._open.append((tag, cls.split()))
            self._classes.update(cls.split())
        if tag == "section":
            self._section = a.get("id") or ""
        if tag == "tr" and "answer" in cls.split():
            depth = next((c.split("-")[1] for c in cls.split() if c.startswith("depth-")), "0")
            self.rows.append(Row(depth, "more" in cls.split(), self._section))
        if tag == "table" and "full" in cls.split():
            self.tables.append([])
        if tag == "tr" and self._in("full"):
            self.tables[-1].append([])
        if tag in ("td", "th") and self._in("full"):
            self.tables[-1][-1].append("")
        if tag == "img":
            self.images.append(a.get("src") or "")
        if tag == "a":
            self.links.append(a.get("href") or "")
        if tag in ("script", "iframe", "object", "embed", "link"):
            self.external.append(f"<{tag}>")
        for key in ("src", "href"):
            v = a.get(key) or ""
            if v.startswith(("http:", "https:", "//")):
                self.external.append(v)

    def handle_endtag(self, tag: str) -> None:
        while self._open:
            closed, classes = self._open.pop()
            self._classes.subtract(classes)
            if closed == tag:
                break

    def handle_data(self, data: str) -> None:
        if not self._open:
            return
        if self._in("answer") and self.rows:
            for c in self.CELLS:
                if self._in(c) and not (c == "q" and any(self._in(inner) for inner in ("question", "label", "note"))):
                    self.rows[-1].cells[c] = self.rows[-1].cells.get(c, "") + data
        if self._in("full") and self._open[-1][0] in ("td", "th"):
            self.tables[-1][-1][-1] += data
        if self._in("lines") and self.lines.get(self._section):
            self.lines[self._section][-1] += data


FULL_TABLES = "<h2>full tables</h2>"  # where report.html's full tables begin


def read(path: Path, answers_only: bool = False) -> Page:
    """The page, or (answers_only) all of it but the full tables: the most of its tags, and of the time."""
    page = Page()
    text = path.read_text(encoding="utf-8")
    page.feed(text.split(FULL_TABLES)[0] if answers_only else text)
    return page


def spaced(text: str) -> str:
    """Runs of white space as one space (the summary's wrapping joins its lines with one)."""
    return " ".join(text.split())


def answer_text(report_txt: Path) -> list[str]:
    """report.txt's answers as the user reads them: the lines after the answers' heading and legend, up to the
    summary's end (its first blank line), each wrapped line joined to the one it goes on."""
    lines = report_txt.read_text().split("\n\n", 1)[0].splitlines()
    start = next((i for i, line in enumerate(lines) if re.match(r"(no )?answers[;:]", line)), len(lines))
    body = unwrap(lines[start:])
    return [line for line in body[1:] if not line.lstrip().startswith("legend:")]


def quotes(text: str) -> set[str]:
    """The papers' numbers in square brackets, each as the page's column names it."""
    return {f"{SOURCE_NAMES.get(m.group(1), m.group(1))}: {spaced(m.group(2))}"
            for m in re.finditer(r"\[([^\]:]+): ([^\]]*)\]", text)}


def find_words(text: str, words: str, start: int) -> int:
    """Where `words` stand in text from start on, whole (not the 1 of 17 or the 0.4 of 0.45); -1 if nowhere."""
    for m in re.finditer(re.escape(words), text[start:]):
        at = start + m.start()
        before, after = text[at - 1:at], text[at + len(words):at + len(words) + 1]
        if not re.match(r"[\w.]", before) and not re.match(r"\w|\.\d", after + text[at + len(words) + 1:][:1]):
            return at
    return -1


def row_problems(page: Page, answers: list[str]) -> list[str]:
    """Where a page's rows of answers and the summary's answer lines differ: each row is one line's (its value,
    or for a row without values its words, whole in that line, in the rows' order); every number of a line
    (outside the papers' square brackets) is in its rows; the papers' numbers of the lines and of the rows
    are the same."""
    out, rows = [], list(page.rows)
    for line in answers:
        text, at, mine = spaced(line), 0, []
        while rows:
            said = spaced(rows[0].cells.get("value") or rows[0].cells.get("question", ""))
            found = find_words(text, said, at) if said else -1
            if found < 0:
                break
            mine.append(rows.pop(0))
            at = found + len(said)
        held = {n for row in mine for c, v in row.cells.items() if c != "p" for n in NUMBER.findall(v)}
        numbers = set(NUMBER.findall(re.sub(r"\[[^\]]*\]", "", text)))
        out += [f"{n} of {text[:80]!r}... is in none of its rows" for n in sorted(numbers - held)]
    out += [f"row {row.cells} is no line's" for row in rows]
    papers = {spaced(row.cells["p"]) for row in page.rows if row.cells.get("p")}
    said = quotes(" ".join(answers))
    out += [f"the summary's [{q}] is beside no row" for q in sorted(said - papers)]
    out += [f"a row's {q!r} is not in the summary" for q in sorted(papers - said)]
    return out


def png_ok(src: str) -> bool:
    head = "data:image/png;base64,"
    if not src.startswith(head):
        return False
    img = Image.open(io.BytesIO(base64.b64decode(src[len(head):], validate=True)))
    img.verify()
    return img.size[0] > 0


def answer_lines(rs: Path | ResultSet) -> list[str]:
    """The summary's answer lines, as wrapped, of a log or a set."""
    return [line for g in report.summary_parts(load(rs) if isinstance(rs, Path) else rs).groups for line in g.lines]


@pytest.mark.parametrize("log", ANSWERED, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_each_answer_row_says_what_the_summary_says(log: Path, tmp_path: Path) -> None:
    """report.html's rows and report.txt's answers hold the same numbers and the same papers' numbers; each
    row's value is its line's, in the lines' order; a row has a value and an interval cell of its own."""
    report.write_outputs(load(log), tmp_path, plots=False)
    page, answers = read(tmp_path / "report.html", answers_only=True), answer_text(tmp_path / "report.txt")
    assert page.rows and answers
    assert row_problems(page, answers) == []
    valued = [row for row in page.rows if row.cells.get("c")]  # every row of a value has its value, and the
    assert all(row.cells.get("value") for row in valued)          # intervals are in a column of their own
    assert not valued or any(".." in row.cells.get("i", "") for row in valued) or \
        all(row.cells["c"] == "exact" for row in valued)


def test_a_row_missing_from_the_page_is_caught(tmp_path: Path) -> None:
    """The test of the test: a page with one value changed, and one without a row, differ from the text."""
    report.write_outputs(load(FIXTURES / "hosted-smp.log"), tmp_path, plots=False)
    page, answers = read(tmp_path / "report.html", answers_only=True), answer_text(tmp_path / "report.txt")
    changed = page.rows[0].cells["value"]
    page.rows[0].cells["value"] = changed + "1"
    assert any(changed + "1" in p for p in row_problems(page, answers))
    page.rows[0].cells["value"] = changed
    page.rows = page.rows[1:]
    assert any(changed in p for p in row_problems(page, answers))


def test_the_full_tables_are_report_txts_tables(tmp_path: Path) -> None:
    """Every aligned table of report.txt is an HTML table of the same cells, in order, and report.txt is
    linked where they begin."""
    rs = load(FIXTURES / "qemu-icount-make-run.log")
    report.write_outputs(rs, tmp_path, plots=False)
    grids: list[Grid] = []
    for line in report.report_lines(rs):
        if isinstance(line, TableLine) and not (grids and grids[-1] is line.grid):
            grids.append(line.grid)
    page = read(tmp_path / "report.html")
    assert len(grids) > 10 and len(page.tables) == len(grids)
    for grid, table in zip(grids, page.tables):
        assert table == [list(grid.headers)] + [list(row) for row in grid.rows]
    assert "report.txt" in page.links and "<pre>" not in (tmp_path / "report.html").read_text()


def make_run_dir(root: Path) -> Path:
    """A make run's directory from recorded logs: each part parsed and reported, then its index.html."""
    for step in MAKE_RUN_STEPS:
        log, _words = MAKE_RUN_PARTS[step.out]
        (root / step.out).mkdir(parents=True)
        shutil.copy(FIXTURES / log, root / step.out / "serial.log")
        assert main(["parse", str(root / step.out / "serial.log")], io.StringIO(), io.StringIO()) == 0
        report.write_outputs(load(root / step.out), root / step.out, plots=False)
    make_run_index(root)
    return root


def test_index_names_each_runs_machine_and_headline_answers(tmp_path: Path) -> None:
    """index.html: for each part of make run, its machine and timing lines as its summary has them, and its
    headline answers (the summary's top-level lines: question, this run, the paper's number); every part's
    page linked."""
    root = make_run_dir(tmp_path)
    page = read(root / "index.html")
    for step in MAKE_RUN_STEPS:
        summary = unwrap(report.summary(load(root / step.out)))
        machine = next(i for i, line in enumerate(summary) if line.startswith("machine: "))
        assert page.lines[step.out] == summary[machine:machine + 2]
        assert MAKE_RUN_PARTS[step.out][1] in page.lines[step.out][0]
        assert f"{step.out}/report.html" in page.links
    for step in MAKE_RUN_STEPS:  # each row one top-level line of its part's summary, in their order
        answers = answer_text(root / step.out / "report.txt")
        heads = [line for line in answers if re.match(r"  \S", line)]
        rows = [row for row in page.rows if row.section == step.out]
        assert len(rows) >= 3
        for row in rows:
            line = next((line for line in heads if line.startswith(f"  {row.cells['q']}")), None)
            assert line is not None and spaced(row.cells["words"]) in spaced(line), (row.cells, heads)
            assert not row.cells.get("p") or quotes(" ".join(answers)) >= {spaced(row.cells["p"])}, row.cells
            heads = heads[heads.index(line) + 1:]
    assert {row.section for row in page.rows} == {step.out for step in MAKE_RUN_STEPS}
    for words in ("switch cost", "concurrency overhead", "locks,", "false sharing", "isolation"):
        assert any(row.cells["q"].startswith(words) for row in page.rows), words


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
