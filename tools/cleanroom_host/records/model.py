"""The cache and TLB model (issue 13) on the host side: the kernel's mailbox
address from the ELF's symbol table, the plugin's output (model.jsonl), the
join of its samples into the result records, and the model view of a run that
the workset report draws Figures 3-8 from.

The contract (docs/MODEL.md) in short: the plugin writes one JSON line per
marked sample, {"t":"sample","case":N,"sample":I, ...figures}, between a
header line ({"t":"model", the preset's figures}) and an end line. A result
record with `case_no` N and n samples owns the samples (N, 0..n-1); each
figure is divided by the result's `per` (toward zero, as the kernel divides
its TSC samples) and summarised as min / lower median / max, the kernel's own
statistics. Samples nobody owns, or a result missing some of its samples, are
a mismatch: the run's status says so and `run` exits 4.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from .protocol import Record
from .text import not_installed

MAILBOX_SYMBOL = "model_mailbox"
MODEL_FILE = "model.jsonl"
PRESETS = ("prestonia", "modern")
DEFAULT_PRESET = "prestonia"
CUSTOM_PREFIX = "custom:"
# The per-sample figures of the plugin's sample lines, in the order results.csv lists them.
FIGURES = ("cycles", "instructions", "loads", "stores", "l1d_misses", "l2_misses", "l3_misses", "tlb_misses",
           "walk_reads")
STATS = ("min", "med", "max")
# The cache levels of the header line whose miss figure means something (l3: null = no L3).
LEVEL_OF = {"l1d_misses": "l1d", "l2_misses": "l2", "l3_misses": "l3"}
# report --figures: model (modelled cycles), tsc (the records' own TSC figures), auto (model when present)
FIGURE_CHOICES = ("auto", "model", "tsc")
MODEL_KIND = "model"  # the model view's Machine.kind


class ModelError(Exception):
    """The model cannot be set up (no mailbox symbol, a bad --model); the message says what to do."""


# --- the mailbox: the ELF's symbol table (pyelftools) --------------------------


def _elf_symbols(path: Path) -> list[Any]:
    """Every symbol of a 32-bit ELF file's .symtab.

    Raises ModelError when the file cannot be read, is no 32-bit ELF, or has no symbol
    table (stripped)."""
    try:
        from elftools.common.exceptions import ELFError
        from elftools.elf.elffile import ELFFile
        from elftools.elf.sections import SymbolTableSection
    except ImportError as exc:
        raise ModelError(not_installed("pyelftools")) from exc

    try:
        with path.open("rb") as fh:
            elf = ELFFile(fh)
            if elf.elfclass != 32:
                raise ModelError(f"{path} is a {elf.elfclass}-bit ELF file, not a 32-bit one (the kernel is one)")
            symtab = elf.get_section_by_name(".symtab")
            if not isinstance(symtab, SymbolTableSection):
                raise ModelError(f"{path} has no symbol table (.symtab): was it stripped?")
            return list(symtab.iter_symbols())
    except OSError as exc:
        raise ModelError(f"cannot read {path}: {exc.strerror or exc}") from exc
    except ELFError as exc:
        raise ModelError(f"{path} is not an ELF file, or a damaged one: {exc}") from exc


def elf_symbol(path: Path, name: str) -> int | None:
    """The value (link address) of a defined symbol in a 32-bit ELF file's .symtab, or None
    (ModelError as _elf_symbols raises it)."""
    defined = [s for s in _elf_symbols(path) if s.name == name and s["st_shndx"] != "SHN_UNDEF"]
    return int(defined[0]["st_value"]) if defined else None


def elf_function_at(path: Path, addr: int) -> str | None:
    """The function of a 32-bit ELF file that holds addr, as "name+0xoffset"; None when none does
    (ModelError as _elf_symbols raises it)."""
    for s in _elf_symbols(path):
        start, size = int(s["st_value"]), int(s["st_size"])
        if s["st_info"]["type"] == "STT_FUNC" and start <= addr < start + size:
            return f"{s.name}+0x{addr - start:x}"
    return None


def mailbox_address(kernel: Path) -> int:
    """model_mailbox's address in the kernel ELF (identity mapped: physical = link address)."""
    addr = elf_symbol(kernel, MAILBOX_SYMBOL)
    if addr is None:
        raise ModelError(f"kernel {kernel} has no symbol {MAILBOX_SYMBOL}: it was built without the model's "
                         f"marks (issue 13); rebuild it with `make`")
    return addr


