"""The kernel's reason on the terminal (issue 48): a boot that did not end `done ok` has the kernel's own
words printed under its `done:` line by every command that reads records (run, ab, capture, parse,
lava-fetch): each error record's code and message, and for a rejected command-line token the token and
what is accepted. And no progress text is left unterminated before them."""

from __future__ import annotations

import io
import json
import os
import re
import threading
from pathlib import Path
from typing import Any

import pytest

from booting import HOSTED, KERNEL, built, tool_main
from cleanroom_host import cli
from cleanroom_host.records import results, text
from cleanroom_host.records.protocol import encode_record

TYPO = "bench=ctxw"  # a benchmark's name mistyped: the kernel rejects it (done status config)
PROCESSES = "5"  # a hosted run of several processes: it announces "process 1 of 5" and stops after the first


def said(stdout: str, start: str) -> list[str]:
    """Every line of stdout beginning with start, its continuation lines (text.wrap's: CONTINUED columns further
    in) joined on, as one line each."""
    out: list[str] = []
    lines = stdout.splitlines()
    for i, line in enumerate(lines):
        if line.startswith(start):
            whole = line
            for more in lines[i + 1:]:
                if not more.startswith(" " * text.CONTINUED):
                    break
                whole += " " + more.strip()
            out.append(whole)
    return out


def serial_error(run_dir: Path) -> dict[str, Any]:
    """The one error record of the run's serial.log, as the kernel wrote it."""
    errors = [json.loads(line.split(b" ", 1)[1].rsplit(b" ~", 1)[0]) for line in
              (run_dir / results.SERIAL_LOG).read_bytes().splitlines() if b'"t":"error"' in line]
    assert len(errors) == 1, errors
    return errors[0]


def assert_reason_of_typo(stdout: str, run_dir: Path) -> None:
    """stdout names the rejected token and every name the kernel accepts, right under the done line, in
    lines of at most text.WIDTH columns."""
    rec = serial_error(run_dir)
    reasons = said(stdout, "error cmdline: ")
    assert len(reasons) == 1, stdout
    reason = reasons[0]
    assert "unknown name 'ctxw'" in reason and f"(token {TYPO})" in reason, reason
    accepted = reason.split("; accepted: ", 1)[1]
    # the kernel's own list, whole: wrapping added only spaces, never cut a name
    assert accepted.replace(" ", "") == rec["accepted"].replace(" ", ""), (accepted, rec["accepted"])
    names = accepted.split("list of:", 1)[1].replace(" ", "").split("|")
    assert {"ctxsw", "workset", "tsc"} <= set(names) and "ctxw" not in names, names
    lines = stdout.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("done: status config"))
    assert lines[at + 1].startswith("error cmdline: "), stdout  # the verdict, then the kernel's why
    assert all(len(line) <= text.WIDTH for line in lines if "results in" not in line), stdout  # the paths vary


def assert_no_progress_left(stderr: str) -> None:
    """Progress writes whole lines (lines mode, and its messages: "process 1 of 5"), or draws its bar as "\\r",
    the bar, "\\x1b[K", redrawn from "\\r" and ended by finish()'s "\\n" (bar mode): a bar is followed by its
    redraw or its newline, never by other text on its line, and after the last newline nothing is left."""
    assert not re.search(r"\x1b\[K(?![\r\n])", stderr), repr(stderr[-300:])
    assert stderr.rsplit("\n", 1)[-1] == "", repr(stderr[-300:])


class Terminal(io.StringIO):
    """A stream that says it is a terminal: Progress draws its bar there."""

    def isatty(self) -> bool:
        return True


def on_terminal(*argv: str) -> tuple[int, str, str]:
    """The tool's main() with stderr a terminal (Progress's bar mode): (status, stdout, stderr)."""
    out, err = io.StringIO(), Terminal()
    status = cli.main(list(argv), out, err)
    return status, out.getvalue(), err.getvalue()


def test_run_under_qemu_icount_prints_the_rejected_token_and_the_accepted_names(tmp_path: Path) -> None:
    built(KERNEL, "all")
    status, stdout, stderr = tool_main("run", "--emulator", "qemu-icount", "--cmdline", TYPO, "--out", str(tmp_path))
    assert status == results.EXIT_CONFIG, stdout + stderr
    assert_reason_of_typo(stdout, tmp_path)
    assert_no_progress_left(stderr)
    # parse of the same log says the same, and exits the same
    status, again, _ = tool_main("parse", str(tmp_path / results.SERIAL_LOG), "--out", str(tmp_path / "parsed"))
    assert status == results.EXIT_CONFIG
    assert said(again, "error cmdline: ") == said(stdout, "error cmdline: ")


