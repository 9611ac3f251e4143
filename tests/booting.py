"""Booting the kernel (or the hosted build) through the host tool, exactly
as a user runs it, for the tests that read what it printed.

A hang is found by the tool's silence limit (no record for a while), never
by a total time: a slow machine makes a run longer, not wrong. The
subprocess timeout below is only a safety net for a tool that itself hangs
(the boots run the tool in this process: see tool_main).

Expensive configurations are booted once per test session and shared by
every test that reads them (shared_boot), also across pytest-xdist workers:
the first worker to ask boots, the others wait for its results.json.
"""

from __future__ import annotations

import fcntl
import contextlib
import hashlib
import io
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable
from unittest import mock

REPO = Path(__file__).resolve().parent.parent
TOOL = REPO / "tools" / "cleanroom"
# The tool run by this interpreter (the .venv's, as make test runs pytest): `tools/cleanroom` alone
# would start through the PATH's python3 (a pyenv shim costs ~0.4 s) and then exec the .venv's.
TOOL_CMD = (sys.executable, str(TOOL))
KERNEL = REPO / "build" / "cleanroom.elf"
HOSTED = REPO / "build" / "hosted" / "cleanroom-hosted"

PEERS64 = REPO / "build" / "hosted" / "cleanroom-peers64"
CACHEMODEL = REPO / "build" / "cachemodel" / "libcachemodel.so"


def built(path: Path, target: str) -> Path:
    """path, a build output `make test` makes before any test runs: its absence fails the test that needs
    it, naming the target that builds it (a skip would turn a broken build into a quiet pass)."""
    assert path.exists(), f"{path.relative_to(REPO)} is missing: `make {target}` builds it (make test does)"
    return path


def installed(program: str) -> str:
    """program's path on PATH: tools/setup.sh installs every program the tests start, and make test runs it
    first, so a missing one fails the test that needs it, naming the set-up (never a skip)."""
    found = shutil.which(program)
    assert found, f"{program} not found: tools/setup.sh installs it (make test runs it first)"
    return found


# The quick suite under -icount (the TSC counts instructions, runs repeat
# exactly): booted once per session, read by every test of its shape.
QUICK_ICOUNT = ("qemu-icount", "suite=quick runs=2 warmup=0")  # make run's kernel step (the Makefile's CMDLINE)
# Every benchmark and self-test, each case as small as still shows it: for
# tests that need all of it (old CPUs, small memory, every record field).
SMALL_ALL = "suite=all raw=1 runs=2 warmup=0 maxsize=64K reps=200"

# Only for a tool that never returns (a bug of the tool, not of the kernel).
TOOL_SAFETY_NET_S = 3600


def connect_when_listening(sock: Path, proc: subprocess.Popen[Any], limit_s: float) -> socket.socket:
    """A Unix socket connected to the server a QEMU (proc, or the tool that started it) makes at
    sock. The socket file appears before QEMU listens on it: connecting is retried until it
    answers, while proc lives, for at most limit_s."""
    conn = socket.socket(socket.AF_UNIX)
    deadline = time.monotonic() + limit_s
    while True:
        assert proc.poll() is None, f"it ended before {sock.name} answered: {proc.communicate()}"
        try:
            conn.connect(str(sock))
            return conn
        except (FileNotFoundError, ConnectionRefusedError):
            assert time.monotonic() < deadline, f"{sock.name} did not answer for {limit_s:g} s"
            time.sleep(0.05)


def _to_prompt(monitor: socket.socket) -> str:
    """What QEMU's human monitor printed up to its next prompt."""
    out = b""
    while not out.endswith(b"(qemu) "):
        chunk = monitor.recv(4096)
        assert chunk, f"the monitor closed: {out!r}"
        out += chunk
    return out.decode(errors="replace")


def human_monitor(sock: Path, proc: subprocess.Popen[Any], limit_s: float) -> socket.socket:
    """Connected to the human monitor a QEMU (proc) serves at sock (-monitor unix:SOCK,server=on,wait=off),
    its banner read."""
    conn = connect_when_listening(sock, proc, limit_s)
    _to_prompt(conn)
    return conn


def halted_cpus(monitor: socket.socket) -> dict[int, bool]:
    """Each vCPU of that QEMU: halted or not, as its `info registers` says (HLT=1)."""
    monitor.sendall(b"info registers -a\n")
    found = re.findall(r"^CPU#(\d+)\r?\n(?:.*\n)*?.*\bHLT=(\d)", _to_prompt(monitor), re.M)
    return {int(cpu): hlt == "1" for cpu, hlt in found}


def tool_main(*argv: str) -> tuple[int, str, str]:
    """The tool's own main() with these arguments, in this process: (exit status, stdout, stderr).
    The boots below run it so, not as `tools/cleanroom` in a new interpreter: a run's imports cost a
    new interpreter ~0.2 s of CPU, and these tests boot some two hundred times. What only the
    script does (choosing the .venv's interpreter) is tested through the script itself by
    test_tool.py and the other tests that start TOOL_CMD."""
    from cleanroom_host import cli

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):  # argparse writes to sys.std*
        try:
            rc = cli.main(list(argv), out=out, err=err)
        except SystemExit as exc:  # argparse's usage errors and --help: the status Python would exit with
            rc = exc.code if isinstance(exc.code, int) else 0 if exc.code is None else 1
    return rc, out.getvalue(), err.getvalue()


