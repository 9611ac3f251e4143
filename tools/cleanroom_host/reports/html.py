"""report.html and compare --html: one page that works offline and alone, answers first.

A column per result set (one for `report`, one per set for `compare --html`): its run and machine lines,
the answers a table per family (a row a value: the question, this run's value, its interval and what
covers it, the paper's number; the legend as its caption), each table followed by that family's figures
(PNG files written by its `files` hook, inlined as data URIs, each with its family's caption: CAPTIONS,
an optional hook), the files written beside the page (report.txt among them), and the full tables as
HTML tables (each in a box that scrolls sideways by itself). The rows come from the text summary's own
answers (answers.rows of frame.summary_parts' Answers), the full tables from report.txt's own lines
(text.TableLine's grid): never derived again, so the page and the text say the same. No script, no
style or font from elsewhere: one HTML file (Jinja2 template templates/page.html.j2, autoescaped)."""

from __future__ import annotations

import base64
import functools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Union

from ..records.text import Grid, TableLine
from .answers import Answer, Row

PAGE = "report.html"
TEMPLATES = Path(__file__).resolve().parent / "templates"


@dataclass
class Figure:
    name: str     # the file's name
    caption: str  # what to look at
    data: str     # the PNG, base64


@dataclass
class Group:
    name: str  # the family's module name (frame.OTHERS for the rest)
    what: str  # its benchmarks and papers (families.FAMILIES), its table's heading
    rows: list[Row]
    figures: list[Figure] = field(default_factory=list)


@dataclass
class Text:
    """Lines of the full report that are no table (a table's title, a note), as they read."""
    lines: list[str]


Block = Union[Text, Grid]  # the full report's pieces, in order


@dataclass
class Column:
    id: str    # "A", "B", ... (compare), or "run"
    name: str  # the set's path
    head: list[str]
    what: str    # the answers' heading ("answers", "no answers"; "" where there are none)
    why: str     # why they are no answers
    legend: str  # what the intervals are and the words the values use: each table of answers' caption
    groups: list[Group]
    files: list[dict[str, str]]  # {"name", "href"}: files written beside the page
    tables: list[Block]          # report.txt's full tables ([] where the page has none)
    text: dict[str, str] | None = None  # the link to report.txt among files, where the tables are its


def blocks(lines: list[str]) -> list[Block]:
    """The full report's lines as the page draws them: the lines of one aligned table (TableLines of one
    grid) as that table's Grid, the lines between as Text (blank lines end a Text)."""
    out: list[Block] = []
    for line in lines:
        if isinstance(line, TableLine):
            if not (out and out[-1] is line.grid):
                out.append(line.grid)
        elif not line.strip():
            out.append(Text([]))
        elif out and isinstance(out[-1], Text):
            out[-1].lines.append(line)
        else:
            out.append(Text([line]))
    return [b for b in out if not isinstance(b, Text) or b.lines]


def figure(path: Path, captions: dict[str, str]) -> Figure:
    """A written PNG, with the caption of the longest CAPTIONS key its name begins with."""
    keys = sorted((k for k in captions if path.stem.startswith(k)), key=len, reverse=True)
    caption = captions[keys[0]] if keys else "the figure of the answers above"
    return Figure(path.name, caption, base64.b64encode(path.read_bytes()).decode("ascii"))


@functools.cache
def _environment() -> Any:
    """The pages' jinja2 environment, made once a process: it keeps each template compiled (compiling the
    page's took 0.1 s, a tenth of a report's time without figures)."""
    from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape

    return Environment(loader=FileSystemLoader(str(TEMPLATES)), autoescape=select_autoescape(["html", "j2"]),
                       undefined=StrictUndefined, keep_trailing_newline=True)


def render(template: str, **values: Any) -> str:
    return _environment().get_template(template).render(**values)


def write(path: Path, title: str, columns: list[Column]) -> Path:
    path.write_text(render("page.html.j2", title=title, columns=columns), encoding="utf-8")
    return path


@dataclass
class Part:
    """One run of make run's index.html."""
    name: str
    href: str  # its report.html, relative to the index
    what: str
    machine: list[str]       # its summary's machine and timing lines
    answers: list[Answer]    # its headline answers
    why: str = ""            # "no answers: why" ("" where they are answers)


def write_index(path: Path, title: str, parts: list[Part]) -> Path:
    """make run's index.html: each run's machine and headline answers, and a link to its page."""
    path.write_text(render("index.html.j2", title=title, parts=parts), encoding="utf-8")
    return path


def links(out_dir: Path, written: list[Path], page_dir: Path) -> list[dict[str, Any]]:
    """The CSV and text files written beside the page, as relative links (figures are inline)."""
    out = []
    for p in written:
        if p.suffix in (".csv", ".txt") and p.is_file():
            try:
                href = p.relative_to(page_dir).as_posix()
            except ValueError:
                href = p.resolve().as_uri()
            out.append({"name": p.name, "href": href})
    for name in ("results.csv", "results.json"):
        p = out_dir / name
        if p.is_file() and all(f["name"] != name for f in out):
            out.append({"name": name, "href": name if page_dir == out_dir else p.resolve().as_uri()})
    return out
