"""report.html and compare --html: one page that works offline and alone, answers first.

A column per result set (one for `report`, one per set for `compare --html`): its run and machine lines,
the answers a group per family, each group followed by that family's figures (PNG files written by its
`files` hook, inlined as data URIs, each with its family's caption: CAPTIONS, an optional hook), the
files written beside the page, and the full tables (report.txt's text, in a box that scrolls sideways by
itself). The lines are the text summary's own (frame.summary_parts), never derived again: the page and
the summary say the same. No script, no style or font from elsewhere: one HTML file (Jinja2 template
templates/page.html.j2, autoescaped)."""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

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
    lines: list[str]
    figures: list[Figure] = field(default_factory=list)


@dataclass
class Column:
    id: str    # "A", "B", ... (compare), or "run"
    name: str  # the set's path
    head: list[str]
    answers_head: list[str]
    groups: list[Group]
    files: list[dict[str, str]]  # {"name", "href"}: files written beside the page
    tables: str                  # report.txt's full tables ("" where the page has none)


def figure(path: Path, captions: dict[str, str]) -> Figure:
    """A written PNG, with the caption of the longest CAPTIONS key its name begins with."""
    keys = sorted((k for k in captions if path.stem.startswith(k)), key=len, reverse=True)
    caption = captions[keys[0]] if keys else "the figure of the answers above"
    return Figure(path.name, caption, base64.b64encode(path.read_bytes()).decode("ascii"))


def render(template: str, **values: Any) -> str:
    from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape

    env = Environment(loader=FileSystemLoader(str(TEMPLATES)), autoescape=select_autoescape(["html", "j2"]),
                      undefined=StrictUndefined, keep_trailing_newline=True)
    return env.get_template(template).render(**values)


def write(path: Path, title: str, columns: list[Column]) -> Path:
    path.write_text(render("page.html.j2", title=title, columns=columns), encoding="utf-8")
    return path


def write_index(path: Path, title: str, pages: list[dict[str, str]]) -> Path:
    """make run's index.html: a link to each run's page ({"name", "href", "what"}, hrefs relative)."""
    path.write_text(render("index.html.j2", title=title, pages=pages), encoding="utf-8")
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
