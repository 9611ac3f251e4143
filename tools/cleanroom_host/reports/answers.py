"""The summary's answers as objects: each question, this run's values with their intervals, and the paper's
number beside them. The text summary writes an answer as a line (lines()); report.html draws the same
answer as table rows, a value a row (rows()): both from one object, so they cannot say different things.

A family's summary hook (families.py) returns Answers; the shared kit (paper.py) builds some of them."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable, Iterable

from ..stats.interval import Interval, cell, cells, short

# Whose numbers the summary sets in square brackets beside this run's: the brackets hold the papers'
# numbers and claims, nothing of this run. "paper" is Klimiankou 2018, the one the workset reproduces.
SOURCES = ("paper", "Valchanov-Andreev", "LiteThreads", "PATHREADS", "Dthreads", "Sheriff", "Liu 2014", "Predator")

# The page names a source in full where the summary's brackets are short for it
SOURCE_NAMES = {"paper": "Klimiankou 2018"}

# Where an answer's line sets its paper's number: at its end, on a line of its own below it (after the
# answer's details), or nowhere (given above already: the page still sets it beside every value it is for).
END, BELOW, ABOVE = "end", "below", "above"


@dataclass(frozen=True)
class Quote:
    """A paper's number (or claim) as the summary sets it beside this run's: "[source: text]"."""

    source: str  # one of SOURCES, or several joined by ", "
    text: str

    def __post_init__(self) -> None:
        unknown = [s for s in self.source.split(", ") if s not in SOURCES]
        if unknown:
            raise ValueError(f"unknown source {unknown[0]!r} for square brackets; one of {', '.join(SOURCES)}")

    def __str__(self) -> str:
        return f"[{self.source}: {self.text}]"

    @property
    def cell(self) -> str:
        """As the page's column of the papers' numbers has it: the source by its name."""
        return f"{SOURCE_NAMES.get(self.source, self.source)}: {self.text}"


@dataclass(frozen=True)
class Value:
    """One number of an answer: what it is within the answer, this run's interval, and how it is written
    (stats.interval.short with digits, null and unit, between `prefix` and `after`; with `banded`,
    interval.cell: its band however narrow, as report.txt writes it; or `word` in its place, its interval
    still on the page). `where`: words the page sets beside the number (the line has them in its own
    words)."""

    label: str
    v: Interval | None
    digits: int = 0
    null: float = 0.0
    unit: str = ""
    word: str = ""
    where: str = ""
    prefix: str = ""
    after: str = ""
    banded: bool = False

    @property
    def text(self) -> str:
        """The value as the summary's line writes it."""
        number = (cell if self.banded else short)(self.v, self.digits, self.null, self.unit)
        return self.word or self.prefix + number + self.after

    def cells(self) -> tuple[str, str, str]:
        """The page's value, interval and coverage cells."""
        value, band, coverage = cells(self.v, self.digits, self.null, self.unit)
        return self.word or self.prefix + value, band, coverage

    def labelled(self) -> str:
        """'pushad 17': the label, then the value."""
        return f"{self.label} {self.text}" if self.label else self.text


def listed(values: Iterable[Value], sep: str = ", ") -> str:
    """'tas 51, ttas 56, ticket 56': each value after its label."""
    return sep.join(v.labelled() for v in values)


@dataclass(frozen=True)
class Answer:
    """One line of the summary's answers: the question (or the part of it the line asks), then `words`, the
    line's answer as it reads (its values' texts among them), and the paper's number. A question that ends
    with ":" and has no words heads the details below it. depth: 0 a question,
    1 a detail of the one above, 2 a detail of that. joined: the separator with which the line goes on
    after the line above instead of starting its own ("; "). note: what the words say besides the values,
    for the page (under the question)."""

    question: str
    words: str = ""
    values: tuple[Value, ...] = ()
    paper: Quote | None = None
    depth: int = 0
    sep: str = ": "
    quote: str = END
    joined: str = ""
    note: str = ""

    def text(self) -> str:
        """The line's text, without its indentation and a paper's number below it."""
        text = self.question + (self.sep + self.words if self.words else "")
        return text + (f"  {self.paper}" if self.paper is not None and self.quote == END else "")

    def mapped(self, f: Callable[[str], str]) -> "Answer":
        """The same answer with f applied to every text of it but the paper's (same_in_modes' renaming)."""
        return replace(self, question=f(self.question), words=f(self.words), note=f(self.note),
                       values=tuple(replace(v, label=f(v.label), where=f(v.where)) for v in self.values))


def beside(answers: list[Answer], paper: Quote) -> list[Answer]:
    """The answers with one paper's number for them all, written on a line of its own after the last."""
    return [replace(a, paper=paper, quote=BELOW if i == len(answers) - 1 else ABOVE) for i, a in enumerate(answers)]


def lines(answers: Iterable[Answer]) -> list[str]:
    """The summary's lines of these answers (each indented two spaces a depth)."""
    out: list[str] = []
    for a in answers:
        if a.joined and out:
            out[-1] += a.joined + a.text()
        elif a.text().strip():
            out.append("  " * a.depth + a.text())
        if a.paper is not None and a.quote == BELOW:
            out.append(f"  {a.paper}")
    return out


def unquoted(answers: Iterable[Answer]) -> list[Answer]:
    """The answers without the papers' numbers, for a run with no answers to set beside them."""
    return [replace(a, paper=None) for a in answers]


def quoted_once(answers: Iterable[Answer], seen: set[str]) -> list[Answer]:
    """The answers with each paper's number written once: one written by an answer above (or in `seen`,
    which it adds to: the summary's earlier groups) is not written again."""
    out = []
    for a in answers:
        if a.paper is not None and a.quote != ABOVE:
            if str(a.paper) in seen:
                a = replace(a, quote=ABOVE)
            else:
                seen.add(str(a.paper))
        out.append(a)
    return out


@dataclass(frozen=True)
class Row:
    """One row of the page's table of answers: a value of an answer, or an answer without values."""

    question: str
    label: str
    value: str
    where: str
    interval: str
    coverage: str
    paper: str
    depth: int
    first: bool  # the first row of its answer (the next ones repeat its question and paper, muted)
    note: str


def rows(answers: Iterable[Answer]) -> list[Row]:
    """The answers as the page's rows: a row a value (an answer without values: one, its words in the value
    cell), each with its answer's question, note and paper's number."""
    out = []
    for a in answers:
        paper = a.paper.cell if a.paper is not None else ""
        question = a.question.removesuffix(":") if not a.words else a.question
        if not a.values:
            out.append(Row(question, "", a.words, "", "", "", paper, a.depth, True, a.note))
        for i, v in enumerate(a.values):
            value, band, coverage = v.cells()
            out.append(Row(question, v.label, value, v.where, band, coverage, paper, a.depth, i == 0, a.note))
    return out
