"""`cleanroom capture` on a serial port: a pty pair, and QEMU's -serial pty."""

from __future__ import annotations

import json
import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
import zlib
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any, Iterator

from booting import installed
from cleanroom_host.machines import runner


def frame(obj: dict[str, Any]) -> bytes:
    js = json.dumps(obj, separators=(",", ":")).encode()
    return b"@cr1 " + js + b" ~" + format(zlib.crc32(js), "08x").encode() + b"\r\n"


def wait_for_line(stream: IO[str], pattern: str, timeout: float = 600) -> re.Match[str]:
    """Read lines from a child's pipe until one matches; never block past timeout (a safety net)."""
    lines: "queue.Queue[str]" = queue.Queue()

    def pump() -> None:
        for line in iter(stream.readline, ""):
            lines.put(line)
            if re.search(pattern, line):
                return
        lines.put("")

    threading.Thread(target=pump, daemon=True).start()
    deadline = time.monotonic() + timeout
    seen: list[str] = []
    while (left := deadline - time.monotonic()) > 0:
        try:
            line = lines.get(timeout=left)
        except queue.Empty:
            break
        if not line:
            break
        seen.append(line)
        m = re.search(pattern, line)
        if m:
            return m
    raise AssertionError(f"no line matching {pattern!r} within {timeout} s; got {seen!r}")


def start_capture(cleanroom_tool: Path, port: str, out: Path, *args: str) -> subprocess.Popen[str]:
    # SIGINT as a terminal would deliver it, even when pytest runs with it ignored
    return subprocess.Popen([sys.executable, str(cleanroom_tool), "capture", "--port", port, "--out", str(out), *args],
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))


@contextmanager
def capture_on_pty(cleanroom_tool: Path, out: Path, *args: str) -> Iterator[tuple[int, str, subprocess.Popen[str]]]:
    """A pty pair and `capture` reading its slave side: (master fd, port name, the capture process)."""
    master, slave = os.openpty()
    port = os.ttyname(slave)
    proc = start_capture(cleanroom_tool, port, out, *args)
    try:
        yield master, port, proc
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(master)
        os.close(slave)


def capture_bytes(cleanroom_tool: Path, out: Path, log: bytes, chunk: int,
                  ready: str = r"^capturing from ") -> tuple[subprocess.Popen[str], str, str, str]:
    """`capture` of log, written to a pty in pieces of chunk bytes once the
    capture says `ready`: (the process, the port, its stdout, its stderr)."""
    with capture_on_pty(cleanroom_tool, out) as (master, port, proc):
        assert proc.stderr is not None
        wait_for_line(proc.stderr, ready)
        for i in range(0, len(log), chunk):
            os.write(master, log[i:i + chunk])
        stdout, stderr = proc.communicate(timeout=600)
    return proc, port, stdout, stderr


def selftest_records() -> list[dict[str, Any]]:
    """hello, test, progress (seq 0-2): the progress line on stderr shows all three were read."""
    body = [{"t": "hello", "proto": 1, "kernel": "0.1.0", "cmdline": "suite=selftest"},
            {"t": "test", "name": "t1", "ok": True, "detail": ""},
            {"t": "progress", "bench": "selftest", "done": 0, "total": 1}]
    return [dict(r, seq=i) for i, r in enumerate(body)]