def check_preset(model: str) -> str:
    """--model: prestonia, modern or custom:SPEC (the plugin checks SPEC itself, docs/MODEL.md)."""
    if model in PRESETS or (model.startswith(CUSTOM_PREFIX) and len(model) > len(CUSTOM_PREFIX)):
        return model
    raise ModelError(f"--model {model!r}: choose one of {', '.join(PRESETS)} or custom:SPEC "
                     f"(e.g. custom:l1d=8K/4/64/2,l2=2M/8/64/7; docs/MODEL.md)")


def qemu_opt(value: str) -> str:
    """A value inside one -plugin option: QEMU's option parser reads ',,' as a literal comma."""
    return value.replace(",", ",,")


def plugin_option(plugin: Path, mailbox: int, out: Path, model: str) -> str:
    """-plugin's argument: the plugin and its key=value arguments (contract section 3)."""
    return ",".join([qemu_opt(str(plugin)), f"mailbox=0x{mailbox:x}", f"out={qemu_opt(str(out))}",
                     f"model={qemu_opt(model)}"])


# --- model.jsonl ---------------------------------------------------------------

@dataclass
class ModelOutput:
    """What the plugin wrote: its header, samples by (case, sample) and its end line."""

    header: dict[str, Any] | None = None
    samples: list[dict[str, Any]] = field(default_factory=list)
    end: dict[str, Any] | None = None
    bad_lines: list[int] = field(default_factory=list)  # 1-based line numbers that are no JSON object


def read_output(path: Path) -> ModelOutput:
    out = ModelOutput()
    with path.open(encoding="utf-8", errors="replace") as f:
        for number, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except ValueError:
                obj = None
            if not isinstance(obj, dict):
                out.bad_lines.append(number)
                continue
            kind = obj.get("t")
            if kind == "model" and out.header is None:
                out.header = obj
            elif kind == "sample":
                out.samples.append(obj)
            elif kind == "end":
                out.end = obj
            else:
                out.bad_lines.append(number)
    return out


# --- the join -------------------------------------------------------------------

def _int(v: Any) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def per_operation(value: int, per: int) -> int:
    """value / per rounded toward zero, as the kernel divides its samples."""
    q = abs(value) // per
    return q if value >= 0 else -q


