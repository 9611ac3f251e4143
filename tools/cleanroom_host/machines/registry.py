"""bench/registry.def and each benchmark's `struct bench` as the host reads them: which benchmarks a build
has, in run order, and which suites each is in. The duration estimate (estimate.py) takes a suite's
benchmarks from here, so that a benchmark added as one file and one registry line (docs/LAYOUT.md) is in
its suites with nothing else to edit.

The registry's format, which bench/registry.def follows: besides blank lines and comments, only lines

    BENCH(bench_NAME)

and `#ifdef CLEANROOM_HOSTED`, `#ifndef CLEANROOM_HOSTED`, `#else`, `#endif` around some of them (the hosted
build defines CLEANROOM_HOSTED; the kernel does not). Each symbol is defined once in bench/*.c as

    const struct bench bench_NAME = {
        .name = "NAME",
        .in_quick = true,   (or false; left out: false)
        .in_smp = true,     (likewise)
        ...
    };

whose designated fields may sit in the same CLEANROOM_HOSTED blocks. Anything else in the registry, a
symbol defined nowhere or twice, a name that is not a string literal, or an `in_quick`/`in_smp` that is
neither `true` nor `false` is an error naming the file and line: the host never guesses what the compiler
makes of it. The suites are app/suite.c's selected(): quick those `in_quick`, smp those `in_smp`, paper
and all every benchmark but those `by_name_only` (bench asm: the user's code), selftest none.
"""

from __future__ import annotations

import functools
import os
import re
from dataclasses import dataclass
from pathlib import Path

from .defaults import DefaultsError
from .runner import repo_root

REGISTRY = Path("bench") / "registry.def"  # relative to the repository root
SOURCES = "bench"  # where each symbol's definition is looked for: bench/*.c
HOSTED_MACRO = "CLEANROOM_HOSTED"
SUITE_FLAGS = {"quick": "in_quick", "smp": "in_smp"}  # app/suite.c's selected()
EVERY_BENCH_SUITES = ("paper", "all")  # every benchmark but those run by name only
BY_NAME_ONLY = "by_name_only"  # a benchmark of the user's code (bench asm): in no suite
FLAGS = tuple(SUITE_FLAGS.values()) + (BY_NAME_ONLY,)

_BENCH_LINE = re.compile(r"BENCH\(\s*(\w+)\s*\)")
_CONDITION = re.compile(rf"#\s*(ifdef|ifndef)\s+{HOSTED_MACRO}")
_ELSE = re.compile(r"#\s*else")
_ENDIF = re.compile(r"#\s*endif")
_DEFINITION = re.compile(r"const\s+struct\s+bench\s+(\w+)\s*=\s*\{")
_STRING = re.compile(r'"((?:[^"\\]|\\.)*)"')


class RegistryError(DefaultsError):
    """The registry or a benchmark's struct has something the host cannot read (like a DefaultsError: `run`
    names it and starts nothing)."""


@dataclass(frozen=True)
class Fields:
    """A struct bench's fields the host reads, as one build compiles them."""

    name: str
    in_quick: bool
    in_smp: bool
    by_name_only: bool = False


@dataclass(frozen=True)
class Bench:
    """One registry line: its symbol, the file that defines it, and its fields in each build that has it
    (None in a build that does not)."""

    symbol: str
    source: Path
    kernel: Fields | None
    hosted: Fields | None

    def fields(self, hosted: bool) -> Fields | None:
        return self.hosted if hosted else self.kernel

    @property
    def name(self) -> str:
        either = self.kernel or self.hosted
        assert either is not None  # a registry line is in one build at least
        return either.name