def test_capture_from_a_pty(tmp_path: Path, cleanroom_tool: Path) -> None:
    body = [{"t": "hello", "proto": 1, "kernel": "0.1.0", "cmdline": "suite=selftest"},
            {"t": "progress", "bench": "selftest", "done": 0, "total": 1},
            {"t": "test", "name": "t1", "ok": True, "detail": ""}]
    recs = [dict(r, seq=i) for i, r in enumerate(body)]
    recs.append({"t": "done", "seq": 3, "status": "ok", "records": 3, "passed": 1, "failed": 0})
    log = b"GRUB noise\r\n\x1b[0m" + b"".join(frame(r) for r in recs)
    out = tmp_path / "cap"
    proc, port, stdout, stderr = capture_bytes(cleanroom_tool, out, log, 7,
                                               r"^capturing from .*waiting for the first record; Ctrl-C stops")
    assert proc.returncode == 0, stdout + stderr
    assert "progress: selftest (1 cases)" in stderr
    assert stdout.splitlines()[0] == "records: 4 good, 0 corrupt, 0 missing, complete: yes"
    assert (out / "serial.log").read_bytes() == log
    doc = json.loads((out / "results.json").read_text())
    run = doc["run"]
    assert doc["complete"] and run["port"] == port and run["timed_out"] is False and run["hung"] is False
    assert run["silence"] == 60 and run["timeout"] is None and run["last_seq"] == 3
    assert list(run["bench_seconds"]) == ["boot", "selftest"]
    assert any(line.startswith("time per benchmark: boot ") for line in stdout.splitlines())


def test_capture_across_a_reset_writes_each_boot_apart(tmp_path: Path, cleanroom_tool: Path,
                                                        repo_root: Path) -> None:
    """Issue 19: a capture left running across a reset. The first boot never
    sent done; every good record of both boots is kept, each boot in its own
    results set, never merged."""
    first = (repo_root / "tests" / "fixtures" / "qemu-quick.log").read_bytes()
    first = first[:first.index(b'@cr1 {"t":"done"')]  # reset before the end
    second = (repo_root / "docs" / "data" / "qemu-icount-ctxsw.log").read_bytes()
    log = first + b"\x1b[2JSeaBIOS (version 1.16.2)\r\n" + second
    out = tmp_path / "cap"
    proc, _, stdout, stderr = capture_bytes(cleanroom_tool, out, log, 4096)
    assert proc.returncode == 4, stdout + stderr
    assert (out / "serial.log").read_bytes() == log
    assert stdout.startswith("the log holds 2 boots") and not (out / "results.json").exists()
    one = json.loads((out / "boot-1" / "results.json").read_text())
    two = json.loads((out / "boot-2" / "results.json").read_text())
    assert len(one["records"]) == 16 and one["status"] is None and not one["complete"] and not one["conflicts"]
    assert two["complete"] and two["status"] == "ok" and len(two["records"]) == 52
    assert one["records"][0]["cmdline"].endswith("suite=quick exit=auto")
    assert two["records"][0]["cmdline"].endswith("bench=ctxsw paging=off runs=3 exit=auto")
    assert one["run"]["port"] == two["run"]["port"] and two["source"] == "../serial.log"


def test_capture_times_out(tmp_path: Path, cleanroom_tool: Path) -> None:
    with capture_on_pty(cleanroom_tool, tmp_path / "cap", "--timeout", "1.5") as (_, _, proc):
        stdout, stderr = proc.communicate(timeout=600)
    assert proc.returncode == 4
    assert "timed out after 1.5 s (--timeout); 0 records received" in stderr
    assert (tmp_path / "cap" / "serial.log").read_bytes() == b""


def test_capture_waits_for_the_first_record_then_counts_silence(tmp_path: Path, cleanroom_tool: Path) -> None:
    """Before the first record there is no limit (the PC may not be booted yet); after it, silence is a hang."""
    out = tmp_path / "cap"
    with capture_on_pty(cleanroom_tool, out, "--silence", "1") as (master, _, proc):
        assert proc.stderr is not None
        wait_for_line(proc.stderr, r"^capturing from ")
        time.sleep(2.5)  # more than the silence limit, before any record
        assert proc.poll() is None, "capture gave up before the first record"
        os.write(master, b"GRUB noise\r\n" + b"".join(frame(r) for r in selftest_records()))
        stdout, stderr = proc.communicate(timeout=600)
    assert proc.returncode == 4, stdout + stderr
    assert "no record for 1 s after seq 2; 3 records received" in stderr
    doc = json.loads((out / "results.json").read_text())
    assert [r["seq"] for r in doc["records"]] == [0, 1, 2] and doc["complete"] is False
    assert doc["run"]["hung"] is True and doc["run"]["last_seq"] == 2 and doc["run"]["silence"] == 1


