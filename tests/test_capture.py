"""`cleanroom capture` on a serial port: a pty pair, and QEMU's -serial pty."""

from __future__ import annotations

import json
import os
import queue
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
import zlib
from pathlib import Path
from typing import IO, Any

import pytest


def frame(obj: dict[str, Any]) -> bytes:
    js = json.dumps(obj, separators=(",", ":")).encode()
    return b"@cr1 " + js + b" ~" + format(zlib.crc32(js), "08x").encode() + b"\r\n"


def wait_for_line(stream: IO[str], pattern: str, timeout: float = 30) -> re.Match[str]:
    """Read lines from a child's pipe until one matches; never block past timeout."""
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


def start_capture(cleanroom_tool: Path, port: str, out: Path, timeout: float) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, str(cleanroom_tool), "capture", "--port", port,
                             "--out", str(out), "--timeout", str(timeout)],
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_capture_from_a_pty(tmp_path: Path, cleanroom_tool: Path) -> None:
    master, slave = os.openpty()
    port = os.ttyname(slave)
    body = [{"t": "hello", "proto": 1, "kernel": "0.1.0", "cmdline": "suite=selftest"},
            {"t": "progress", "bench": "selftest", "done": 0, "total": 1},
            {"t": "test", "name": "t1", "ok": True, "detail": ""}]
    recs = [dict(r, seq=i) for i, r in enumerate(body)]
    recs.append({"t": "done", "seq": 3, "status": "ok", "records": 3, "passed": 1, "failed": 0})
    log = b"GRUB noise\r\n\x1b[0m" + b"".join(frame(r) for r in recs)
    out = tmp_path / "cap"
    proc = start_capture(cleanroom_tool, port, out, 30)
    try:
        assert proc.stderr is not None
        wait_for_line(proc.stderr, r"^capturing from ")
        for i in range(0, len(log), 7):
            os.write(master, log[i:i + 7])
        stdout, stderr = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(master)
        os.close(slave)
    assert proc.returncode == 0, stdout + stderr
    assert "progress: selftest (1 cases)" in stderr
    assert stdout.splitlines()[0] == "records: 4 good, 0 corrupt, 0 missing, complete: yes"
    assert (out / "serial.log").read_bytes() == log
    doc = json.loads((out / "results.json").read_text())
    assert doc["complete"] and doc["run"]["port"] == port and doc["run"]["timed_out"] is False


def test_capture_times_out(tmp_path: Path, cleanroom_tool: Path) -> None:
    master, slave = os.openpty()
    try:
        proc = start_capture(cleanroom_tool, os.ttyname(slave), tmp_path / "cap", 1.5)
        stdout, stderr = proc.communicate(timeout=30)
    finally:
        os.close(master)
        os.close(slave)
    assert proc.returncode == 4
    assert "timed out after 1.5 s; 0 records received" in stderr
    assert (tmp_path / "cap" / "serial.log").read_bytes() == b""


def test_capture_missing_port(tmp_path: Path, cleanroom_tool: Path) -> None:
    proc = subprocess.run([sys.executable, str(cleanroom_tool), "capture", "--port", str(tmp_path / "ttyNONE"),
                           "--out", str(tmp_path / "o")], capture_output=True, text=True, timeout=30)
    assert proc.returncode == 5 and "cannot open" in proc.stderr


def test_capture_qemu_serial_pty(tmp_path: Path, cleanroom_tool: Path, kernel_elf: Path) -> None:
    """The real kernel under QEMU with -serial pty, read as a serial port."""
    if not kernel_elf.is_file():
        pytest.skip("build/cleanroom.elf absent: run `make` first")
    if shutil.which("qemu-system-i386") is None:
        pytest.skip("qemu-system-i386 not installed (tools/setup.sh installs qemu-system-x86)")
    # -S: the CPU waits for `cont` on the monitor until capture has the port
    # open; exit=halt: the kernel halts like on a real PC, so nothing is lost
    # when QEMU closes the pty. QEMU names the pty on stdout or stderr
    # (versions differ): read both.
    monitor = tmp_path / "monitor.sock"
    qemu = subprocess.Popen(
        ["qemu-system-i386", "-kernel", str(kernel_elf), "-append", "suite=selftest exit=halt",
         "-display", "none", "-serial", "pty", "-monitor", f"unix:{monitor},server=on,wait=off",
         "-no-reboot", "-m", "128", "-S"],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        start_new_session=True)
    cap = None
    try:
        assert qemu.stdout is not None
        m = wait_for_line(qemu.stdout, r"char device redirected to (/dev/pts/\d+) \(label serial0\)")
        port = m.group(1)
        cap = start_capture(cleanroom_tool, port, tmp_path / "cap", 120)
        assert cap.stderr is not None
        wait_for_line(cap.stderr, r"^capturing from ")
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as mon:
            mon.settimeout(10)
            mon.connect(str(monitor))
            mon.sendall(b"cont\n")
            time.sleep(0.5)  # let the monitor read it before the socket closes
        stdout, stderr = cap.communicate(timeout=150)
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