_LEXEMES = re.compile(r'"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'|/\*.*?(?:\*/|\Z)|//[^\n]*', re.S)


def strip_comments(text: str) -> str:
    """The C text with its comments blanked (newlines kept, so line numbers stay), string and character
    literals untouched."""
    def blank(m: re.Match[str]) -> str:
        s = m.group(0)
        return s if s[0] in "\"'" else "".join(ch if ch == "\n" else " " for ch in s)

    return _LEXEMES.sub(blank, text)


class _Conditions:
    """The CLEANROOM_HOSTED blocks open at a line: in which builds the line is compiled."""

    def __init__(self, where: str) -> None:
        self.where = where
        self.stack: list[tuple[bool, bool]] = []  # (kernel, hosted) of each open block

    def line(self, lineno: int, code: str) -> bool:
        """Takes a preprocessor line of a CLEANROOM_HOSTED block; False for any other line."""
        m = _CONDITION.fullmatch(code)
        if m:
            hosted = m.group(1) == "ifdef"
            self.stack.append((not hosted, hosted))
        elif _ELSE.fullmatch(code):
            if not self.stack:
                raise RegistryError(f"{self.where}:{lineno}: #else without #ifdef or #ifndef {HOSTED_MACRO}")
            kernel, hosted = self.stack.pop()
            self.stack.append((not kernel, not hosted))
        elif _ENDIF.fullmatch(code):
            if not self.stack:
                raise RegistryError(f"{self.where}:{lineno}: #endif without #ifdef or #ifndef {HOSTED_MACRO}")
            self.stack.pop()
        else:
            return False
        return True

    @property
    def builds(self) -> tuple[bool, bool]:
        """(kernel, hosted): whether a line here is compiled in each build."""
        return all(k for k, _h in self.stack), all(h for _k, h in self.stack)

    def end(self) -> None:
        if self.stack:
            raise RegistryError(f"{self.where}: an #ifdef or #ifndef {HOSTED_MACRO} is not closed (no #endif)")


def parse_registry(text: str, where: str = str(REGISTRY)) -> list[tuple[str, bool, bool, int]]:
    """(symbol, in the kernel, in the hosted build, line) of every BENCH line, in order."""
    out = []
    cond = _Conditions(where)
    for lineno, line in enumerate(strip_comments(text).splitlines(), 1):
        code = line.strip()
        if not code or cond.line(lineno, code):
            continue
        m = _BENCH_LINE.fullmatch(code)
        if not m:
            raise RegistryError(f"{where}:{lineno}: cannot read {code!r}: expected BENCH(bench_NAME), or "
                                f"#ifdef/#ifndef {HOSTED_MACRO}, #else, #endif around such lines")
        out.append((m.group(1), *cond.builds, lineno))
    cond.end()
    return out


def _entries(body: str, first_line: int, where: str, hosted: bool) -> list[tuple[int, str]]:
    """(line, text) of each designated initializer of a struct's body (its text between the braces, comments
    blanked), in one build: the CLEANROOM_HOSTED blocks the other build compiles left out."""
    cond = _Conditions(where)
    kept: list[tuple[int, str]] = []
    for offset, line in enumerate(body.splitlines()):
        code = line.strip()
        if cond.line(first_line + offset, code):
            continue
        if code.startswith("#"):
            raise RegistryError(f"{where}:{first_line + offset}: cannot read {code!r} in a struct bench: only "
                                f"#ifdef/#ifndef {HOSTED_MACRO}, #else and #endif are read there")
        if cond.builds[1 if hosted else 0]:
            kept.append((first_line + offset, line))
    cond.end()
    entries: list[tuple[int, str]] = []
    text, start, depth, i = "", None, 0, 0
    joined = "\n".join(line for _n, line in kept)
    lines = [n for n, _line in kept]
    row = 0
    while i < len(joined):
        c = joined[i]
        if c == "\n":
            row += 1
        if c == '"':
            m = _STRING.match(joined, i)
            end = m.end() if m else len(joined)
            text += joined[i:end]
            i = end
            continue
        if c in "({[":
            depth += 1
        elif c in ")}]":
            depth -= 1
        if c == "," and depth == 0:
            if text.strip():
                entries.append((start if start is not None else first_line, text.strip()))
            text, start = "", None
        else:
            if start is None and not c.isspace():
                start = lines[row] if row < len(lines) else first_line
            text += c
        i += 1
    if text.strip():
        entries.append((start if start is not None else first_line, text.strip()))
    return entries


def parse_struct(text: str, symbol: str, where: str, hosted: bool) -> Fields:
    """The fields of `const struct bench SYMBOL = { ... };` in a C file's text, as one build compiles them."""
    code = strip_comments(text)
    found = [m for m in _DEFINITION.finditer(code) if m.group(1) == symbol]
    if len(found) != 1:
        raise RegistryError(f"{where}: {len(found)} definitions of const struct bench {symbol}; one is needed")
    m = found[0]
    close = code.find("\n};", m.end())
    if close < 0:
        raise RegistryError(f"{where}: const struct bench {symbol} has no closing `}};` at the start of a line")
    first_line = code.count("\n", 0, m.end()) + 1
    values: dict[str, tuple[int, str]] = {}
    for lineno, entry in _entries(code[m.end():close], first_line, where, hosted):
        field = re.fullmatch(r"\.(\w+)\s*=\s*(.*)", entry, re.S)
        if not field:
            raise RegistryError(f"{where}:{lineno}: cannot read {entry!r}: expected .field = value")
        values[field.group(1)] = (lineno, " ".join(field.group(2).split()))
    if "name" not in values:
        raise RegistryError(f"{where}: const struct bench {symbol} has no .name")
    lineno, raw = values["name"]
    parts = re.fullmatch(r'(?:"(?:[^"\\]|\\.)*"\s*)+', raw)
    if not parts:
        raise RegistryError(f"{where}:{lineno}: cannot read .name = {raw}: expected a string literal")
    name = "".join(_STRING.findall(raw))
    flags: dict[str, bool] = {}
    for flag in FLAGS:
        lineno, raw = values.get(flag, (0, "false"))
        if raw not in ("true", "false"):
            raise RegistryError(f"{where}:{lineno}: cannot read .{flag} = {raw}: expected true or false")
        flags[flag] = raw == "true"
    return Fields(name, **flags)


def load(root: Path | None = None) -> tuple[Bench, ...]:
    """Every registry line of this repository (or of `root`), with its benchmark's fields in each build that
    has it. Read again only when a file it reads has changed (a run asks for it several times, and the tests
    run the tool several hundred times in one process: ~14 ms a reading)."""
    root = root if root is not None else repo_root()
    files = [root / REGISTRY, *sorted((root / SOURCES).glob("*.c"))]
    stamps = tuple((str(p), st.st_mtime_ns, st.st_size) for p in files if (st := _stat(p)) is not None)
    return _load(root, stamps)


def _stat(path: Path) -> os.stat_result | None:
    try:
        return path.stat()
    except OSError:
        return None


@functools.lru_cache(maxsize=16)
def _load(root: Path, stamps: tuple[tuple[str, int, int], ...]) -> tuple[Bench, ...]:
    """load's reading, for the files as `stamps` saw them."""
    path = root / REGISTRY
    try:
        lines = parse_registry(path.read_text(), str(path))
    except OSError as exc:
        raise RegistryError(f"{path}: cannot read it: {exc.strerror}") from exc
    sources = {p: p.read_text() for p in sorted((root / SOURCES).glob("*.c"))}
    defined: dict[str, list[Path]] = {}
    for p, text in sources.items():
        for m in _DEFINITION.finditer(strip_comments(text)):
            defined.setdefault(m.group(1), []).append(p)
    out = []
    for symbol, kernel, hosted, lineno in lines:
        where = defined.get(symbol, [])
        if not where:
            raise RegistryError(f"{path}:{lineno}: {symbol} is defined in no file of {SOURCES}/*.c")
        if len(where) > 1:
            files = ", ".join(str(p.relative_to(root)) for p in where)
            raise RegistryError(f"{path}:{lineno}: {len(where)} definitions of const struct bench {symbol} "
                                f"({files}); one is needed")
        source, text = where[0], sources[where[0]]
        out.append(Bench(symbol, source, parse_struct(text, symbol, str(source), hosted=False) if kernel else None,
                         parse_struct(text, symbol, str(source), hosted=True) if hosted else None))
    return tuple(out)


def built(benches: tuple[Bench, ...], hosted: bool) -> list[Fields]:
    """The build's benchmarks' fields, in run order."""
    return [f for b in benches if (f := b.fields(hosted)) is not None]


def names(benches: tuple[Bench, ...], hosted: bool) -> tuple[str, ...]:
    """The build's benchmarks, in run order."""
    return tuple(f.name for f in built(benches, hosted))


def suite(benches: tuple[Bench, ...], suite_name: str, hosted: bool) -> tuple[str, ...]:
    """The benchmarks a suite runs in the build (app/suite.c's selected()), in run order."""
    if suite_name in EVERY_BENCH_SUITES:
        return tuple(f.name for f in built(benches, hosted) if not f.by_name_only)
    flag = SUITE_FLAGS.get(suite_name)
    return tuple(f.name for f in built(benches, hosted) if flag is not None and getattr(f, flag))
