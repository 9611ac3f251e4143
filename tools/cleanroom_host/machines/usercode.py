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
from typing import Any, Union

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


def fault_text(fault: dict[str, Any], user_code: dict[str, Any] | None) -> str | None:
    """A fault record's place in the user's code as words, with its source line; None when it is not in it.
    user_code: results.json's run.user_code (each kind's info)."""
    user = fault.get(USER)
    if not isinstance(user, dict) or not user_code:
        return None
    part, offset, name = user.get("part"), user.get("offset"), user.get("name")
    what = f"{fault.get('name')} (vector {fault.get('vector')})"
    if not isinstance(offset, int):
        return None
    if part == "code":  # a primitive's: its DWARF lines say where
        info = next((i for i in user_code.values() if i.get("name") == name and "lines" in i), {})
        lines = [tuple(x) for x in info.get("lines", [])]
        at = max((x for x in lines if x[0] <= offset), default=None, key=lambda x: x[0])
        source = f", {at[1]} line {at[2]}" if at else ""
        return f"{what} in the user's {info.get('kind', 'code')} {name!r}, offset {offset}{source}"
    info = user_code.get("snippet") or {}
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
        return f"{what} in the harness's tail after the user's code {name!r}: the code jumped past its own end"
    line = Piece(b"", [tuple(x) for x in starts]).line_at(offset)  # type: ignore[misc]
    source = f", line {line}: `{lines[line - 1]}`" if line and 0 < line <= len(lines) else ""
    return f"{what} in the user's code {name!r}, {where}, offset {offset}{source}"


def hang_text(records: list[dict[str, Any]]) -> str:
    """What a hang's message adds where the last progress record said the user's code was running next (the
    kernel's `user` field): that code never came back; else nothing."""
    last = next((r for r in reversed(records) if r.get("t") == "progress"), None)
    if last is None or not isinstance(last.get(USER), str):
        return ""
    return (f"; the user's code {last[USER]!r} was running (bench {last.get('bench')}, case {last.get('case')}) "
            "and never came back: a loop without an end, or a wait for something that never comes")


# --- the user's primitives: a switch routine, a lock (lib/userabi.h) ---------------------------------------------

KIND_SWITCH, KIND_LOCK = 2, 3
AS_MAX = 16
ENTRIES = 4
NO_ENTRY = 0xFFFFFFFF
# each kind's entry points, by their symbols in the user's file (lib/userabi.h), in lib/usercode.h's order
SYMBOLS = {KIND_SWITCH: ("cr_switch", "cr_frame"), KIND_LOCK: ("cr_lock_init", "cr_lock", "cr_unlock")}
NEEDED = {KIND_SWITCH: ("cr_switch",), KIND_LOCK: ("cr_lock_init", "cr_lock", "cr_unlock", "cr_lock_size")}
LOCK_SIZE = "cr_lock_size"
LOCK_MAX = 65536  # lib/usercode.h's USERCODE_LOCK_MAX
# the built-in switch routines a user's may stand in for (--switch-as; runtime/switch.c's switch_name)
BUILTIN_SWITCHES = ("pushad", "callee", "fxsave", "jump")
# where the user's C finds lib/userabi.h, and how it is compiled: freestanding, position-independent, every
# symbol hidden (so that its own globals are reached relative to its code, never through a GOT entry to fill)
ABI_DIR = Path(__file__).resolve().parents[3] / "lib"
CFLAGS = ("-m32", "-O2", "-g", "-std=c11", "-ffreestanding", "-fno-stack-protector", "-fPIC", "-fvisibility=hidden",
          "-fno-plt", "-fno-asynchronous-unwind-tables", "-fno-builtin", "-nostdlib", "-Wall")
# one load image from 0: code, constants, data with the zeroed data after it (so the flat binary holds all of it)
LINKER_SCRIPT = """SECTIONS {
  . = 0;
  .text : { *(.text .text.*) }
  .rodata : { *(.rodata .rodata.*) }
  .got : { *(.got) *(.got.plt) *(.igot.plt) }
  .data : { *(.data .data.*) *(.bss .bss.*) *(COMMON) }
  /DISCARD/ : { *(.note*) *(.comment) *(.eh_frame*) *(.rel.dyn) }
}
"""
# relocations a position-independent object may carry (the rest take an absolute address)
R_386_PC32, R_386_GOTOFF, R_386_GOTPC, R_386_PLT32 = 2, 9, 10, 4
RELATIVE = {R_386_PC32, R_386_GOTOFF, R_386_GOTPC, R_386_PLT32}
CROSS_PREFIXES = ("i686-elf-", "i686-linux-gnu-")  # the Makefile's order


