"""lib/defaults.h as the host reads it: every benchmark's and suite's defaults.

The kernel and the hosted build compile the header; the duration estimate
(estimate.py) reads the same file, so neither side has a copy to drift. Its
format, which the header states too: besides its include guard, blank lines
and block comments, only lines

    #define CR_DEF_NAME VALUE

where VALUE is an integer constant expression of decimal literals (an
optional u suffix), `*`, `<<` and parentheses, every intermediate result
below 2^31 (so C computes the same number whatever the literals' types), or
a brace list `{ VALUE, VALUE, ... }`. Anything else is an error naming the
line: the host never guesses what the compiler makes of a line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from .runner import repo_root

HEADER = Path("lib") / "defaults.h"  # relative to the repository root
PREFIX = "CR_DEF_"
LIMIT = 1 << 31  # every value and intermediate result stays below it
ACCEPTED = ("`#define CR_DEF_NAME VALUE` (VALUE: decimal literals with an optional u suffix, *, <<, "
            "parentheses, or a list { VALUE, ... }), a /* comment */, a blank line or the include guard")
ACCEPTED_TOKENS = "decimal literals with an optional u suffix, *, <<, ( ), and { , } around a list"

Value = int | tuple[int, ...]

_DEFINE = re.compile(rf"#\s*define\s+({PREFIX}[A-Z0-9_]+)\s+(\S.*)")
_GUARD_IFNDEF = re.compile(r"#\s*ifndef\s+(\w+)")
_GUARD_DEFINE = re.compile(r"#\s*define\s+(\w+)")
_ENDIF = re.compile(r"#\s*endif")
_TOKEN = re.compile(r"\s*(?:(0|[1-9][0-9]*)[uU]?(?![\w.])|(<<|[*(){},]))")


class DefaultsError(ValueError):
    """lib/defaults.h has a line the host cannot read, or lacks a default it needs."""


@dataclass(frozen=True)
class Defaults:
    """The header's defaults by name (CR_DEF_...), and the file they came from."""

    values: dict[str, Value]
    path: Path

    def has(self, name: str) -> bool:
        return name in self.values

    def number(self, name: str) -> int:
        value = self._get(name)
        if isinstance(value, tuple):
            raise DefaultsError(f"{self.path}: {name} is a list; a single number is needed")
        return value

    def numbers(self, name: str) -> tuple[int, ...]:
        value = self._get(name)
        if not isinstance(value, tuple):
            raise DefaultsError(f"{self.path}: {name} is a single number; a list {{ ... }} is needed")
        return value

    def _get(self, name: str) -> Value:
        if name not in self.values:
            raise DefaultsError(f"{self.path} has no {name}")
        return self.values[name]


def header_path(root: Path | None = None) -> Path:
    """lib/defaults.h of this repository (or of `root`)."""
    return (root if root is not None else repo_root()) / HEADER


def load(path: Path | None = None) -> Defaults:
    """Reads and checks lib/defaults.h (this repository's, unless `path` names another)."""
    path = path if path is not None else header_path()
    try:
        text = path.read_text()
    except OSError as exc:
        raise DefaultsError(f"{path}: cannot read it: {exc.strerror}") from exc
    return Defaults(parse(text, str(path)), path)


def parse(text: str, where: str = str(HEADER)) -> dict[str, Value]:
    """Every CR_DEF_ define of the header's text, evaluated; DefaultsError names any other line."""
    values: dict[str, Value] = {}
    guard: str | None = None
    state = "ifndef"  # the include guard's parts in order: ifndef, define, body (the defines), end
    for lineno, code in _code_lines(text, where):
        def fail(why: str) -> DefaultsError:
            return DefaultsError(f"{where}:{lineno}: cannot read {code!r}: {why}")

        if state == "ifndef":
            m = _GUARD_IFNDEF.fullmatch(code)
            if not m:
                raise fail("expected the include guard's #ifndef first")
            guard, state = m.group(1), "define"
        elif state == "define":
            m = _GUARD_DEFINE.fullmatch(code)
            if not m or m.group(1) != guard:
                raise fail(f"expected the include guard's #define {guard}")
            state = "body"
        elif state == "body" and _ENDIF.fullmatch(code):
            state = "end"
        elif state == "body":
            m = _DEFINE.fullmatch(code)
            if not m:
                raise fail(f"expected {ACCEPTED}")
            name = m.group(1)
            if name in values:
                raise fail(f"{name} is defined twice")
            try:
                values[name] = _evaluate(m.group(2))
            except DefaultsError as exc:
                raise fail(str(exc)) from None
        else:
            raise fail("nothing may follow the include guard's #endif")
    if state != "end":
        raise DefaultsError(f"{where}: the include guard is not complete (no #endif)")
    return values


