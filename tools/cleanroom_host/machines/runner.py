"""Running an emulator (or reading a serial port) and capturing its records."""

from __future__ import annotations

import fcntl
import os
import pty
import queue
import re
import shutil
import signal
import struct
import subprocess
import tempfile
import termios
import threading
import tty
import time
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import IO, Any, Awaitable, BinaryIO, Callable, TextIO, Protocol

from ..records import model
from ..records.protocol import ParseResult, Record, StreamScanner, parse_boots
from ..records.replicas import parse_sets
from ..records.results import RESULTS_CSV, SERIAL_LOG, boot_dirs, boots_summary, write_results
from ..records.text import auto_case_lines, auto_text, bench_time_text, not_installed, wrap
from . import emulators, machine, usercode
from .progress import Progress

# After a good `done` record, give the emulator this long to exit by itself.
DONE_GRACE_S = 1.0
# A run is hung when no good record has arrived for this long (--silence).
# Every benchmark case ends with records, so only a case longer than this
# needs more; `run` raises it from the duration estimate's longest case.
DEFAULT_SILENCE_S = 60.0
POLL_S = 0.05
EMULATOR_LOG = "emulator.log"
TAIL_KEEP = 64 * 1024
# --screendump: how long QEMU may take to answer on its QMP socket and to write the file.
SCREENDUMP_WAIT_S = 60.0


class Session:
    """Collects serial bytes: saves them exactly, scans them for progress.

    Keeps when each good record arrived: silence between records is what
    tells a hang from a long run, and the gaps show where the time went.
    """

    def __init__(self, log: BinaryIO, progress: Progress, clock: Callable[[], float] = time.monotonic,
                 start: float | None = None) -> None:
        self.log = log
        self.progress = progress
        self.scanner = StreamScanner()
        self.clock = clock
        self.start = clock() if start is None else start
        self.good = 0
        self.corrupt = 0
        self.done_at: float | None = None
        self.bytes = 0
        self.last_seq: int | None = None
        # (arrival, bench) of every good record, bench None when it names none
        self.arrivals: list[tuple[float, str | None]] = []

    def feed(self, data: bytes) -> None:
        if not data:
            return
        self.bytes += len(data)
        self.log.write(data)
        self.log.flush()
        for frame in self.scanner.feed(data):
            if frame.record is None:
                self.corrupt += 1
                continue
            self._arrived(frame.record)

    def _arrived(self, rec: Record) -> None:
        now = self.clock()
        self.good += 1
        seq, bench = rec.get("seq"), rec.get("bench")
        self.last_seq = seq if isinstance(seq, int) else None
        if not isinstance(bench, str):  # self-tests name none: time them as one
            bench = "selftest" if rec.get("t") == "test" else None
        self.arrivals.append((now, bench))
        self.progress.record(rec)
        if rec.get("t") == "done" and self.done_at is None:
            self.done_at = now

    def done_for(self) -> float:
        """Seconds since a good `done` arrived (0 if none has)."""
        return 0.0 if self.done_at is None else self.clock() - self.done_at

    def silent_for(self) -> float:
        """Seconds since the last good record (since the start before the first)."""
        last = self.arrivals[-1][0] if self.arrivals else self.start
        return self.clock() - last

    def bench_seconds(self) -> dict[str, float]:
        """Seconds per benchmark, in order of first appearance.

        The gap before a record is credited to the benchmark it names: it
        ends the case that filled the gap. Until the first record that names
        one, it is the boot (firmware, loader, the kernel's set-up and clock
        calibration); later records that name none (done, a self-test) go
        with the benchmark before them.
        """
        out: dict[str, float] = {}
        prev, name = self.start, "boot"
        for at, bench in self.arrivals:
            name = bench or name
            out[name] = out.get(name, 0.0) + (at - prev)
            prev = at
        return {name: round(secs, 3) for name, secs in out.items()}


@dataclass(frozen=True)
class Limits:
    """When to give up on a run that has not sent `done`."""

    silence: float  # seconds without a good record: a hang, however long the run
    timeout: float | None = None  # total seconds (--timeout); None: no total limit
    silence_before_first: bool = True  # False for capture: the PC may boot long after it starts

    def check(self, session: Session) -> str | None:
        """'hung' or 'timeout' once a limit has passed, else None."""
        if (session.good or self.silence_before_first) and session.silent_for() >= self.silence:
            return "hung"
        if self.timeout is not None and session.clock() - session.start >= self.timeout:
            return "timeout"
        return None

    def message(self, stop: str, session: Session) -> str:
        received = f"{session.good} records received"
        if stop == "timeout":
            return f"timed out after {self.timeout:g} s (--timeout); {received}"
        if not session.good:
            after = "the emulator started"
        elif session.last_seq is None:
            after = "the last record"
        else:
            after = f"seq {session.last_seq}"
        return f"no record for {self.silence:g} s after {after}; {received}"

    def fields(self, stop: str | None, session: Session) -> dict[str, Any]:
        """What results.json's run records about the limits and the time."""
        return {"silence": self.silence, "timeout": self.timeout, "hung": stop == "hung",
                "timed_out": stop == "timeout", "last_seq": session.last_seq,
                "bench_seconds": session.bench_seconds()}


