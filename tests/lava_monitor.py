"""LAVA's test monitor, as Debian 12's lava-dispatcher (2023.01) runs it, over a recorded serial log.

LAVA's TestMonitorAction cannot be imported without the dispatcher (147 Debian
packages), so its loop is written out here, step for step, on the same pexpect
(4.8.0, as Debian 12 has it) that compiles and searches the patterns in LAVA:
for each monitor, wait for `start`; then expect [EOF, TIMEOUT, end, pattern]
until `end` (pexpect compiles every pattern with re.DOTALL and takes the
earliest match in what has arrived, the first pattern of the list on a tie);
each match of `pattern` is a test case: the monitor's name in lower case with
spaces made dashes is its suite, test_case_id stripped, lower-cased and every
run of non-word characters made "_" its name; with a `result` group the result
goes through the fixupdict (and the measurement stays the matched text), without
one the case passes and its measurement is float(measurement). The console is
pexpect's fdspawn of the log, read maxread bytes at a time (LAVA's ShellCommand
takes the device's spawn_maxread, 4092 unless the device type says otherwise).
tests/fixtures/lava/ holds a log that LAVA's own classes made of a serial log
(tests/fixtures/lava/record.py), which test_lava.py compares with what this gives.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pexpect
from pexpect.fdpexpect import fdspawn

LAVA_WINDOW = 4092  # ShellCommand's maxread: base.jinja2's spawn_maxread
TIMEOUT_S = 10


class MonitorFailed(AssertionError):
    """LAVA would have reported the monitor as failed (end of the console, or a timeout)."""


def test_case(monitor: dict[str, Any], match: dict[str, str | None]) -> dict[str, Any] | None:
    """The results entry LAVA logs for one match of a monitor's pattern (None: LAVA logs none)."""
    suite = monitor["name"].replace(" ", "-").lower()
    case_id = match.get("test_case_id")
    if "result" in match:
        result = match["result"]
        fixup = monitor.get("fixupdict") or {}
        result = fixup.get(result, result) if fixup else result
        if result not in ("pass", "fail", "skip", "unknown") or case_id is None:
            return None
        out: dict[str, Any] = {"definition": suite, "case": re.sub(r"\W+", "_", case_id.strip().lower()),
                               "result": result, "extra": {"test_case_id": case_id.strip()}}
        if "measurement" in match:
            out["measurement"] = match["measurement"]
        if "units" in match:
            out["units"] = match["units"]
        return out
    if not (match.get("test_case_id") and match.get("measurement")):
        return None
    assert case_id is not None and match["measurement"] is not None
    out = {"definition": suite, "case": re.sub(r"\W+", "_", case_id.strip().lower()), "result": "pass",
           "measurement": float(match["measurement"]), "extra": {"test_case_id": case_id.strip()}}
    if "units" in match:
        out["units"] = match["units"]
    return out


def run_monitors(log: Path, monitors: list[dict[str, Any]], maxread: int = LAVA_WINDOW) -> list[dict[str, Any]]:
    """Every test case LAVA's monitors make of the serial log, in order."""
    fd = os.open(log, os.O_RDONLY)
    try:
        console = fdspawn(fd, timeout=TIMEOUT_S, maxread=maxread, searchwindowsize=None, encoding="utf-8",
                          codec_errors="replace")
        cases: list[dict[str, Any]] = []
        for monitor in monitors:
            try:
                console.expect(monitor["start"])
            except (pexpect.EOF, pexpect.TIMEOUT) as exc:
                raise MonitorFailed(f"{monitor['name']}: no start ({type(exc).__name__})") from None
            patterns = [pexpect.EOF, pexpect.TIMEOUT, monitor["end"], monitor["pattern"]]
            while True:
                event = console.expect(patterns)
                if event < 2:
                    raise MonitorFailed(f"{monitor['name']}: {'EOF' if event == 0 else 'timeout'} before its end")
                if event == 2:
                    break
                case = test_case(monitor, console.match.groupdict())
                if case is not None:
                    cases.append(case)
        return cases
    finally:
        os.close(fd)