def test_run_hosted_of_several_processes_prints_the_reason_and_ends_its_progress(tmp_path: Path) -> None:
    built(HOSTED, "hosted")
    status, stdout, stderr = tool_main("run", "--emulator", "hosted", "--cmdline", TYPO, "--boots", PROCESSES,
                                       "--out", str(tmp_path))
    assert status == results.EXIT_CONFIG, stdout + stderr
    assert_reason_of_typo(stdout, tmp_path)
    assert f"process 1 of {PROCESSES}\n" in stderr
    assert_no_progress_left(stderr)
    # on a terminal (the bar's mode) too
    status, stdout, stderr = on_terminal("run", "--emulator", "hosted", "--cmdline", TYPO, "--boots", PROCESSES,
                                         "--out", str(tmp_path / "tty"))
    assert status == results.EXIT_CONFIG, stdout + stderr
    assert_reason_of_typo(stdout, tmp_path / "tty")
    assert_no_progress_left(stderr)


def test_ab_whose_a_is_rejected_prints_the_reason_and_that_b_was_not_run(tmp_path: Path) -> None:
    built(HOSTED, "hosted")
    status, stdout, stderr = tool_main("ab", "--emulator", "hosted", "--cmdline", TYPO, "--boots", PROCESSES,
                                       "--out", str(tmp_path))
    assert status == results.EXIT_CONFIG, stdout + stderr
    assert_reason_of_typo(stdout, tmp_path / "a")
    assert "B was not run" in stderr and f"process 1 of {PROCESSES}, A\n" in stderr
    assert_no_progress_left(stderr)
    assert not (tmp_path / "b").exists()


# --- the record path, on logs written here -----------------------------------------------------------

def log_of(*body: dict[str, Any], status: str | None) -> bytes:
    """A serial log of these records after a hello, ending `done` with status (None: no done record)."""
    recs = [{"t": "hello", "proto": 1, "kernel": "0.1.0", "cmdline": "suite=quick"}, *body]
    recs = [dict(r, seq=i) for i, r in enumerate(recs)]
    if status is not None:
        recs.append({"t": "done", "seq": len(recs), "status": status, "records": len(recs), "passed": 0,
                     "failed": 0})
    return b"".join(encode_record(r) for r in recs)


PROGRESS = [{"t": "progress", "bench": "ctxsw", "done": d, "total": 3} for d in range(3)]
DEADLOCK = {"t": "error", "code": "deadlock", "msg": "every thread blocked", "bench": "aspace", "what": "pingpong",
            "blocked": 2}
FAULT = {"t": "fault", "vector": 14, "name": "page_fault", "eip": 4096, "err": 0, "cr2": 0, "bench": "aspace",
         "what": "pingpong"}


@pytest.mark.parametrize("body, status, exit_status", [
    ([*PROGRESS, DEADLOCK], "fail", results.EXIT_FAIL),
    ([*PROGRESS, DEADLOCK, FAULT], "fault", results.EXIT_FAULT),
    ([*PROGRESS, DEADLOCK], None, results.EXIT_DAMAGED),  # the emulator ended before done
])
def test_a_run_that_drew_its_bar_ends_it_before_the_reason(tmp_path: Path, fixtures_dir: Path, body: list[Any],
                                                           status: str | None, exit_status: int) -> None:
    """A run that draws the progress bar (a terminal) and ends fail, fault or without done: the bar is ended
    before the summary, and the error record is said under it."""
    kernel = tmp_path / "cleanroom.elf"
    kernel.write_bytes(b"\x7fELF fake")
    play = tmp_path / "play.log"
    play.write_bytes(log_of(*body, status=status))
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("FAKE_LOG", str(play))
        got, stdout, stderr = on_terminal("run", "--kernel", str(kernel), "--emulator-binary",
                                          str(fixtures_dir / "fake_emulator.py"), "--out", str(tmp_path / "o"))
    assert got == exit_status, stdout + stderr
    assert "\r[" in stderr and "ctxsw 2/3" in stderr  # the bar was drawn
    assert_no_progress_left(stderr)
    assert said(stdout, "error deadlock: ") == ["error deadlock: every thread blocked"], stdout


def test_a_boot_that_ended_ok_says_no_reason(tmp_path: Path) -> None:
    """An error record of a run that ended ok (a source of the TSC disagreeing, say) is the report's, not a
    reason: the summary of an ok boot is unchanged."""
    log = tmp_path / results.SERIAL_LOG
    log.write_bytes(log_of({"t": "error", "code": "tsc_disagree", "msg": "pit is 3 % off"}, status="ok"))
    status, stdout, _ = tool_main("parse", str(log))
    assert status == results.EXIT_OK and "error" not in stdout and stdout.splitlines()[1].startswith("done: ")