@dataclass
class Outcome:
    """What a run or capture produced."""

    out_dir: Path
    boots: list[ParseResult]  # one per boot the log holds (a reset during a capture makes two)
    run: dict[str, Any]
    cut_short: bool  # hung, timed out or interrupted: not a whole run, whatever the records say
    messages: list[str] = field(default_factory=list)
    model_ok: bool = True  # qemu-model: every result's samples matched the model's (model.join)


def repo_root() -> Path:
    return Path(__file__).resolve().parents[3]


def new_results_dir(results_dir: Path, label: str, now: datetime | None = None) -> Path:
    """Create results/<UTC YYYYmmdd-HHMMSS>-<label> (or -2, -3, ... after it) and return it.

    The mkdir that creates it is what makes the name this run's: a name
    another run took first fails it, so concurrent runs never share one.
    """
    stamp = (now or datetime.now(timezone.utc)).strftime("%Y%m%d-%H%M%S")
    base = f"{stamp}-{label}"
    n = 1
    while True:
        path = results_dir / (base if n == 1 else f"{base}-{n}")
        try:
            path.mkdir(parents=True)
            return path
        except FileExistsError:
            n += 1


def discard_results_dir(path: Path) -> None:
    """Remove a results directory new_results_dir made for a run that never
    started, and results/ too when that leaves it empty; never one that
    results/latest already names."""
    latest = path.parent / "latest"
    if latest.is_symlink() and os.readlink(latest) == path.name:
        return
    for d in (path, path.parent):
        try:
            d.rmdir()
        except OSError:  # not empty (or gone): keep it
            return


def point_latest(out_dir: Path) -> None:
    """Make results/latest a relative symlink to out_dir (atomically: a
    symlink of a name no other run uses, renamed over latest)."""
    latest = out_dir.parent / "latest"
    tmp = out_dir.parent / f".latest.{os.getpid()}.{threading.get_ident()}"
    if tmp.is_symlink() or tmp.exists():
        tmp.unlink()
    os.symlink(out_dir.name, tmp)
    os.replace(tmp, latest)


def _reader(stream: IO[bytes], q: "queue.Queue[tuple[str, bytes]]", tag: str) -> None:
    """Forward a pipe's bytes to the queue until EOF (then an empty chunk)."""
    fd = stream.fileno()
    while True:
        try:
            data = os.read(fd, 65536)
        except OSError:
            data = b""
        q.put((tag, data))
        if not data:
            return


# Bochs built with its debugger keeps our terminal for the debugger and
# draws the term display into a pseudo-terminal of its own, announced as
# `Bochs connected to screen "/dev/pts/N"`. Nobody reads that one unless we
# do: once its buffer is full (a few KiB of screen updates), Bochs blocks.
_SCREEN_RE = re.compile(rb'connected to screen "(/dev/pts/\d+)"')


def _drain(fd: int) -> None:
    """Read a terminal until it closes, throwing the bytes away."""
    try:
        while os.read(fd, 65536):
            pass
    except OSError:
        pass
    finally:
        os.close(fd)