def tool_proc(*argv: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """tool_main() as subprocess.run(..., capture_output=True, text=True) would have returned it; env: variables
    set for it (and the emulators it starts) and put back after, cwd: the directory it runs in (a worker runs
    one test at a time)."""
    with mock.patch.dict(os.environ, env or {}), contextlib.chdir(cwd or os.getcwd()):
        rc, stdout, stderr = tool_main(*argv)
    return subprocess.CompletedProcess(["cleanroom", *argv], rc, stdout, stderr)


def run_tool(out: Path, *args: str) -> tuple[int, dict[str, Any]]:
    """Runs `cleanroom run ARGS --out OUT`; (its exit status, the results.json it wrote)."""
    rc, stdout, stderr = tool_main("run", *args, "--out", str(out), "--quiet")
    results_file = out / "results.json"
    assert results_file.exists(), f"no results.json\nstdout:\n{stdout}\nstderr:\n{stderr}"
    return rc, json.loads(results_file.read_text())


def boot(tmp_path: Path, emulator: str, cmdline: str, *extra: str) -> tuple[int, dict[str, Any]]:
    """Runs `cleanroom run`; (its exit status, the results.json it wrote)."""
    return run_tool(tmp_path / emulator, "--emulator", emulator, "--cmdline", cmdline, *extra)


def grub_iso(workdir: Path, entry: str) -> Path:
    """An ISO like the tool's temporary ones (emulators.make_iso), with a grub.cfg of
    our own: entry is the one menu entry's body (its lines before `boot`)."""
    root = workdir / "isodir"
    (root / "boot" / "grub").mkdir(parents=True)
    shutil.copyfile(KERNEL, root / "boot" / "cleanroom.elf")
    (root / "boot" / "grub" / "grub.cfg").write_text(
        "set timeout=0\nset default=0\ninsmod all_video\n"
        f"menuentry \"test\" {{\n{entry}\n    boot\n}}\n", encoding="ascii")
    iso = workdir / "test.iso"
    subprocess.run(["grub-mkrescue", "-o", str(iso), str(root)], check=True, capture_output=True,
                   stdin=subprocess.DEVNULL, timeout=TOOL_SAFETY_NET_S)
    return iso


def boot_iso(tmp_path: Path, emulator: str, iso: Path, *extra: str) -> tuple[int, dict[str, Any]]:
    """Runs `cleanroom run` on an ISO as it is (its menu's command line); like boot()."""
    return run_tool(tmp_path / emulator, "--emulator", emulator, "--iso", str(iso), *extra)


def shared_root(base: Path) -> Path:
    """The directory every xdist worker of this session sees (base: the worker's basetemp)."""
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def shared_dir(root: Path, emulator: str, cmdline: str, *extra: str) -> Path:
    """Where shared_boot keeps a configuration's run (its results in EMULATOR/ under it)."""
    key = hashlib.sha256(json.dumps([emulator, cmdline, *extra]).encode()).hexdigest()[:16]
    return root / "shared-boots" / key


def shared_boot(root: Path, emulator: str, cmdline: str, *extra: str) -> tuple[int, dict[str, Any]]:
    """boot(), once per session for the same arguments; a lock file keeps
    two workers from booting the same configuration at once."""
    where = shared_dir(root, emulator, cmdline, *extra)
    where.mkdir(parents=True, exist_ok=True)
    with (where / "lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        status = where / "status"
        if not status.exists():
            rc, _ = boot(where, emulator, cmdline, *extra)
            status.write_text(str(rc))
        return int(status.read_text()), json.loads((where / emulator / "results.json").read_text())


def made_once(where: Path, make: Callable[[], Any]) -> Any:
    """make()'s JSON-able answer, made once per session for every xdist worker: the first to ask makes it, the
    others wait on the lock file and read what it wrote (where/made.json)."""
    where.mkdir(parents=True, exist_ok=True)
    with (where / "lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        made = where / "made.json"
        if not made.exists():
            made.write_text(json.dumps(make()))
        return json.loads(made.read_text())


def uefi_selftest(root: Path) -> tuple[int, dict[str, Any], Path]:
    """suite=selftest on UEFI (OVMF, the tool's GRUB ISO, the framebuffer console) with a screendump at its
    end, booted once per session: (exit status, results.json, the screendump). test_boot's UEFI boot and
    test_screen's direct framebuffer read it (an OVMF boot takes ~4.5 CPU-s)."""
    dump = root / "uefi-selftest.ppm"
    rc, res = shared_boot(root, "uefi", "suite=selftest", "--screendump", str(dump))
    return rc, res, dump


def of_type(res: dict[str, Any], t: str) -> list[dict[str, Any]]:
    return [r for r in res["records"] if r["t"] == t]


def errors(res: dict[str, Any], code: str) -> list[dict[str, Any]]:
    """The error records of one code."""
    return [e for e in of_type(res, "error") if e.get("code") == code]


def done(res: dict[str, Any]) -> dict[str, Any]:
    d = of_type(res, "done")
    assert len(d) == 1, "exactly one done record"
    return d[0]
