"""LAVA job logs back to what `capture` writes: serial.log, results.json, results.csv.

A LAVA job log is YAML, one entry a line: `- {"dt": ..., "lvl": ..., "msg": ...}`
(the server's log, the web UI's download and `lavacli jobs logs --raw`; lava-run
prints the entries without the leading "- "). LAVA's dispatcher (lava_dispatcher
2023.01's ShellLogger, the logfile of its pexpect session on the console) logs the
console a line an entry, at one of two levels:

  target    while an action reads the console (the boot, the monitors)
  feedback  while LAVA only listens: the finalize step's read-feedback (with "ns",
            the namespace: "common" in a job that names none) and the QEMU
            session's close, which sends `poweroff` and listens for 5 s (no "ns")

ShellLogger keeps a line's start until its newline comes and logs the whole line at
the level in effect then: a change of level never splits a line, but a line the
monitors were still reading when the last one stopped at its end string (the
kernel's `done`) is logged as feedback, after the last target line. So the console
here is the target and feedback entries in the log's order (feedback of another
namespace is another device's, and is left out), less what LAVA sent: pexpect logs
what is sent into the same ShellLogger, and the console's terminal echoes it, so an
`input` entry (QEMU's `poweroff`) comes back as a console line twice. A console line
equal to the last input's line is one of those, not the device's. The one way a
device's line is split: LAVA sends while the line has only partly arrived; what it
sent is then joined to the line's start, its rest comes as another entry, and the
record's CRC marks the line damaged. (LAVA sends `poweroff` after listening for up to
a second, once the monitors have ended; by then the kernel has written its last line.)
ShellLogger also removed carriage returns and escape characters, made a double
newline within what it read at once a single one, and wrote every double quote as
`\\"`, which is undone here. (The kernel's JSON never holds a backslash before a
quote: it escapes both as \\u00XX.) Entries of level `results` are the test cases
LAVA's monitors made.
"""

from __future__ import annotations

import re
import shlex
import subprocess
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from ..records.protocol import ParseResult, Record
from ..records.replicas import parse_sets
from ..records.results import SERIAL_LOG
from ..records.text import not_installed
from . import lavajob
from .runner import write_boots

TARGET = "target"  # the level of the console's lines while an action reads it
FEEDBACK = "feedback"  # ... while LAVA only listens (the finalize step, the connection's close)
CONSOLE = (TARGET, FEEDBACK)
INPUT = "input"  # the level of what LAVA sends to the device (the console's terminal echoes it)
RESULTS = "results"  # the level of a test case
NAMESPACE = "common"  # LAVA's namespace of a job that names none (as lava-job's do)
LAVA = "lava"  # results.json's run.emulator for a run LAVA made; also LAVA's own test suite (the job's result)
JOB_ID = re.compile(r"\d+(?:\.\d+)?")  # a LAVA job id (multinode jobs: 1234.0)
SHOWN_BAD_LINES = 3


class LavaLogError(ValueError):
    """A source that gave no LAVA log; the message says why."""


@dataclass
class LavaLog:
    """What a LAVA job log holds for cleanroom."""

    serial: bytes  # the device's lines, as the serial port sent them (less what LAVA removed)
    results: list[dict[str, Any]]  # the test cases, in order
    entries: int  # log entries read
    bad: list[str] = field(default_factory=list)  # lines that are no log entry (shortened)
    console_s: float | None = None  # from the first console line to the last, by LAVA's timestamps


@dataclass
class Fetched:
    """A LAVA log and where it came from."""

    log: LavaLog
    source: str  # the file, or `lavacli ...`
    job: str | None = None  # the job id
    device: str | None = None  # the LAVA device (from lavacli)
    device_type: str | None = None


def _entry(line: str, loader: Any) -> dict[str, Any] | None:
    import yaml

    text = line[2:] if line.startswith("- ") else line
    try:
        entry = yaml.load(text, Loader=loader)
    except yaml.YAMLError:
        return None
    return entry if isinstance(entry, dict) and "lvl" in entry and "msg" in entry else None