def _open_screen(path: str) -> None:
    """Open Bochs' screen terminal raw (no echo back into Bochs) and drain it."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOCTTY)
    except OSError:
        return
    try:
        tty.setraw(fd)
    except termios.error:
        pass
    threading.Thread(target=_drain, args=(fd,), daemon=True).start()


def _pty_reader(fd: int, keep: bytearray) -> None:
    """Drain Bochs' terminal so it never blocks writing to it (and its screen's)."""
    screen = False
    while True:
        try:
            data = os.read(fd, 65536)
        except OSError:
            return
        if not data:
            return
        keep.extend(data)
        del keep[:-TAIL_KEEP]
        if not screen:
            m = _SCREEN_RE.search(keep)
            if m:
                screen = True
                _open_screen(m.group(1).decode())


def _kill_group(proc: "subprocess.Popen[bytes]", first: int = signal.SIGTERM) -> None:
    """Stop the emulator and anything it started (its own process group)."""
    for sig, wait in ((first, 1.0), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


_ESCAPES = re.compile(rb"\x1b(\[[0-?]*[ -/]*[@-~]|[()][0-9A-Za-z]|.)|[\x00-\x08\x0b-\x1f\x7f]")


def terminal_text(data: bytes) -> str:
    """Readable text from a terminal stream: escapes and control bytes removed."""
    text = _ESCAPES.sub(b"", data.replace(b"\r\n", b"\n")).decode("utf-8", "replace")
    return "\n".join(line.rstrip() for line in text.splitlines() if line.strip())


def ppm_complete(path: Path) -> bool:
    """Whether path holds a whole binary PPM (P6): its header, then every pixel."""
    try:
        data = path.read_bytes()
    except OSError:
        return False
    m = re.match(rb"P6\s+(\d+)\s+(\d+)\s+(\d+)\s", data)
    if not m:
        return False
    width, height, maxval = (int(g) for g in m.groups())
    return len(data) >= m.end() + width * height * 3 * (2 if maxval > 255 else 1)


class Qmp:
    """QEMU's QMP socket through the QEMU project's own client, qemu.qmp's QMPClient, driven
    from this synchronous runner on an event loop of its own. Not qemu.qmp.legacy's sync
    wrapper: its connect() waits for QEMU's greeting without a time limit, and one QEMU that
    never answers would hang the run. Every call here is bounded; past its bound, or on any
    QMP error, it raises OSError saying what failed."""

    def __init__(self, path: Path, wait: float = SCREENDUMP_WAIT_S) -> None:
        import asyncio  # here, not at the top: only QMP runs need it, and it takes a run's start 40 ms

        from qemu.qmp import QMPClient  # pinned in tools/requirements.txt; emulators.prepare checked it

        self.loop = asyncio.new_event_loop()
        self.client = QMPClient("cleanroom")
        try:
            self._run(self.client.connect(str(path)), wait, "connect")
        except OSError:
            self.loop.close()
            raise

    def _run(self, step: Awaitable[Any], wait: float, what: str) -> Any:
        import asyncio

        from qemu.qmp import QMPError

        try:
            return self.loop.run_until_complete(asyncio.wait_for(step, wait))
        except asyncio.TimeoutError:
            raise OSError(f"{what}: no answer within {wait:g} s") from None
        except (QMPError, EOFError) as exc:
            raise OSError(f"{what}: {exc or type(exc).__name__}") from exc

    def execute(self, command: str, arguments: dict[str, Any] | None = None,
                wait: float = SCREENDUMP_WAIT_S) -> Any:
        return self._run(self.client.execute(command, arguments), wait, command)

    def screendump(self, dest: Path, wait: float = SCREENDUMP_WAIT_S) -> None:
        """Save the screen as a PPM at dest and wait until the file is whole."""
        deadline = time.monotonic() + wait
        dest.unlink(missing_ok=True)
        self.execute("screendump", {"filename": str(dest)}, wait)
        while not ppm_complete(dest):
            if time.monotonic() >= deadline:
                raise OSError(f"QEMU did not write {dest} within {wait:g} s")
            time.sleep(POLL_S)

    def send_key(self, key: str) -> None:
        """Press and release one key, by its QEMU key code name ('spc')."""
        self.execute("send-key", {"keys": [{"type": "qcode", "data": key}]})

    def quit(self, wait: float = SCREENDUMP_WAIT_S) -> None:
        from qemu.qmp import ExecInterruptedError

        try:
            self.execute("quit", wait=wait)
        except OSError as exc:
            # QEMU may close the socket as it quits, before its reply has arrived
            if not isinstance(exc.__cause__, (ExecInterruptedError, EOFError)):
                raise

    def close(self) -> None:
        try:
            self._run(self.client.disconnect(), SCREENDUMP_WAIT_S, "disconnect")
        except OSError:
            pass  # a QEMU that has quit, or hung up, has nothing more to say
        finally:
            self.loop.close()

    def __enter__(self) -> "Qmp":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def qmp_problem(qmp: Path, exc: OSError) -> str:
    """What went wrong on the QMP socket, for the user: the socket, then the problem."""
    return f"QEMU's QMP socket ({qmp}): {exc}"


def take_screendump(qmp: Path, dest: Path, wait: float = SCREENDUMP_WAIT_S) -> str | None:
    """Ask QEMU (QMP `screendump`) for a PPM of the screen at dest, wait until the
    file is whole, then tell QEMU to quit. None on success, else what failed."""
    try:
        with Qmp(qmp, wait) as q:
            q.screendump(dest, wait)
            q.quit(wait)
    except OSError as exc:
        return qmp_problem(qmp, exc)
    return None


# --qr-pages: after done the kernel compresses its log and draws the first code
# (seconds under TCG); a key press shows the next one at once.
QR_FIRST_CODE_S = 120.0
QR_PAGE_S = 30.0  # the next code must be on screen this long after a key press
QR_KEY_AGAIN_S = 5.0  # the same code still shown: press again (the key was lost)
QR_SETTLE_S = 0.05  # after a key press, before the first look at the screen
QR_DUMP = ".qr-screen.ppm"


def qr_page_name(index: int) -> str:
    return f"qr-{index:03d}.ppm"


@dataclass
class QrPages:
    """What --qr-pages saved."""

    directory: Path
    total: int | None = None
    saved: list[int] = field(default_factory=list)  # code indices
    screens: int = 0  # files written
    keys: int = 0
    error: str | None = None

    def info(self) -> dict[str, Any]:
        return {"dir": str(self.directory), "codes": self.total, "saved": len(self.saved), "screens": self.screens,
                "keys": self.keys}


def collect_qr_pages(qmp: Path, directory: Path) -> QrPages:
    """Screendump every QR screen of a halted kernel into directory (qr-III.ppm, III the index of
    the first code it was the first to show), pressing space between screens, until every code
    0..n-1 is saved; each screen is decoded once it stands still (two dumps in a row agree) to know
    which codes it shows. Bounded: QR_FIRST_CODE_S for the first code, QR_PAGE_S per screen, 3n + 10
    key presses in all. Then tells QEMU to quit."""
    from ..records import qrdecode  # zxing-cpp is needed only here

    pages = QrPages(directory)
    directory.mkdir(parents=True, exist_ok=True)
    dump = directory / QR_DUMP
    shown: int | None = None  # the code on screen at the last look
    try:
        client = Qmp(qmp)
    except OSError as exc:
        pages.error = "--qr-pages: " + qmp_problem(qmp, exc)
        return pages
    try:
        now = time.monotonic()
        deadline, key_again = now + QR_FIRST_CODE_S, float("inf")
        last: tuple[bytes, list[Any]] = (b"", [])  # the last screen decoded and its codes
        previous = b""  # the dump before this one
        while True:
            client.screendump(dump)
            image = dump.read_bytes()
            # A screen is read once two dumps in a row agree: one taken while the kernel copies the next
            # screen to the framebuffer shows the top of the new screen over the bottom of the old, and a
            # code cut there can still read in the dump and not in a photo of the saved page.
            steady, previous = image == previous, image
            if steady and image != last[0]:  # a screen read once, however long it stays up
                last = (image, qrdecode.read_image(dump).chunks)
            chunks = last[1] if steady else []
            now = time.monotonic()
            # a screen shows several codes: it is named by its first
            index = min((c.index for c in chunks), default=None)
            if index is not None and index != shown:  # a new screen
                shown, pages.total = index, chunks[0].total
                new = sorted({c.index for c in chunks} - set(pages.saved))
                if new:
                    dump.replace(directory / qr_page_name(new[0]))  # each index is new once: a unique name
                    pages.saved += new
                    pages.screens += 1
                if len(pages.saved) == pages.total:
                    break
                if pages.keys >= 3 * pages.total + 10:
                    pages.error = (f"--qr-pages: {len(pages.saved)} of {pages.total} codes after "
                                   f"{pages.keys} key presses; giving up")
                    break
                client.send_key("spc")
                pages.keys += 1
                deadline, key_again = now + QR_PAGE_S, now + QR_KEY_AGAIN_S
                time.sleep(QR_SETTLE_S)
                continue
            if now >= deadline:
                pages.error = ("--qr-pages: no QR code on the screen within "
                               f"{QR_FIRST_CODE_S:g} s after done (does the kernel know qr=?)" if shown is None
                               else f"--qr-pages: the screen did not change from code {shown + 1} of "
                                    f"{pages.total} for {QR_PAGE_S:g} s after a key press")
                break
            if index is not None and now >= key_again:  # still the old page: the key was lost
                client.send_key("spc")
                pages.keys += 1
                key_again = now + QR_KEY_AGAIN_S
            time.sleep(POLL_S)
        client.quit()
    except OSError as exc:
        pages.error = "--qr-pages: " + qmp_problem(qmp, exc)
    except qrdecode.DecoderMissing as exc:
        pages.error = f"--qr-pages: {exc}"
    finally:
        client.close()
        dump.unlink(missing_ok=True)
    pages.saved.sort()
    return pages


# run_emulator's stop: the emulator said (on stderr) it stopped the guest for good (its row's `stops`)
STOPPED = "stopped"


def guest_stopped(emu: emulators.Emulator, said: bytes) -> str | None:
    """The line of the emulator's output in which it says it stopped the guest for good, else None."""
    text = said.decode("utf-8", "replace")
    return next((line.strip() for line in text.splitlines() if any(s in line for s in emu.stops)), None)