@dataclass
class Primitive:
    kind: int
    name: str
    as_: str
    code: bytes
    entries: list[int]
    lock_size: int
    lines: list[tuple[int, str, int]]  # (offset, file, line) where each line's code begins

    def blob(self) -> bytes:
        name = self.name.encode("ascii", "replace")[:NAME_MAX].ljust(NAME_MAX, b"\0")
        as_ = self.as_.encode("ascii")[:AS_MAX].ljust(AS_MAX, b"\0")
        words = HEADER + AS_MAX + 4 * (3 + ENTRIES)
        head = struct.pack("<4I", MAGIC, VERSION, self.kind, words + len(self.code)) + name + as_
        entries = self.entries + [NO_ENTRY] * (ENTRIES - len(self.entries))
        return head + struct.pack(f"<{2 + ENTRIES + 1}I", words, len(self.code), *entries, self.lock_size) + self.code

    def info(self) -> dict[str, Any]:
        return {"kind": "switch" if self.kind == KIND_SWITCH else "lock", "name": self.name, "as": self.as_,
                "lines": self.lines}


def _cross(tool: str) -> str:
    for prefix in CROSS_PREFIXES:
        path = shutil.which(prefix + tool)
        if path:
            return path
    raise UserCodeError(f"no i686 {tool}: install the Debian packages gcc-i686-linux-gnu binutils-i686-linux-gnu "
                        "(tools/setup.sh installs them)")