def test_reasons_of_many_rejected_tokens_are_counted_past_the_first_ones(tmp_path: Path) -> None:
    errors = [{"t": "error", "code": "cmdline", "msg": "unknown key", "token": f"k{i}=1", "accepted": "suite= bench="}
              for i in range(results.REASONS_SHOWN + 2)]
    log = tmp_path / results.SERIAL_LOG
    log.write_bytes(log_of(*errors, status="config"))
    status, stdout, _ = tool_main("parse", str(log))
    assert status == results.EXIT_CONFIG
    shown = said(stdout, "error cmdline: ")
    assert shown[0] == "error cmdline: unknown key (token k0=1); accepted: suite= bench="
    assert len(shown) == results.REASONS_SHOWN
    assert "and 2 more error records (`cleanroom report --full` lists every one)" in stdout


def test_each_boot_of_a_log_of_several_has_its_reasons_indented(tmp_path: Path) -> None:
    typo = log_of({"t": "error", "code": "cmdline", "msg": "unknown name 'ctxw'", "token": TYPO,
                   "accepted": "a comma-separated list of: " + "|".join(f"bench{i:02}" for i in range(20))},
                  status="config")
    log = tmp_path / results.SERIAL_LOG
    log.write_bytes(typo + typo)
    status, stdout, _ = tool_main("parse", str(log))
    assert status == results.EXIT_DAMAGED  # several boots
    reasons = said(stdout, "  error cmdline: ")
    assert len(reasons) == 2 and all("bench19" in r and TYPO in r for r in reasons), stdout
    pieces = [line for line in stdout.splitlines() if line.startswith(("  error ", " " * (2 + text.CONTINUED)))]
    assert len(pieces) > 2 and all(len(line) <= text.WIDTH for line in pieces), stdout


def test_lava_fetch_prints_the_reason(tmp_path: Path) -> None:
    """A LAVA job's log of the rejected command line (the kernel's lines as LAVA's dispatcher logs them: target
    entries, every " written as \\")."""
    serial = log_of({"t": "error", "code": "cmdline", "msg": "unknown name 'ctxw'", "token": TYPO,
                     "accepted": "a comma-separated list of: tsc|ctxsw|workset"}, status="config")
    job = tmp_path / "job.yaml"
    job.write_text("".join("- " + json.dumps({"dt": f"2026-12-07T10:00:0{i}.000000", "lvl": "target",
                                              "msg": line.replace('"', '\\"')}) + "\n"
                           for i, line in enumerate(serial.decode().splitlines())))
    status, stdout, stderr = tool_main("lava-fetch", str(job), "--out", str(tmp_path / "f"))
    assert status == results.EXIT_CONFIG, stdout + stderr
    assert said(stdout, "error cmdline: ") == [
        f"error cmdline: unknown name 'ctxw' (token {TYPO}); accepted: a comma-separated list of: tsc|ctxsw|workset"]


def test_capture_prints_the_reason(tmp_path: Path) -> None:
    """capture of a port (a pty here) that brings the rejected command line's records."""
    serial = log_of({"t": "error", "code": "cmdline", "msg": "bad value", "token": "paging=maybe",
                     "accepted": "off|on|both"}, status="config")
    master, slave = os.openpty()

    class Ready(io.StringIO):
        """stderr that plays the log into the port once capture says it reads it."""

        def write(self, s: str) -> int:
            if s.startswith("capturing from "):
                threading.Thread(target=os.write, args=(master, serial), daemon=True).start()
            return super().write(s)

    out, err = io.StringIO(), Ready()
    try:
        status = cli.main(["capture", "--port", os.ttyname(slave), "--out", str(tmp_path)], out, err)
    finally:
        os.close(master)
        os.close(slave)
    assert status == results.EXIT_CONFIG, out.getvalue() + err.getvalue()
    assert said(out.getvalue(), "error cmdline: ") == ["error cmdline: bad value (token paging=maybe); accepted: "
                                                       "off|on|both"]
    assert_no_progress_left(err.getvalue())


def test_a_word_wider_than_the_line_breaks_after_a_bar_never_inside_a_name() -> None:
    names = "|".join(f"name{i:02}" for i in range(30))  # 209 columns, no space
    lines = text.wrap("accepted: " + names, 100)
    assert all(len(line) <= 100 for line in lines)
    assert all(line.endswith("|") for line in lines[1:-1]) and lines[-1].endswith("name29")
    assert "".join(line.strip() for line in lines[1:]) == names