def fault_function(kernel: Path, records: list[Record]) -> str | None:
    """Where in the kernel the run's fault struck, e.g. "paging_enable+0x6b" (None: no fault record,
    or no function of the kernel ELF's symbol table holds its eip)."""
    fault = next((r for r in records if r.get("t") == "fault"), None)
    eip = fault.get("eip") if fault is not None else None
    if not isinstance(eip, int) or isinstance(eip, bool):
        return None
    try:
        return model.elf_function_at(kernel, eip)
    except model.ModelError:
        return None


# The emulator's stdout pipe's size (F_SETPIPE_SZ; Linux's default limit, fs.pipe-max-size, is 1 MiB). QEMU's
# serial port drops a byte it could not write after a few retries: with a 64 KiB pipe and this tool's reader
# kept off its CPU for a quarter of a second (make test's load), a 32-CPU falseshare run under TCG lost
# everything after its first 200 KB, done included (3 of 8 runs with four busy loops, 2026-11-28). A pipe
# that holds a whole quick run (~550 KB) outlasts any such pause.
PIPE_BYTES = 1 << 20


def widen_pipe(fd: int) -> None:
    """As large a pipe as the system allows, up to PIPE_BYTES (its default where it refuses)."""
    size = PIPE_BYTES
    while size > 65536:
        try:
            fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, size)
            return
        except OSError:
            size //= 2