def _tool(argv: list[str], what: str) -> None:
    proc = subprocess.run(argv, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    if proc.returncode != 0:
        raise UserCodeError(f"{what}:\n{(proc.stderr or proc.stdout).strip()}")


def _absolute_references(obj: Path) -> list[str]:
    """The object's relocations that would take an absolute address, as 'symbol (section)'."""
    from elftools.elf.elffile import ELFFile
    from elftools.elf.relocation import RelocationSection

    found = []
    with obj.open("rb") as fh:
        elf = ELFFile(fh)
        symtab = elf.get_section_by_name(".symtab")
        for sec in elf.iter_sections():
            if not isinstance(sec, RelocationSection) or ".debug" in sec.name:
                continue
            for rel in sec.iter_relocations():
                if rel["r_info_type"] not in RELATIVE:
                    sym = symtab.get_symbol(rel["r_info_sym"]) if symtab else None
                    found.append(f"{(sym.name if sym is not None else '') or '?'} ({sec.name.removeprefix('.rel')})")
    return found


def _symbols_and_lines(elf_path: Path) -> tuple[dict[str, int], list[tuple[int, str, int]]]:
    """The linked image's symbols (name -> offset) and its DWARF line table (offset, file, line)."""
    from elftools.elf.elffile import ELFFile

    with elf_path.open("rb") as fh:
        elf = ELFFile(fh)
        symtab = elf.get_section_by_name(".symtab")
        symbols = {s.name: s["st_value"] for s in symtab.iter_symbols() if s.name} if symtab else {}
        lines: list[tuple[int, str, int]] = []
        if elf.has_dwarf_info():
            dwarf = elf.get_dwarf_info()
            for cu in dwarf.iter_CUs():
                program = dwarf.line_program_for_CU(cu)
                if program is None:
                    continue
                files = program["file_entry"]
                for entry in program.get_entries():
                    st = entry.state
                    if st is None or st.end_sequence:
                        continue
                    index = st.file - 1 if program.header["version"] < 5 else st.file
                    name = files[index].name.decode() if 0 <= index < len(files) else "?"
                    lines.append((st.address, Path(name).name, st.line))
        return symbols, sorted(set(lines))


def primitive(path: Path, kind: int, as_: str = "") -> Primitive:
    """The user's switch routine or lock from a NASM (.asm) or C (.c) file: built into one position-independent
    piece of code (UserCodeError naming what is wrong, before anything boots)."""
    what = f"--{'switch' if kind == KIND_SWITCH else 'lock'}-file {path}"
    if not path.is_file():
        raise UserCodeError(f"{what}: no such file")
    if as_ and as_ not in BUILTIN_SWITCHES:
        raise UserCodeError(f"--switch-as {as_!r}: choose one of {', '.join(BUILTIN_SWITCHES)}")
    with tempfile.TemporaryDirectory(prefix="cleanroom-prim-") as tmp:
        obj, elf, flat, script = (Path(tmp) / n for n in ("code.o", "code.elf", "code.bin", "code.ld"))
        if path.suffix == ".c":
            _tool([_cross("gcc"), *CFLAGS, "-I", str(ABI_DIR), "-c", str(path), "-o", str(obj)], what)
        elif path.suffix in (".asm", ".nasm", ".s"):
            _tool([_nasm(), "-f", "elf32", "-g", "-F", "dwarf", str(path), "-o", str(obj)], what)
        else:
            raise UserCodeError(f"{what}: a .c (C) or .asm (NASM) file")
        absolute = _absolute_references(obj)
        if absolute:
            raise UserCodeError(f"{what}: takes absolute addresses ({', '.join(absolute[:5])}): the code runs where "
                                "the kernel copies it; keep addresses relative (no pointers to functions or globals "
                                "stored in data; in NASM, no `dd label` and no `[label]` without a base register)")
        script.write_text(LINKER_SCRIPT, encoding="ascii")
        _tool([_cross("ld"), "-m", "elf_i386", "-T", str(script), "-o", str(elf), str(obj)], f"{what}: linking")
        _tool([_cross("objcopy"), "-O", "binary", str(elf), str(flat)], f"{what}: objcopy")
        symbols, lines = _symbols_and_lines(elf)
        code = flat.read_bytes()
    missing = [s for s in NEEDED[kind] if s not in symbols]
    if missing:
        raise UserCodeError(f"{what}: defines no {', '.join(missing)} (lib/userabi.h names what a "
                            f"{'switch routine' if kind == KIND_SWITCH else 'lock'} defines)")
    lock_size = 0
    if kind == KIND_LOCK:
        at = symbols[LOCK_SIZE]
        lock_size = struct.unpack_from("<I", code, at)[0] if at + 4 <= len(code) else 0
        if not 0 < lock_size <= LOCK_MAX:
            raise UserCodeError(f"{what}: cr_lock_size is {lock_size}: 1 to {LOCK_MAX} bytes")
    entries = [symbols.get(s, NO_ENTRY) for s in SYMBOLS[kind]]
    return Primitive(kind, path.stem, as_, code, entries, lock_size, lines)


def write_blob(blob: bytes, where: Path, name: str) -> Path:
    where.mkdir(parents=True, exist_ok=True)
    path = where / name
    path.write_bytes(blob)
    return path


UserCode = Union[Snippet, Primitive]  # a side's code, kind by kind
BLOB_FILES = {KIND_SNIPPET: MODULE_FILE, KIND_SWITCH: "switch.bin", KIND_LOCK: "lock.bin"}
KIND_NAMES = {KIND_SNIPPET: "snippet", KIND_SWITCH: "switch", KIND_LOCK: "lock"}
# the command line a run with the user's code and no --cmdline gets: the benchmarks that measure it
CMDLINES = {KIND_SNIPPET: "asm", KIND_SWITCH: "ctxsw", KIND_LOCK: "locks"}


def kind_of(code: Any) -> int:
    return KIND_SNIPPET if isinstance(code, Snippet) else code.kind


def default_cmdline(codes: list[Any]) -> str | None:
    """bench= of every benchmark that measures the code given (None: no code, the run's own default)."""
    if not codes:
        return None
    return "bench=" + ",".join(CMDLINES[kind_of(c)] for c in codes)


def merged(a: list[Any], b: list[Any]) -> list[Any]:
    """B's code: its own of a kind, else A's of that kind."""
    mine = {kind_of(c): c for c in b}
    return [mine.pop(kind_of(c), c) for c in a] + list(mine.values())


def write_module(code: Any, where: Path) -> Path:
    """The code's blob in where (its kind's file)."""
    return write_blob(code.blob(), where, BLOB_FILES[kind_of(code)])


def infos(codes: list[Any]) -> dict[str, Any]:
    """results.json's run.user_code: each kind's source and where its lines' bytes begin."""
    return {KIND_NAMES[kind_of(c)]: c.info() for c in codes}