def read_log(data: bytes, name: str) -> LavaLog:
    """The device's serial lines and the test cases of a LAVA job log."""
    try:
        import yaml
    except ImportError as exc:
        raise LavaLogError(not_installed("PyYAML")) from exc
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    lines: list[str] = []
    found: list[dict[str, Any]] = []
    entries = 0
    bad: list[str] = []
    times: list[datetime] = []
    sent: str | None = None  # what LAVA sent last (an input entry's line)
    for line in data.decode("utf-8", "replace").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        entry = _entry(line, loader)
        if entry is None:
            bad.append(line[:80])
            continue
        entries += 1
        if entry["lvl"] == INPUT and isinstance(entry["msg"], str):
            sent = entry["msg"].rstrip("\r\n")
        elif _console(entry):
            text = entry["msg"].replace('\\"', '"')  # LAVA's ShellLogger wrote every " as \"
            if text != sent:  # pexpect's log of what LAVA sent, or the terminal's echo of it
                lines.append(text)
            when = _time(entry.get("dt"))
            if when is not None:
                times.append(when)
        elif entry["lvl"] == RESULTS and isinstance(entry["msg"], dict):
            found.append(entry["msg"])
    if not entries:
        first = f" (line 1: {bad[0]!r})" if bad else ""
        raise LavaLogError(f"{name}: not a LAVA job log: no line is a log entry {{dt, lvl, msg}}{first}")
    if not lines:
        raise LavaLogError(f"{name}: the LAVA log has {entries} entries but no device output (level "
                           f"{' or '.join(CONSOLE)}): "
                           f"did the job boot the device?")
    span = round((times[-1] - times[0]).total_seconds(), 3) if times else None
    return LavaLog(("\n".join(lines) + "\n").encode("utf-8"), found, entries, bad, span)


def _console(entry: dict[str, Any]) -> bool:
    """A line of this job's console: a target entry, or a feedback entry of no namespace or LAVA's default."""
    if entry["lvl"] not in CONSOLE or not isinstance(entry["msg"], str):
        return False
    return entry["lvl"] == TARGET or entry.get("ns", NAMESPACE) == NAMESPACE


def _time(dt: Any) -> datetime | None:
    """A log entry's time (LAVA writes datetime.isoformat() of UTC)."""
    try:
        return datetime.fromisoformat(str(dt))
    except ValueError:
        return None


def _lavacli(program: str, identity: str | None, *args: str) -> bytes:
    argv = [program, *(["-i", identity] if identity else []), *args]
    try:
        proc = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True)
    except FileNotFoundError:
        raise LavaLogError(f"{program} not found: install lavacli (pip install lavacli==3.1.0) and add your LAVA "
                           f"server as an identity (lavacli identities add ...; docs/LAB.md)") from None
    except OSError as exc:
        raise LavaLogError(f"cannot run {program}: {exc}") from exc
    if proc.returncode != 0:
        said = proc.stderr.decode("utf-8", "replace").strip()
        raise LavaLogError(f"`{shlex.join(argv)}` failed (exit {proc.returncode})" + (f": {said}" if said else ""))
    return proc.stdout


def fetch(source: str, lavacli: str, identity: str | None) -> Fetched:
    """A log file, or a job id fetched with lavacli (the log, then the job's device)."""
    path = Path(source)
    if path.is_file():
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise LavaLogError(f"cannot read {source}: {exc.strerror or exc}") from exc
        return Fetched(read_log(data, source), source)
    if not JOB_ID.fullmatch(source):
        raise LavaLogError(f"{source!r}: neither a file nor a LAVA job id (a number such as 1234, or 1234.0 for "
                           f"a multinode job)")
    logs = ("jobs", "logs", "--raw", source)
    log = read_log(_lavacli(lavacli, identity, *logs), f"job {source}")
    import yaml

    shown = yaml.safe_load(_lavacli(lavacli, identity, "jobs", "show", "--yaml", source) or b"{}")
    job = shown if isinstance(shown, dict) else {}
    device, device_type = job.get("device"), job.get("device_type")
    return Fetched(log, shlex.join([lavacli, *logs]), source, str(device) if device else None,
                   str(device_type) if device_type else None)