def _start(launch: emulators.Launch, cwd: str, chunks: "queue.Queue[tuple[str, bytes]]",
           emu_out: bytearray) -> tuple["subprocess.Popen[bytes]", list[threading.Thread], int]:
    """Start the emulator with its readers; returns (process, threads, pty master or -1)."""
    env = dict(os.environ, **launch.env)
    try:
        if launch.needs_pty:
            master, slave = pty.openpty()
            fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 25, 80, 0, 0))
            try:
                proc = subprocess.Popen(launch.argv, stdin=slave, stdout=slave, stderr=slave,
                                        start_new_session=True, env=env, cwd=cwd)
            except OSError:
                os.close(master)
                raise
            finally:
                os.close(slave)
            threads = [threading.Thread(target=_pty_reader, args=(master, emu_out), daemon=True)]
        else:
            master = -1
            proc = subprocess.Popen(launch.argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, start_new_session=True, env=env, cwd=cwd)
            assert proc.stdout is not None and proc.stderr is not None
            widen_pipe(proc.stdout.fileno())
            threads = [threading.Thread(target=_reader, args=(proc.stdout, chunks, "out"), daemon=True),
                       threading.Thread(target=_reader, args=(proc.stderr, chunks, "err"), daemon=True)]
    except OSError as exc:
        raise emulators.SetupError(f"cannot start {launch.argv[0]}: {exc}") from exc
    for t in threads:
        t.start()
    return proc, threads, master


@dataclass
class Screen:
    """What QEMU's screen gave after done, through QMP: --qr-pages' pages, --screendump's file, or why not."""

    qr_pages: QrPages | None = None
    qr_error: str | None = None
    screendump: str | None = None
    screendump_error: str | None = None


def _exited_before(what: str, proc: "subprocess.Popen[bytes]") -> str:
    return f"QEMU exited (status {proc.returncode}) before the {what} could be saved (exit= on the command line?)"


def _wait_briefly(proc: "subprocess.Popen[bytes]") -> None:
    try:
        proc.wait(timeout=5.0)
    except subprocess.TimeoutExpired:
        pass


def _screen_after_done(spec: emulators.RunSpec, qmp: Path, proc: "subprocess.Popen[bytes]", done: bool) -> Screen:
    """--qr-pages: the kernel halted after done and pages through its codes; --screendump: the kernel halted
    at done (or hung), and the screen is still there."""
    screen = Screen()
    if spec.qr_pages is not None:
        if not done:
            screen.qr_error = "--qr-pages: no QR pages: the run sent no done record"
        elif proc.poll() is not None:
            screen.qr_error = "--qr-pages: " + _exited_before("QR pages", proc)
        else:
            screen.qr_pages = collect_qr_pages(qmp, spec.qr_pages.absolute())
            screen.qr_error = screen.qr_pages.error
            _wait_briefly(proc)
    if spec.screendump is not None:
        dest = spec.screendump.absolute()
        if proc.poll() is not None:
            screen.screendump_error = "no screendump: " + _exited_before("screen", proc)
        else:
            screen.screendump_error = take_screendump(qmp, dest)
            if screen.screendump_error is None:
                screen.screendump = str(dest)
                _wait_briefly(proc)
    return screen


def _keep_emulator_output(launch: emulators.Launch, emu_out: bytes, out_dir: Path) -> str:
    """The emulator's own output (emulator.log), its log file and the model's output into out_dir; its text."""
    emu_text = terminal_text(emu_out) if launch.needs_pty else emu_out.decode("utf-8", "replace")
    if emu_text.strip():
        (out_dir / EMULATOR_LOG).write_text(emu_text + "\n", encoding="utf-8")
    if launch.emulator_log is not None and launch.emulator_log.is_file():
        (out_dir / launch.emulator_log.name).write_bytes(launch.emulator_log.read_bytes()[-4 * 1024 * 1024:])
    for name in launch.collect:  # the model's output (qemu-model)
        if name.is_file():
            shutil.copyfile(name, out_dir / name.name)
    return emu_text


@dataclass
class Captured:
    """What one emulator run left behind, for its Outcome: how it ended and what it said."""

    session: Session
    launch: emulators.Launch   # how it was started (its temporary files are gone)
    wall: float
    exit_code: int | None
    stop: str | None           # the limit that stopped it (Limits), STOPPED, or None
    stopped_line: str | None   # the emulator's own words when it stopped the guest (STOPPED)
    stopped_early: bool        # killed after `done` and its grace period
    interrupted: bool          # Ctrl-C
    screen: Screen
    emu_text: str              # what the emulator printed (kept beside the log)


class MoreBoots(Protocol):
    """What adds boots (processes) to a run after its first `boots` (sweep.py: runs=auto deciding the
    sets still open): `next` gives the next one's spec and label, or None to stop; `info`, what
    results.json's `run` says of them."""

    def next(self, spec: emulators.RunSpec, out_dir: Path, ran: int) -> tuple[emulators.RunSpec, str] | None: ...

    def info(self) -> dict[str, Any]: ...


def run_emulator(spec: emulators.RunSpec, out_dir: Path, limits: Limits,
                 progress: Progress, on_start: Callable[[Path], None] | None = None, boots: int = 1,
                 more: MoreBoots | None = None) -> Outcome:
    """Boot the kernel (`boots` times: the replicas of one run, each told replicas=N, one after the
    other into one serial.log, merged into one set by records/replicas.py), capture serial output into
    out_dir, parse it.

    Stops when `done` has arrived (after a grace period), when the run is
    hung or past --timeout (limits), or on Ctrl-C; every good record is kept.
    A boot that does not end `done ok` with results, or is stopped, ends the
    replicas there. Raises emulators.SetupError before anything starts if
    something is missing.
    """
    emu = emulators.get(spec.emulator)
    if boots > 1:
        spec = replace(spec, cmdline=emulators.with_replicas(spec.cmdline, boots))
    captures: list[Captured] = []
    for k in range(1, boots + 1):
        label = f"{replica_word(emu)} {k} of {boots}" if boots > 1 else None
        captures.append(_boot(spec, emu, out_dir, k, label, limits, progress, on_start))
        if k < boots and not _replicate_further(captures[-1], out_dir):
            break
    if more is not None and len(captures) == boots and _replicate_further(captures[-1], out_dir):
        while (added := more.next(spec, out_dir, len(captures))) is not None:
            captures.append(_boot(added[0], emu, out_dir, len(captures) + 1, added[1], limits, progress))
            if not _replicate_further(captures[-1], out_dir):
                break
    return _outcome(spec, emu, captures, out_dir, limits, boots, more.info() if more is not None else None)


