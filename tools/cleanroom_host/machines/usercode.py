"""The user's code for bench asm (docs/USERCODE.md): a snippet assembled here with NASM, before anything boots,
into the blob lib/usercode.h lays out, which the kernel gets as a multiboot module (QEMU -initrd, GRUB's module2)
and the hosted build maps from a file (HOSTED_MODULES_ENV).

A snippet is lines of 32-bit assembly: its body, and optional set-up code that runs before the copies. `{r}` in the
body names a register the harness picks: the body is then assembled once per register of REGISTERS, and the kernel
measures a chain (every copy on EAX) and independent copies (the copies rotating through the six); in the set-up a
line with `{r}` stands for one line per register. The body runs copy after copy at an address the kernel picks:
relative jumps within it are fine, a label's absolute address is refused. NASM's own errors are shown with the
user's line. Each piece keeps where each of its lines' bytes begin, so that a fault's offset in the user's code (the
kernel's fault record, `user`) becomes a line of it.
"""

from __future__ import annotations

import re
import shutil
import struct
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# lib/usercode.h's layout
MAGIC = 0x43555243  # "CRUC"
VERSION = 1
KIND_SNIPPET = 1
NAME_MAX = 32
HEADER = 48
VARIANTS = 6
WORDS = 3 + 2 * VARIANTS  # setup offset and length, the variants, a body offset and length each
REGISTERS = ("eax", "ecx", "edx", "ebx", "esi", "edi")  # {r}'s, in the order the kernel rotates them
PLACEHOLDER = "{r}"
DEFAULT_NAME = "snippet"  # --asm's label (--asm-file's: the file's stem)
DEFAULT_CMDLINE = "bench=asm"  # run's command line with a snippet and no --cmdline
MODULE_FILE = "snippet.bin"  # the blob, kept in the results directory
# The hosted build reads its modules' paths from this variable, separated by ':' (hosted/platform.h)
HOSTED_MODULES_ENV = "CLEANROOM_MODULES"
NASM = "nasm"
USER = "user"  # lib/wire.h's WIRE_USER: progress.user names the code running next, fault.user where in it
# a listing line that emitted bytes: line number, offset, bytes (a [..] or (..) is an address NASM fixed)
LISTED = re.compile(r"^\s*(\d+) ([0-9A-F]{8}) (\S+)")
ERROR = re.compile(r"^[^:]*:(\d+): (error|warning): (.*)$")


class UserCodeError(Exception):
    """The user's code cannot be run: the message names the line and what is wrong."""


@dataclass
class Piece:
    """Assembled lines: their bytes, and where each line's bytes begin (offset, the user's line from 1)."""

    code: bytes
    starts: list[tuple[int, int]] = field(default_factory=list)

    def line_at(self, offset: int) -> int | None:
        """The user's line whose bytes hold this offset."""
        found = None
        for start, line in self.starts:
            if start > offset:
                break
            found = line
        return found


@dataclass
class Snippet:
    name: str
    body: list[str]      # the body's lines as the user wrote them
    setup: list[str]     # the set-up's lines, {r} lines expanded
    setup_piece: Piece
    variants: list[Piece]  # one, or one per register of REGISTERS
    registers: list[str]   # each variant's register ("" for the body as written)

    def blob(self) -> bytes:
        """lib/usercode.h's bytes."""
        words = [HEADER + 4 * WORDS, len(self.setup_piece.code), len(self.variants)]
        at = HEADER + 4 * WORDS + len(self.setup_piece.code)
        bodies = []
        for v in self.variants:
            bodies += [at, len(v.code)]
            at += len(v.code)
        words += bodies + [0, 0] * (VARIANTS - len(self.variants))
        code = self.setup_piece.code + b"".join(v.code for v in self.variants)
        name = self.name.encode("ascii", "replace")[:NAME_MAX].ljust(NAME_MAX, b"\0")
        head = struct.pack("<4I", MAGIC, VERSION, KIND_SNIPPET, HEADER + 4 * WORDS + len(code)) + name
        return head + struct.pack(f"<{WORDS}I", *words) + code

    def info(self) -> dict[str, Any]:
        """What results.json's run keeps (`user_code`): the source, and where each line's bytes begin."""
        return {"kind": "snippet", "name": self.name, "body": self.body, "setup": self.setup,
                "setup_starts": self.setup_piece.starts,
                "variants": [{"register": r, "starts": v.starts} for r, v in zip(self.registers, self.variants)]}


def split_lines(text: str) -> list[str]:
    """--asm's text as lines: newlines or ';' separate them (nanoBench's way; a file keeps NASM's comments)."""
    return [line.strip() for part in text.splitlines() for line in part.split(";") if line.strip()]


def _nasm() -> str:
    path = shutil.which(NASM)
    if path is None:
        raise UserCodeError("nasm not found: install the Debian package nasm (tools/setup.sh installs it)")
    return path