def machine_name(records: list[Record], device: str | None) -> str:
    """The machine a run ran on: the LAVA device, and the CPU and platform its records name."""
    cpu = next((r for r in records if r.get("t") == "cpu"), None)
    hello = next((r for r in records if r.get("t") == "hello"), None)
    if cpu is not None:
        what = (f"\"{cpu.get('brand') or cpu.get('vendor')}\" ({cpu.get('vendor')} family {cpu.get('family')} "
                f"model {cpu.get('model')}), platform {cpu.get('platform')}")
    elif hello is not None:
        what = f"no cpu record (loader {hello.get('loader')})"
    else:
        what = "no hello or cpu record"
    return f"{device}: {what}" if device else what


def test_cases(results: list[dict[str, Any]]) -> dict[str, dict[str, int]]:
    """LAVA's test cases per suite (cleanroom's monitors, and LAVA's own `lava`), counted by result."""
    out: dict[str, dict[str, int]] = {}
    for r in results:
        suite = str(r.get("definition"))
        if suite in (lavajob.MONITOR_SELFTEST, lavajob.MONITOR_RESULTS, LAVA):
            counts = out.setdefault(suite, {})
            counts[str(r.get("result"))] = counts.get(str(r.get("result")), 0) + 1
    return out


def write(fetched: Fetched, out_dir: Path, device: str | None) -> tuple[list[ParseResult], dict[str, Any]]:
    """serial.log, then each boot's results.json and results.csv, as `capture` writes them."""
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / SERIAL_LOG).write_bytes(fetched.log.serial)
    boots = parse_sets(fetched.log.serial)
    records = [r for b in boots for r in b.records]
    run: dict[str, Any] = {
        "emulator": LAVA,
        "source": fetched.source,
        "job": fetched.job,
        "device": device,
        "device_type": fetched.device_type,
        "machine": machine_name(boots[0].records, device),
        "wall_seconds": fetched.log.console_s,  # the console's first line to its last
        "log_entries": fetched.log.entries,
        "log_bad_lines": len(fetched.log.bad),
        "log_bad_examples": fetched.log.bad[:SHOWN_BAD_LINES],
        "test_cases": test_cases(fetched.log.results),
        "records": {"result": sum(r.get("t") == "result" for r in records),
                    "test": sum(r.get("t") == "test" for r in records)},
    }
    write_boots(out_dir, boots, run)
    return boots, run


def summary(run: dict[str, Any]) -> list[str]:
    """What lava-fetch says besides the records' summary: the job, the machine, LAVA's test cases."""
    job = f"LAVA job {run['job']}" if run.get("job") else f"LAVA log {run.get('source')}"
    bad = run.get("log_bad_examples") or []
    out = [f"{job}: {run.get('log_entries')} log entries"
           + (f"; {run.get('log_bad_lines')} other line(s), e.g. {bad[0]!r}" if bad else ""),
           f"machine: {run.get('machine')}"]
    cases = run.get("test_cases") or {}
    made = {suite: sum(counts.values()) for suite, counts in cases.items()}
    recs = run.get("records") or {}
    out.append(f"LAVA's test cases: {made.get(lavajob.MONITOR_RESULTS, 0)} in {lavajob.MONITOR_RESULTS} "
               f"({recs.get('result', 0)} result records), {made.get(lavajob.MONITOR_SELFTEST, 0)} in "
               f"{lavajob.MONITOR_SELFTEST} ({recs.get('test', 0)} test records)"
               + ("; LAVA's own: " + ", ".join(f"{n} {r}" for r, n in cases[LAVA].items()) if LAVA in cases else ""))
    return out