def stats(values: list[int]) -> dict[str, int]:
    """min, lower median and max: the kernel's statistics of a result's samples (docs/PROTOCOL.md)."""
    ordered = sorted(values)
    return {"min": ordered[0], "med": ordered[(len(ordered) - 1) // 2], "max": ordered[-1]}


def case_text(rec: Record) -> str:
    """'case 7 (workset single size=4096 paging=on)': how a mismatch names a case."""
    params = rec.get("params")
    where = " ".join(f"{k}={v}" for k, v in params.items() if k in ("size", "paging", "pagesize", "n")) \
        if isinstance(params, dict) else ""
    return f"case {rec.get('case_no')} ({rec.get('bench')} {rec.get('case')}{' ' + where if where else ''})"


@dataclass
class Join:
    """The join's outcome: run["model"], and the problems that make the run exit 4."""

    run: dict[str, Any]
    problems: list[str]

    @property
    def ok(self) -> bool:
        return not self.problems


def join(records: list[Record], output: ModelOutput | None, requested: str | None = None) -> Join:
    """Attach `model` to every result record with a case_no from the plugin's samples; in place."""
    if output is None:
        return Join({"status": "missing", "requested": requested},
                    [f"model: the plugin wrote no {MODEL_FILE} (did QEMU load it? see emulator.log)"])
    problems: list[str] = []
    by_case: dict[int, dict[int, dict[str, Any]]] = {}
    duplicates: list[tuple[int, int]] = []
    for s in output.samples:
        case, index = _int(s.get("case")), _int(s.get("sample"))
        if case is None or index is None:
            problems.append(f"model: a sample line without case or sample number: {json.dumps(s)[:120]}")
            continue
        slot = by_case.setdefault(case, {})
        if index in slot:
            duplicates.append((case, index))
        slot[index] = s
    owned: set[int] = set()
    joined = 0
    for rec in records:
        if rec.get("t") != "result":
            continue
        case_no, n = _int(rec.get("case_no")), _int(rec.get("n"))
        if case_no is None or n is None or n < 1:
            continue  # an old log, or a result without samples: nothing to join
        owned.add(case_no)
        mine = by_case.get(case_no, {})
        missing = [i for i in range(n) if i not in mine]
        extra = sorted(i for i in mine if i >= n)
        if missing or extra:
            what = []
            if missing:
                what.append(f"{len(missing)} of its {n} samples missing (sample {', '.join(map(str, missing[:8]))}"
                            f"{' ...' if len(missing) > 8 else ''})")
            if extra:
                what.append(f"samples beyond its n={n}: {', '.join(map(str, extra[:8]))}")
            problems.append(f"model: {case_text(rec)}: " + "; ".join(what))
            continue
        per = _int(rec.get("per")) or 1
        figures: dict[str, dict[str, int]] = {}
        for name in FIGURES:
            values = [_int(mine[i].get(name)) for i in range(n)]
            if all(v is not None for v in values):
                figures[name] = stats([per_operation(v, per) for v in values if v is not None])
        rec["model"] = figures
        joined += n
    unknown = sorted(set(by_case) - owned)
    for case in unknown:
        problems.append(f"model: {len(by_case[case])} samples of case {case}, which no result record has")
    for case, index in duplicates[:8]:
        problems.append(f"model: case {case} sample {index} appears more than once")
    if output.header is None:
        problems.append(f"model: {MODEL_FILE} has no header line (t=model)")
    if output.end is None:
        problems.append(f"model: {MODEL_FILE} has no end line: the plugin did not finish (QEMU killed?)")
    if output.bad_lines:
        problems.append(f"model: {len(output.bad_lines)} unreadable lines in {MODEL_FILE} "
                        f"(line {', '.join(map(str, output.bad_lines[:8]))})")
    end = output.end or {}
    unmatched = _int(end.get("unmatched"))
    if unmatched:
        problems.append(f"model: the plugin saw {unmatched} unmatched sample marks (an end without a begin, "
                        f"or a begin without an end)")
    header = {k: v for k, v in (output.header or {}).items() if k != "t"}
    run = {**header, "samples": len(output.samples), "joined": joined, "unmatched": unmatched,
           "unknown_pde_walks": _int(end.get("unknown_pde_walks")), "marks": _int(end.get("marks")),
           "accesses": _int(end.get("accesses")), "file": MODEL_FILE,
           "status": "ok" if not problems else "mismatch"}
    if problems:
        run["problems"] = problems
    return Join(run, problems)


def join_file(records: list[Record], path: Path, requested: str | None = None) -> Join:
    """join() with the plugin's file (None when it does not exist)."""
    return join(records, read_output(path) if path.is_file() else None, requested)


def csv_columns(records: Iterable[Record]) -> list[tuple[str, str]]:
    """(figure, stat) pairs for results.csv's model_<figure>_<stat> columns: the figures any result has."""
    seen: set[str] = set()
    for r in records:
        m = r.get("model")
        if r.get("t") == "result" and isinstance(m, dict):
            seen.update(k for k, v in m.items() if isinstance(v, dict))
    return [(f, s) for f in FIGURES if f in seen for s in STATS]


# --- the model view (report) --------------------------------------------------------

def has_model(records: Iterable[Record], bench: str | None = None) -> bool:
    return any(r.get("t") == "result" and isinstance(r.get("model"), dict) and r["model"].get("cycles")
               and (bench is None or r.get("bench") == bench) for r in records)


def use_model(records: Iterable[Record], figures: str, bench: str | None = None) -> bool:
    """Whether the report draws from modelled cycles: --figures model, or auto with model figures present."""
    return figures == "model" or (figures == "auto" and has_model(records, bench))


def preset_text(info: dict[str, Any] | None) -> str:
    """'prestonia (L1d 8K 4-way, L2 512K 8-way, dTLB 64 + 64 (4M); CPI 1, memory 200, walk 0)'."""
    if not info:
        return "an unrecorded preset"
    parts = []
    for level in ("l1d", "l2", "l3"):
        c = info.get(level)
        if isinstance(c, dict) and _int(c.get("size")):
            ways = f" {c.get('ways')}-way" if c.get("ways") is not None else ""
            lat = f" {c.get('latency')} cycles" if c.get("latency") is not None else ""
            parts.append(f"{level.upper().replace('D', 'd')} {_size(c['size'])}{ways}{lat}")
    tlbs = [f"{info[k].get('entries')}" + (" (4M)" if k == "dtlb4m" else "")
            for k in ("dtlb4k", "dtlb4m") if isinstance(info.get(k), dict)]
    if tlbs:
        parts.append("dTLB " + " + ".join(tlbs))
    costs = ", ".join(f"{what} {info[k]}" for k, what in (("cpi", "CPI"), ("mem_latency", "memory"),
                                                            ("walk_cycles", "walk")) if info.get(k) is not None)
    text = "; ".join(filter(None, [", ".join(parts), costs]))
    return f"{info.get('preset', '?')}" + (f" ({text})" if text else "")


def _size(n: int) -> str:
    for unit, size in (("M", 1 << 20), ("K", 1 << 10)):
        if n >= size:
            return f"{n / size:g}{unit}"
    return str(n)


def run_text(info: dict[str, Any]) -> str:
    """results.json's run.model in a line: the preset, the samples joined, whether every one matched."""
    status = "every sample matched" if info.get("status") == "ok" else f"status {info.get('status')}"
    joined = f"{info.get('joined')} samples joined, " if info.get("joined") is not None else ""
    return f"cache/TLB model, preset {preset_text(info)}; {joined}{status}"


def header_line(info: dict[str, Any] | None) -> str:
    """What every model figure is headed by: modelled, on which preset, not measured."""
    return (f"workset figures MODELLED on preset {preset_text(info)}: QEMU's executed instructions and memory "
            f"accesses priced by the cache/TLB model (docs/MODEL.md), NOT measured cycles of any machine")


def model_caches(info: dict[str, Any] | None) -> list[tuple[str, int]]:
    """The model's data caches, smallest first, as (name, size)."""
    out = []
    for level, name in (("l1d", "L1d"), ("l2", "L2"), ("l3", "L3")):
        c = (info or {}).get(level)
        if isinstance(c, dict) and _int(c.get("size")):
            out.append((name, int(c["size"])))
    return sorted(out, key=lambda c: c[1])


def view_record(rec: Record, info: dict[str, Any] | None) -> Record:
    """A result as the model sees it: min/med/max in modelled cycles per operation, the other figures
    (instructions, misses, walk reads) as its counters, already per operation (per 1)."""
    m = rec.get("model")
    if rec.get("t") != "result" or not isinstance(m, dict) or not isinstance(m.get("cycles"), dict):
        return rec
    out = {k: v for k, v in rec.items() if k not in ("samples", "mean", "counters", "overhead", "model")}
    cyc = m["cycles"]
    out.update(min=cyc.get("min"), med=cyc.get("med"), max=cyc.get("max"), per=1, unit="model cycles")
    counters = {}
    for name in FIGURES[1:]:
        level = LEVEL_OF.get(name)
        if level and info is not None and not isinstance(info.get(level), dict):
            continue  # a level the preset does not have (l3: null)
        if name in ("loads", "stores"):
            continue
        if isinstance(m.get(name), dict):
            counters[name] = m[name]
    out["counters"] = counters
    return out


def view_records(records: list[Record], info: dict[str, Any] | None, bench: str | None = None) -> list[Record]:
    return [view_record(r, info) if bench is None or r.get("bench") == bench else r for r in records]


def run_info(doc: dict[str, Any]) -> dict[str, Any] | None:
    run = doc.get("run")
    info = run.get("model") if isinstance(run, dict) else None
    return info if isinstance(info, dict) else None