def assemble(lines: list[str], what: str) -> Piece:
    """The lines as 32-bit code at an address the kernel picks; UserCodeError naming the line NASM refused."""
    if not lines:
        return Piece(b"")
    with tempfile.TemporaryDirectory(prefix="cleanroom-asm-") as tmp:
        src, out, lst = Path(tmp) / "code.asm", Path(tmp) / "code.bin", Path(tmp) / "code.lst"
        src.write_text("bits 32\n" + "\n".join(lines) + "\n", encoding="utf-8")
        proc = subprocess.run([_nasm(), "-f", "bin", "-l", str(lst), "-o", str(out), str(src)],
                              capture_output=True, text=True, stdin=subprocess.DEVNULL)
        problems = []
        for text in proc.stderr.splitlines():
            m = ERROR.match(text)
            if m and m.group(2) == "error":
                n = int(m.group(1)) - 1  # the first line is bits 32
                problems.append(f"{what}, line {n} (`{lines[n - 1] if 0 < n <= len(lines) else ''}`): {m.group(3)}")
        if proc.returncode != 0:
            raise UserCodeError("; ".join(problems) or f"{what}: nasm failed: {proc.stderr.strip()}")
        code = out.read_bytes()
        starts: list[tuple[int, int]] = []
        for text in lst.read_text(errors="replace").splitlines():
            m = LISTED.match(text)
            if not m:
                continue
            n, offset, emitted = int(m.group(1)) - 1, int(m.group(2), 16), m.group(3)
            if "[" in emitted or "(" in emitted:
                raise UserCodeError(f"{what}, line {n} (`{lines[n - 1]}`): uses an absolute address (a label's, or a "
                                    "section's): the code runs copy after copy where the kernel puts it; use the "
                                    "scratch buffer (ESI, EDI, EBP point at it) and relative jumps")
            if not starts or starts[-1][1] != n:
                starts.append((offset, n))
        return Piece(code, starts)


def snippet(body_text: str | None, body_file: Path | None, setup_text: str | None) -> Snippet:
    """--asm or --asm-file, with --asm-setup: assembled (UserCodeError before anything boots)."""
    if body_file is not None:
        try:
            body = [line.rstrip() for line in body_file.read_text(encoding="utf-8").splitlines()]
        except OSError as exc:
            raise UserCodeError(f"--asm-file {body_file}: {exc.strerror or exc}") from exc
        name, what = body_file.stem, f"--asm-file {body_file}"
    else:
        body, name, what = split_lines(body_text or ""), DEFAULT_NAME, "--asm"
    if not any(line.strip() and not line.strip().startswith(";") for line in body):
        raise UserCodeError(f"{what}: no instruction to measure")
    rotate = any(PLACEHOLDER in line for line in body)
    setup = []
    for line in split_lines(setup_text or ""):
        setup += [line.replace(PLACEHOLDER, r) for r in REGISTERS] if PLACEHOLDER in line else [line]
    setup_piece = assemble(setup, "--asm-setup")
    registers = list(REGISTERS) if rotate else [""]
    variants = []
    for r in registers:
        piece = assemble([line.replace(PLACEHOLDER, r) for line in body], what + (f" ({{r}} = {r})" if r else ""))
        if not piece.code:
            raise UserCodeError(f"{what}: assembles to no bytes")
        variants.append(piece)
    return Snippet(name, body, setup, setup_piece, variants, registers)


def write_module(s: Snippet, where: Path) -> Path:
    """The blob in where/MODULE_FILE."""
    where.mkdir(parents=True, exist_ok=True)
    path = where / MODULE_FILE
    path.write_bytes(s.blob())
    return path


def fault_text(fault: dict[str, Any], info: dict[str, Any] | None) -> str | None:
    """A fault record's place in the user's code as words, with its source line; None when it is not in it."""
    user = fault.get(USER)
    if not isinstance(user, dict) or not info:
        return None
    part, offset = user.get("part"), user.get("offset")
    if not isinstance(offset, int):
        return None
    if part == "setup":
        lines, starts, where = info.get("setup", []), info.get("setup_starts", []), "its set-up"
    elif part == "body":
        variants = info.get("variants", [])
        v = user.get("variant", 0)
        variant = variants[v] if isinstance(v, int) and 0 <= v < len(variants) else {}
        lines, starts = info.get("body", []), variant.get("starts", [])
        reg = variant.get("register")
        where = f"copy {user.get('copy')} of its body" + (f" ({{r}} = {reg})" if reg else "")
    else:
        return (f"{fault.get('name')} (vector {fault.get('vector')}) in the harness's tail after {info.get('name')}: "
                "the code jumped past its own end")
    line = Piece(b"", [tuple(s) for s in starts]).line_at(offset)  # type: ignore[misc]
    source = f", line {line}: `{lines[line - 1]}`" if line and 0 < line <= len(lines) else ""
    return (f"{fault.get('name')} (vector {fault.get('vector')}) in the user's code {info.get('name')!r}, "
            f"{where}, offset {offset}{source}")


def hang_text(records: list[dict[str, Any]]) -> str:
    """What a hang's message adds where the last progress record said the user's code was running next (the
    kernel's `user` field): that code never came back; else nothing."""
    last = next((r for r in reversed(records) if r.get("t") == "progress"), None)
    if last is None or not isinstance(last.get(USER), str):
        return ""
    return (f"; the user's code {last[USER]!r} was running (bench {last.get('bench')}, case {last.get('case')}) "
            "and never came back: a loop without an end, or a wait for something that never comes")
