"""results.json / results.csv: writing them, and loading a result set back."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import model, text
from . import replicas
from .protocol import (ERROR_ACCEPTED, ERROR_CODE, ERROR_MSG, ERROR_TOKEN, REC_ERROR, ParseResult, Record,
                       pick_boot)

RESULTS_JSON = "results.json"
RESULTS_CSV = "results.csv"
SERIAL_LOG = "serial.log"
FORMAT_NAME = "cleanroom-results"
FORMAT_VERSION = 1

CSV_LEAD = ["bench", "case"]
CSV_STATS = ["unit", "n", "min", "med", "max", "mean"]
# Fields of a result record that never become CSV columns.
_NOT_COLUMNS = {"t", "seq", "bench", "case", "params", "samples", *CSV_STATS, *replicas.FIELDS}


def to_json_doc(res: ParseResult, source: str, run: dict[str, Any] | None = None) -> dict[str, Any]:
    """The results.json document for one parsed log."""
    doc: dict[str, Any] = {
        "format": FORMAT_NAME,
        "version": FORMAT_VERSION,
        "source": source,
        "complete": res.complete,
        "status": res.status,
        "corrupt": res.corrupt,
        "corrupt_lines": res.corrupt_lines,
        "missing": res.missing,
        "duplicates": res.duplicates,
        "reordered": res.reordered,
        "conflicts": res.conflicts,
        "problems": res.problems,
        "records": res.records,
    }
    if res.replicas > 1:  # several boots (processes) of one command line, merged (replicas.py)
        doc["replicas"] = {"of": res.replicas, "level": replicas.level_of(res.records)}
    if res.boots > 1:  # one boot of a log that holds several
        doc["boot"] = {"index": res.boot, "of": res.boots, "lines": list(res.lines) if res.lines else None}
    if run is not None:
        doc["run"] = run
    return doc


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, separators=(",", ":"))


def csv_rows(records: list[Record]) -> tuple[list[str], list[list[str]]]:
    """Header and rows: one row per result record, params flattened."""
    results = [r for r in records if r.get("t") == "result"]
    param_keys: list[str] = []
    extra_keys: list[str] = []
    for r in results:
        params = r.get("params")
        if isinstance(params, dict):
            for k in params:
                if k not in param_keys:
                    param_keys.append(k)
        for k, v in r.items():
            if k not in _NOT_COLUMNS and k not in extra_keys and not isinstance(v, (list, dict)):
                extra_keys.append(k)
    # qemu-model: the model's figures per operation, model_<figure>_<stat> (model.py)
    model_cols = model.csv_columns(results)
    header = (CSV_LEAD + [f"param_{k}" for k in param_keys] + CSV_STATS + extra_keys
              + [f"model_{f}_{st}" for f, st in model_cols])
    rows: list[list[str]] = []
    for r in results:
        raw = r.get("params")
        flat: dict[str, Any] = raw if isinstance(raw, dict) else {}
        row = [_cell(r.get(k)) for k in CSV_LEAD]
        row += [_cell(flat.get(k)) for k in param_keys]
        row += [_cell(r.get(k)) for k in CSV_STATS]
        row += [_cell(r.get(k)) for k in extra_keys]
        figures = r.get("model") if isinstance(r.get("model"), dict) else {}
        row += [_cell((figures.get(f) or {}).get(st)) for f, st in model_cols]
        rows.append(row)
    return header, rows


def json_text(doc: dict[str, Any]) -> str:
    """results.json's text: its keys one a line, indented, and each record on a line of its own, as on the wire
    (json's indented form, one line a value, was 6 times slower to write: it has no C encoder)."""
    def value(key: str, v: Any) -> str:
        if key == "records" and isinstance(v, list) and v:
            return "[\n" + ",\n".join("  " + json.dumps(r) for r in v) + "\n ]"
        return json.dumps(v, indent=1).replace("\n", "\n ")
    return "{\n" + ",\n".join(f" {json.dumps(k)}: {value(k, v)}" for k, v in doc.items()) + "\n}\n"


def write_results(out_dir: Path, res: ParseResult, source: str,
                  run: dict[str, Any] | None = None) -> tuple[Path, Path]:
    """Write results.json and results.csv into out_dir; return their paths."""
    out_dir.mkdir(parents=True, exist_ok=True)
    json_path = out_dir / RESULTS_JSON
    csv_path = out_dir / RESULTS_CSV
    doc = to_json_doc(res, source, run)
    tmp = json_path.with_suffix(".json.tmp")
    tmp.write_text(json_text(doc), encoding="ascii")
    tmp.replace(json_path)
    header, rows = csv_rows(res.records)
    text.write_csv(csv_path, header, rows)
    return json_path, csv_path


def boot_dirs(out_dir: Path, boots: list[ParseResult]) -> list[Path]:
    """Where each boot's results set goes: out_dir for a single one, else
    out_dir/boot-K for boot K, so that no set ever holds two boots."""
    if len(boots) == 1:
        return [out_dir]
    return [out_dir / f"boot-{res.boot}" for res in boots]


def previous_run(out_dir: Path) -> dict[str, Any] | None:
    """The `run` object of an existing results.json in out_dir, if any."""
    try:
        doc = json.loads((out_dir / RESULTS_JSON).read_text(encoding="ascii"))
    except (OSError, ValueError):
        return None
    run = doc.get("run") if isinstance(doc, dict) else None
    return run if isinstance(run, dict) else None


@dataclass
class ResultSet:
    """A result set as the report sees it."""

    path: Path  # what was loaded
    doc: dict[str, Any]
    figures: str = "auto"  # report --figures: the workset from model cycles, TSC figures, or auto (model.py)

    def __post_init__(self) -> None:
        # what the intervals need to know of the clock (replicas.stamp_clock), told to the records as read
        replicas.stamp_clock([r for r in self.records if isinstance(r, dict)])

    @property
    def records(self) -> list[Record]:
        recs = self.doc.get("records")
        return recs if isinstance(recs, list) else []

    def of_type(self, t: str) -> list[Record]:
        return [r for r in self.records if isinstance(r, dict) and r.get("t") == t]

    def first(self, t: str) -> Record | None:
        found = self.of_type(t)
        return found[0] if found else None


def load(path: Path, boot: int | None = None) -> ResultSet:
    """Load a results.json, a serial log, or a directory holding either.

    A results set is one boot: a log of several needs boot (1-based), or a
    directory holds them as boot-K/ (what parse writes for such a log).
    """
    if path.is_dir():
        if boot is not None and (path / f"boot-{boot}").is_dir():
            path, boot = path / f"boot-{boot}", None
        if boot is None and (path / RESULTS_JSON).is_file():
            path = path / RESULTS_JSON
        elif (path / SERIAL_LOG).is_file():
            path = path / SERIAL_LOG
        else:
            raise FileNotFoundError(f"{path} holds neither {RESULTS_JSON} nor {SERIAL_LOG}")
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such file")
    data = path.read_bytes()
    if path.suffix == ".json":
        if boot is not None:
            raise ValueError(f"--boot {boot} picks a boot of a serial log; {path} is one results set already")
        try:
            doc = json.loads(data)
        except ValueError as exc:
            raise ValueError(f"{path}: not a results.json ({exc})") from exc
        if not isinstance(doc, dict) or not isinstance(doc.get("records"), list):
            raise ValueError(f"{path}: not a results.json (no records list)")
        # written before boots were told apart: a second boot's hello and done among the
        # records, or among the conflicts where its seq numbers were taken
        conflicts = doc.get("conflicts")
        kept = [r for r in doc["records"] + (conflicts if isinstance(conflicts, list) else []) if isinstance(r, dict)]
        boots = max(sum(1 for r in kept if r.get("t") == t) for t in ("hello", "done"))
        if boots > 1:
            raise ValueError(f"{path} mixes the records of {boots} boots (written before boots were told apart): "
                             f"run `cleanroom parse` on its serial log again")
        return ResultSet(path, doc)
    return ResultSet(path, to_json_doc(pick_boot(replicas.parse_sets(data), boot, str(path)), str(path)))


# Exit status of `parse`, `run` and `capture` (documented in --help).
EXIT_OK = 0        # complete, done.status ok, nothing corrupt or missing
EXIT_FAIL = 1      # done.status fail: a self-test or check failed
EXIT_CONFIG = 2    # done.status config: the kernel rejected the command line
EXIT_FAULT = 3     # done.status fault: an unexpected CPU exception
EXIT_DAMAGED = 4   # incomplete (hung, timed out, interrupted), corrupt or missing records; several boots
EXIT_SETUP = 5     # could not run: missing kernel, ISO, emulator, port, bad arguments

EXIT_HELP = """exit status:
  0  complete, done status ok, nothing corrupt or missing
  1  done status fail (a self-test or check failed)
  2  done status config (the kernel rejected the command line)
  3  done status fault (an unexpected CPU exception)
  4  incomplete (hung: no record for the silence limit; --timeout; Ctrl-C),
     corrupt or missing records (status ok or none), or a log of several
     boots (each written as its own set, boot-1/, boot-2/, ...)
  5  could not run: kernel/ISO/emulator/port missing, bad arguments"""

_STATUS_EXIT = {"fail": EXIT_FAIL, "config": EXIT_CONFIG, "fault": EXIT_FAULT}


def exit_status(res: ParseResult, cut_short: bool = False) -> int:
    """The kernel's own verdict first; then whether the record set is whole.

    cut_short: the run was stopped (hung, --timeout, Ctrl-C) rather than finished.
    """
    if res.status in _STATUS_EXIT:
        return _STATUS_EXIT[res.status]
    if cut_short or not res.complete or res.damaged or res.status != "ok":
        return EXIT_DAMAGED
    return EXIT_OK


def doc_exit_status(doc: dict[str, Any]) -> int:
    """exit_status of a results.json document: the kernel's verdict, then whether the set is whole."""
    status = doc.get("status")
    if status in _STATUS_EXIT:
        return _STATUS_EXIT[status]
    damaged = doc.get("corrupt") or doc.get("missing") or doc.get("conflicts")
    return EXIT_OK if doc.get("complete") and status == "ok" and not damaged else EXIT_DAMAGED


def boots_exit_status(boots: list[ParseResult], cut_short: bool = False) -> int:
    """exit_status of a log's only boot; a log of several boots is no one
    run, whatever each says (4)."""
    return exit_status(boots[0], cut_short) if len(boots) == 1 else EXIT_DAMAGED


# The most error records kernel_reasons names for one boot; the full report's errors table lists every one.
REASONS_SHOWN = 10


def kernel_reasons(res: ParseResult) -> list[str]:
    """The kernel's own words for a boot that did not end `done ok` (status config, fail or fault, or no
    done record at all): each error record's code and message, and for a rejected command-line token the
    token and what would have been accepted, one (unwrapped) line each, at most REASONS_SHOWN; nothing for a
    boot that ended ok, whose errors are the report's. E.g. "error cmdline: unknown name 'ctxw' (token
    bench=ctxw); accepted: a comma-separated list of: tsc|ctxsw|..."."""
    if res.done is not None and res.status == "ok":
        return []
    errors = res.of_type(REC_ERROR)
    out = []
    for e in errors[:REASONS_SHOWN]:
        line = f"{REC_ERROR} {text.compact(e.get(ERROR_CODE))}"
        if ERROR_MSG in e:
            line += f": {text.compact(e[ERROR_MSG])}"
        if ERROR_TOKEN in e:
            line += f" (token {text.compact(e[ERROR_TOKEN])})"
        if ERROR_ACCEPTED in e:
            line += f"; accepted: {text.compact(e[ERROR_ACCEPTED])}"
        out.append(line)
    if len(errors) > REASONS_SHOWN:
        out.append(f"and {len(errors) - REASONS_SHOWN} more {REC_ERROR} records "
                   f"(`cleanroom report --full` lists every one)")
    return out


def boots_summary(boots: list[ParseResult], dirs: list[Path]) -> list[str]:
    """What parse, run, ab, capture, lava-fetch and decode-photos print about the records: a single boot's
    summary and details, then the kernel's reasons (kernel_reasons, wrapped to text.WIDTH); for several,
    each boot's under its own heading.

    The reasons come right after the details, whose last line is `done: status ...`: the verdict, then
    the kernel's why; so the last lines said of the records are the ones a reader acts on (the token to
    type again and what is accepted), not lines between the counts and the verdict."""
    if len(boots) == 1:
        return [boots[0].summary_line(), *boots[0].detail_lines(), *text.fit(kernel_reasons(boots[0]))]
    out = [f"the log holds {len(boots)} boots (a reset while it was captured, or logs joined): "
           f"each is a results set of its own"]
    for res, d in zip(boots, dirs):
        hello = res.first("hello")
        cmdline = f", cmdline {hello.get('cmdline')!r}" if hello else ", no hello"
        out.append(f"{res.boot_text()}{cmdline}: results in {d}")
        out.extend("  " + line for line in [res.summary_line(), *res.detail_lines()])
        out.extend(text.fit(["  " + line for line in kernel_reasons(res)]))
    out.append(f"report one with `cleanroom report {dirs[0].parent}/boot-K`; `parse --boot K` writes one alone")
    return out