TURN_SIDES = "AB"  # run_in_turn's two sides


# run_in_turn's order of the two sides in pair k (1-based): A B, then B A, and so on, so that a drift over
# the run lands on both sides alike
def turn_order(k: int) -> tuple[int, int]:
    return (0, 1) if k % 2 else (1, 0)


def run_in_turn(specs: tuple[emulators.RunSpec, emulators.RunSpec], out_dirs: tuple[Path, Path], limits: Limits,
                progress: Progress, boots: int, token: str) -> tuple[Outcome, Outcome | None]:
    """An A/B run in turn (`cleanroom ab`): two command lines (or builds) booted `boots` times each,
    A B B A A B ... (turn_order), each boot appended to its side's serial.log, so that A's k-th boot and
    B's k-th ran next to each other and pair up (stats/interval.py, `replica pairs`). A boot is not told
    replicas=: each takes the rounds its command line takes in one process alone (runs=, runs=auto's
    budget, not shared out: the rounds inside a process are cheap beside its start, and each one
    narrows its pair). Each side's results.json says it ran in turn (`run.turns`: token, side, the
    other side's directory, the order). Stops both at the first boot that does not end `done ok` with
    results; B's outcome is None when A's first boot was that one (B never started)."""
    emu = emulators.get(specs[0].emulator)
    turns = [(k, side) for k in range(1, boots + 1) for side in turn_order(k)]
    captures: tuple[list[Captured], list[Captured]] = ([], [])
    for k, side in turns:
        label = f"{replica_word(emu)} {k} of {boots}, {TURN_SIDES[side]}"
        captures[side].append(_boot(specs[side], emu, out_dirs[side], k, label, limits, progress))
        if not _replicate_further(captures[side][-1], out_dirs[side]):
            break
    order = "".join(TURN_SIDES[side] for _k, side in turns)
    a, b = (_outcome(specs[side], emu, captures[side], out_dirs[side], limits, boots,
                     {"turns": {"token": token, "side": TURN_SIDES[side], "with": str(out_dirs[1 - side]),
                                "order": order}}) if captures[side] else None
            for side in (0, 1))
    assert a is not None  # A boots first
    return a, b


def _boot(spec: emulators.RunSpec, emu: emulators.Emulator, out_dir: Path, k: int, label: str | None,
          limits: Limits, progress: Progress, on_start: Callable[[Path], None] | None = None) -> "Captured":
    """The k-th boot (1-based) of a run into out_dir's serial.log (the first writes it, the rest append)."""
    with tempfile.TemporaryDirectory(prefix="cleanroom-") as tmp:
        launch = emulators.prepare(spec, Path(tmp))
        if k == 1:
            out_dir.mkdir(parents=True, exist_ok=True)
            for name in launch.keep:  # bochsrc, grub.cfg: how this run was made
                shutil.copyfile(name, out_dir / name.name)
            for module in spec.modules:  # the user's code as the kernel got it
                if module.resolve().parent != out_dir.resolve():
                    shutil.copyfile(module, out_dir / module.name)
            if on_start is not None:
                on_start(out_dir)
        if label is not None:
            progress.message(label)
        return _capture(spec, emu, launch, tmp, out_dir, limits, progress, append=k > 1)


def replica_word(emu: emulators.Emulator) -> str:
    """What one replica of a run on `emu` is: a process of the hosted build, else a boot."""
    return "process" if emu.hosted else "boot"


def _replicate_further(c: "Captured", out_dir: Path) -> bool:
    """Whether the replica just captured is one to repeat: it ended done ok, whole, with results."""
    if c.stop is not None or c.interrupted:
        return False
    last = parse_boots((out_dir / SERIAL_LOG).read_bytes())[-1]
    return last.complete and last.status == "ok" and any(r.get("t") == "result" for r in last.records)