def test_capture_ctrl_c_keeps_what_arrived(tmp_path: Path, cleanroom_tool: Path) -> None:
    out = tmp_path / "cap"
    with capture_on_pty(cleanroom_tool, out) as (master, _, proc):
        assert proc.stderr is not None
        wait_for_line(proc.stderr, r"^capturing from ")
        os.write(master, b"".join(frame(r) for r in selftest_records()))
        wait_for_line(proc.stderr, r"^progress: selftest")
        proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=600)
    assert proc.returncode == 4, stdout + stderr
    assert "interrupted; 3 records received" in stderr
    doc = json.loads((out / "results.json").read_text())
    assert len(doc["records"]) == 3 and doc["run"]["interrupted"] is True and doc["run"]["hung"] is False


def test_capture_missing_port(tmp_path: Path, cleanroom_tool: Path) -> None:
    proc = subprocess.run([sys.executable, str(cleanroom_tool), "capture", "--port", str(tmp_path / "ttyNONE"),
                           "--out", str(tmp_path / "o")], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 5 and "cannot open" in proc.stderr


def test_capture_qemu_serial_pty(tmp_path: Path, cleanroom_tool: Path, kernel_elf: Path) -> None:
    """The real kernel under QEMU with -serial pty, read as a serial port."""
    installed("qemu-system-i386")
    # -S: the CPU waits for `cont` (QMP) until capture has the port open;
    # exit=halt: the kernel halts like on a real PC, so nothing is lost
    # when QEMU closes the pty. QEMU names the pty on stdout or stderr
    # (versions differ): read both.
    qmp = tmp_path / "qmp.sock"
    qemu = subprocess.Popen(
        ["qemu-system-i386", "-kernel", str(kernel_elf), "-append", "suite=selftest exit=halt",
         "-display", "none", "-serial", "pty", "-monitor", "none", "-qmp", f"unix:{qmp},server=on,wait=off",
         "-no-reboot", "-m", "128", "-S"],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        start_new_session=True)
    cap = None
    try:
        assert qemu.stdout is not None
        m = wait_for_line(qemu.stdout, r"char device redirected to (/dev/pts/\d+) \(label serial0\)")
        port = m.group(1)
        cap = start_capture(cleanroom_tool, port, tmp_path / "cap")  # default silence: a hang ends it
        assert cap.stderr is not None
        wait_for_line(cap.stderr, r"^capturing from ")
        with runner.Qmp(qmp, wait=600) as client:
            client.execute("cont")
        stdout, stderr = cap.communicate(timeout=600)
    finally:
        for p in (cap, qemu):
            if p is not None and p.poll() is None:
                p.kill()
                p.wait()
    assert cap.returncode == 0, stdout + stderr
    assert stdout.splitlines()[0].endswith("0 corrupt, 0 missing, complete: yes")
    doc = json.loads((tmp_path / "cap" / "results.json").read_text())
    assert doc["status"] == "ok"
    hello = doc["records"][0]
    assert hello["t"] == "hello" and "suite=selftest" in hello["cmdline"]
    tests = [r for r in doc["records"] if r["t"] == "test"]
    assert tests and all(t["ok"] for t in tests)


def test_the_emulators_pipe_holds_a_whole_quick_run() -> None:
    """QEMU's serial port drops bytes its pipe cannot take after a few retries: under make test's load a
    32-CPU run lost its last 350 KB with a 64 KiB pipe. The runner widens the pipe (runner.widen_pipe) to 1 MiB,
    or as far as the system lets it."""
    import fcntl

    from cleanroom_host.machines import runner

    r, w = os.pipe()
    try:
        runner.widen_pipe(r)
        limit = int(Path("/proc/sys/fs/pipe-max-size").read_text())
        assert fcntl.fcntl(r, fcntl.F_GETPIPE_SZ) >= min(runner.PIPE_BYTES, limit) > 550_000
    finally:
        os.close(r)
        os.close(w)