def _code_lines(text: str, where: str) -> list[tuple[int, str]]:
    """(line number, code) of every line with code once block comments are gone."""
    out = []
    in_comment = False
    for lineno, line in enumerate(text.splitlines(), 1):
        code, rest = "", line
        while rest:
            if in_comment:
                end = rest.find("*/")
                if end < 0:
                    rest = ""
                else:
                    in_comment, rest = False, rest[end + 2:]
            else:
                start = rest.find("/*")
                if start < 0:
                    code, rest = code + rest, ""
                else:
                    code, in_comment, rest = code + rest[:start] + " ", True, rest[start + 2:]
        if "//" in code:
            raise DefaultsError(f"{where}:{lineno}: cannot read {line.strip()!r}: "
                                f"only block comments /* ... */ are accepted")
        if code.strip():
            out.append((lineno, code.strip()))
    if in_comment:
        raise DefaultsError(f"{where}: a comment is not closed (no */)")
    return out


def _tokens(text: str) -> list[str]:
    out, pos = [], 0
    while pos < len(text.rstrip()):
        m = _TOKEN.match(text, pos)
        if not m:
            bad = text[pos:].split()[0]
            raise DefaultsError(f"{bad!r} is not accepted (accepted: {ACCEPTED_TOKENS})")
        out.append(m.group(1) if m.group(1) is not None else m.group(2))
        pos = m.end()
    return out


def _evaluate(text: str) -> Value:
    """A VALUE: an expression, or a brace list of them."""
    tokens = _tokens(text)
    if tokens[:1] == ["{"]:
        if tokens[-1:] != ["}"] or len(tokens) < 3:
            raise DefaultsError("a list is { VALUE, VALUE, ... }")
        items: list[int] = []
        pos = 1
        while True:
            value, pos = _expr(tokens, pos)
            items.append(value)
            if tokens[pos] == "}" and pos == len(tokens) - 1:
                return tuple(items)
            if tokens[pos] != ",":
                raise DefaultsError(f"expected ',' or '}}' in the list, not {tokens[pos]!r}")
            pos += 1
    value, pos = _expr(tokens, 0)
    if pos != len(tokens):
        raise DefaultsError(f"{tokens[pos]!r} after a complete value")
    return value


def _expr(tokens: list[str], pos: int) -> tuple[int, int]:
    """expr := term ('<<' term)*, as C binds: * before <<."""
    value, pos = _term(tokens, pos)
    while pos < len(tokens) and tokens[pos] == "<<":
        shift, pos = _term(tokens, pos + 1)
        if shift >= LIMIT.bit_length() - 1:
            raise DefaultsError(f"a shift by {shift} does not stay below 2^31")
        value = _checked(value << shift)
    return value, pos


def _term(tokens: list[str], pos: int) -> tuple[int, int]:
    """term := atom ('*' atom)*."""
    value, pos = _atom(tokens, pos)
    while pos < len(tokens) and tokens[pos] == "*":
        factor, pos = _atom(tokens, pos + 1)
        value = _checked(value * factor)
    return value, pos


def _atom(tokens: list[str], pos: int) -> tuple[int, int]:
    """atom := literal | '(' expr ')'."""
    if pos >= len(tokens):
        raise DefaultsError("the value ends too soon")
    token = tokens[pos]
    if token == "(":
        value, pos = _expr(tokens, pos + 1)
        if pos >= len(tokens) or tokens[pos] != ")":
            raise DefaultsError("a '(' is not closed")
        return value, pos + 1
    if token.isdigit():
        return _checked(int(token)), pos + 1
    raise DefaultsError(f"expected a number or '(', not {token!r}")


def _checked(value: int) -> int:
    if value >= LIMIT:
        raise DefaultsError(f"a value or intermediate result of {value} is not below 2^31")
    return value