def _capture(spec: emulators.RunSpec, emu: emulators.Emulator, launch: emulators.Launch, tmp: str,
             out_dir: Path, limits: Limits, progress: Progress, append: bool = False) -> Captured:
    """Start the emulator, feed what it sends into the log until it ends, is stopped or is interrupted,
    take its screen where asked, and kill what is left of it."""
    chunks: "queue.Queue[tuple[str, bytes]]" = queue.Queue()
    emu_out = bytearray()
    start = time.monotonic()  # the first record's silence counts from here
    proc, threads, master = _start(launch, tmp, chunks, emu_out)

    stop: str | None = None
    stopped_line: str | None = None
    stopped_early = interrupted = False
    screen = Screen()
    serial_fh = launch.serial_file.open("rb") if launch.serial_file else None
    with (out_dir / SERIAL_LOG).open("ab" if append else "wb") as log:
        session = Session(log, progress, start=start)

        def pump(wait: float) -> None:
            try:
                tag, data = chunks.get(timeout=wait)
                while True:
                    if tag == "out":
                        session.feed(data)
                    else:
                        emu_out.extend(data)
                        del emu_out[:-TAIL_KEEP * 16]
                    tag, data = chunks.get_nowait()
            except queue.Empty:
                pass
            if serial_fh is not None:
                session.feed(serial_fh.read())

        try:
            try:
                while proc.poll() is None:
                    pump(POLL_S)
                    if session.done_at is not None:  # finished: not a hang
                        if session.done_for() >= DONE_GRACE_S:
                            stopped_early = proc.poll() is None
                            break
                    elif (stop := limits.check(session)) is not None:
                        break
                    elif emu.stops and (stopped_line := guest_stopped(emu, bytes(emu_out))) is not None:
                        stop = STOPPED  # it keeps running, the guest never will: not a hang
                        break
            except KeyboardInterrupt:
                interrupted = True
            if launch.qmp is not None and not interrupted:
                screen = _screen_after_done(spec, launch.qmp, proc, session.done_at is not None)
        finally:
            if proc.poll() is None:
                _kill_group(proc, launch.stop_signal)
        for t in threads:
            t.join(timeout=2.0)
        pump(0)
        if serial_fh is not None:
            serial_fh.close()
    wall = time.monotonic() - start
    if master >= 0:
        os.close(master)
    progress.finish()
    emu_text = _keep_emulator_output(launch, bytes(emu_out), out_dir)
    return Captured(session, launch, wall, proc.returncode, stop, stopped_line, stopped_early, interrupted, screen,
                    emu_text)


def _outcome(spec: emulators.RunSpec, emu: emulators.Emulator, captures: list[Captured], out_dir: Path,
             limits: Limits, asked: int = 1, extra: dict[str, Any] | None = None) -> Outcome:
    """The captured log parsed, the run's record (results.json's `run`) and what to tell the user."""
    c = captures[-1]
    boots = parse_sets((out_dir / SERIAL_LOG).read_bytes())
    result = boots[-1]
    run = {
        "emulator": spec.emulator,
        "command": c.launch.argv,
        "command_line": c.launch.display(),
        "kernel_cmdline": c.launch.kernel_cmdline,
        "wall_seconds": round(sum(x.wall for x in captures), 3),
        "exit_code": c.exit_code,
        **limits.fields(c.stop, c.session),
        "interrupted": c.interrupted,
        "stopped_after_done": c.stopped_early,
        **c.launch.info,
    }
    if asked > 1:
        run["replicas"] = {"asked": asked, "ran": len(captures), "level": replica_word(emu),
                           "wall_seconds": [round(x.wall, 3) for x in captures]}
        if len(captures) > 1:
            run["bench_seconds"] = _summed([x.session.bench_seconds() for x in captures])
    run.update(extra or {})
    if spec.user_code is not None:
        run["user_code"] = spec.user_code
    if spec.screendump is not None:
        run["screendump"] = c.screen.screendump
    if spec.qr_pages is not None:
        run["qr_pages"] = c.screen.qr_pages.info() if c.screen.qr_pages is not None else None
    messages: list[str] = []
    model_ok = True
    if 1 < len(captures) < asked:
        messages.append(f"replicas: {len(captures)} of the {asked} {replica_word(emu)}es/boots asked ran: "
                        f"{replica_word(emu)} {len(captures)} did not end done ok with results")
    if c.stopped_line is not None:
        run["emulator_error"] = c.stopped_line
    if not emu.hosted and (where := fault_function(spec.kernel, result.records)) is not None:
        run["fault_in"] = where  # the kernel ELF's function at the fault's eip
    if emu.model_plugin:
        # every recorded sample of every result gets the model's figures, or the run says which did not
        # (QEMU runs with -no-reboot: the model's file is one boot's)
        joined = model.join_file(result.records, out_dir / model.MODEL_FILE,
                                 spec.model if spec.model is not None else model.DEFAULT_PRESET)
        run["model"] = joined.run
        result.problems.extend(joined.problems)
        model_ok = joined.ok
    messages += [e for e in (c.screen.screendump_error, c.screen.qr_error) if e is not None]
    tail = "\n".join(c.emu_text.strip().splitlines()[-15:])
    if c.stop == STOPPED:
        messages.append(f"{emu.name} stopped the guest ({c.stopped_line}); {c.session.good} records received; "
                        f"it said:\n{tail}")
    elif c.stop is not None:
        messages.append(limits.message(c.stop, c.session) + usercode.hang_text(result.records))
    elif c.interrupted:
        messages.append(f"interrupted; {c.session.good} records received")
    elif result.done is None:
        msg = f"emulator exited with status {c.exit_code} before a done record"
        if tail:
            msg += f"; it said:\n{tail}"
        messages.append(msg)
    if c.stop == STOPPED or (result.done is None and not c.interrupted):
        messages.extend(f"hint: {what}" for what in emu.advice_for(c.emu_text))
    messages += [t for t in (usercode.fault_text(f, spec.user_code) for f in result.records if f.get("t") == "fault")
                 if t]
    # what the report's trust line will say of the hypervisor, at the report's width
    messages.extend("\n".join(wrap(note)) for note in machine.hypervisor_notes(result.records, run, emu.kind))
    write_boots(out_dir, boots, run)
    return Outcome(out_dir, boots, run, c.stop is not None or c.interrupted, messages, model_ok)


def _summed(per_boot: list[dict[str, float]]) -> dict[str, float]:
    """Each benchmark's seconds over the replicas."""
    out: dict[str, float] = {}
    for d in per_boot:
        for name, secs in d.items():
            out[name] = round(out.get(name, 0.0) + secs, 3)
    return out


def capture_port(port: str, baud: int, out_dir: Path, limits: Limits, progress: Progress,
                 announce: Callable[[str], None]) -> Outcome:
    """Read a serial port until a done record (plus a grace period), a hang, --timeout or Ctrl-C.

    The PC may be booted long after capture starts, so silence only counts
    once the first record has arrived (limits.silence_before_first is False
    for a capture).
    """
    try:
        import serial  # pyserial
    except ImportError as exc:
        raise emulators.SetupError(not_installed("pyserial")) from exc
    try:
        ser = serial.Serial(port, baudrate=baud, timeout=POLL_S)
    except (serial.SerialException, OSError, ValueError) as exc:
        raise emulators.SetupError(f"cannot open {port}: {exc}") from exc
    out_dir.mkdir(parents=True, exist_ok=True)
    start = time.monotonic()
    stop: str | None = None
    interrupted = False
    closed: str | None = None
    with ser, (out_dir / SERIAL_LOG).open("wb") as log:
        session = Session(log, progress, start=start)
        total = f", at most {limits.timeout:g} s in all" if limits.timeout is not None else ""
        announce(f"capturing from {port} at {baud} baud (after the first record, {limits.silence:g} s "
                 f"without one is a hang{total}); waiting for the first record; "
                 f"Ctrl-C stops and keeps what arrived")
        try:
            while True:
                try:
                    data = ser.read(max(1, ser.in_waiting))
                except (serial.SerialException, OSError) as exc:
                    closed = str(exc)
                    break
                session.feed(data)
                if session.done_at is not None:
                    if session.done_for() >= DONE_GRACE_S:
                        break
                elif (stop := limits.check(session)) is not None:
                    break
        except KeyboardInterrupt:
            interrupted = True
    progress.finish()
    wall = time.monotonic() - start
    boots = parse_sets((out_dir / SERIAL_LOG).read_bytes())
    run = {
        "emulator": "serial",
        "port": port,
        "baud": baud,
        "wall_seconds": round(wall, 3),
        **limits.fields(stop, session),
        "interrupted": interrupted,
    }
    messages: list[str] = []
    if stop is not None:
        messages.append(limits.message(stop, session))
    elif interrupted:
        messages.append(f"interrupted; {session.good} records received")
    elif closed is not None and boots[-1].done is None:
        messages.append(f"{port} closed before a done record: {closed}")
    write_boots(out_dir, boots, run)
    return Outcome(out_dir, boots, run, stop is not None or interrupted, messages)


def write_boots(out_dir: Path, boots: list[ParseResult], run: dict[str, Any]) -> None:
    """results.json and .csv of each boot the log holds (boot-K/ when several)."""
    for res, boot_dir in zip(boots, boot_dirs(out_dir, boots)):
        write_results(boot_dir, res, SERIAL_LOG if boot_dir == out_dir else f"../{SERIAL_LOG}", run)


def print_outcome(outcome: Outcome, out: TextIO, err: TextIO) -> None:
    """The summary a user reads after run/capture."""
    for msg in outcome.messages:
        err.write(msg + "\n")
    for line in boots_summary(outcome.boots, boot_dirs(outcome.out_dir, outcome.boots)):
        out.write(line + "\n")
    run = outcome.run
    out.write(f"run: {run['emulator']} in {run['wall_seconds']:.1f} s"
              + (f", emulator exit code {run['exit_code']}" if "exit_code" in run else "")
              + f"; results in {outcome.out_dir}\n")
    per_bench = bench_time_text(run)
    if per_bench:  # where the time went: the longest benchmark is the one to shorten
        out.write(per_bench + "\n")
    for res in outcome.boots:
        results = [r for r in res.records if r.get("t") == "result"]
        config = next((r for r in res.records if r.get("t") == "config"), {})
        cfg = config.get("cfg") if isinstance(config.get("cfg"), dict) else {}
        if any("converged" in r for r in results):  # runs=auto: the runs each case took
            # a case a line where runs=auto was asked for; a suite's own runs=auto (make run's
            # hundreds of cases) in one line, each case's in results.csv (n, converged)
            asked = "runs" in (config.get("given") or [])
            if asked:
                out.write("".join(f"  {line}\n" for line in auto_case_lines(results)))
            out.write(auto_text(results, cfg) + ("" if asked else f" (each case: n, converged in {RESULTS_CSV})")
                      + "\n")
