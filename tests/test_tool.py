"""The host tool's commands: parse, run (with a fake emulator), report."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
import threading
import zlib
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from booting import installed, tool_proc
from cleanroom_host.machines import emulators, runner
from cleanroom_host.machines.progress import Progress
from cleanroom_host.records.results import to_json_doc
from cleanroom_host.machines.runner import Limits, Session


def frame(obj: dict[str, Any]) -> bytes:
    js = json.dumps(obj, separators=(",", ":")).encode()
    return b"@cr1 " + js + b" ~" + format(zlib.crc32(js), "08x").encode() + b"\r\n"


def make_log(status: str = "ok", extra: list[dict[str, Any]] | None = None, benches: int = 2) -> bytes:
    body: list[dict[str, Any]] = [
        {"t": "hello", "proto": 1, "kernel": "0.1.0", "cmdline": "suite=quick exit=auto"},
        {"t": "cpu", "vendor": "AuthenticAMD", "family": 23, "model": 49, "stepping": 0,
         "brand": "AMD EPYC test", "features": ["tsc", "rdtscp", "sse2"], "hypervisor": "TCGTCGTCGTCG",
         "caches": [{"level": 1, "type": "data", "size": 32768, "ways": 8, "line": 64},
                    {"level": 2, "type": "unified", "size": 524288, "ways": 8, "line": 64}]},
        {"t": "tsc", "hz": 2994000000, "method": "pit", "serialize": "lfence", "overhead": 33},
        {"t": "mem", "usable": 133169152, "largest": 132120576},
        {"t": "config", "cfg": {"suite": "quick", "paging": "off", "runs": 5}},
    ]
    for b in range(benches):
        for done in range(2):
            body.append({"t": "progress", "bench": f"bench{b}", "done": done, "total": 2})
            body.append({"t": "result", "bench": f"bench{b}", "case": f"case{done}",
                         "params": {"size": 4096 << done}, "unit": "cycles", "n": 64,
                         "min": 100 + done, "med": 110 + done, "max": 190 + done, "mean": 120 + done})
    body += extra or []
    recs = [dict(r, seq=i) for i, r in enumerate(body)]
    recs.append({"t": "done", "seq": len(recs), "status": status, "records": len(recs),
                 "passed": 0, "failed": 0})
    return b"SeaBIOS noise\r\n\x1b[2J" + b"".join(frame(r) for r in recs)


def script(cleanroom_tool: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """tools/cleanroom itself, in an interpreter of its own: its exit status is the process's. The other tests
    here run the command line in this process (booting.tool_proc: a new interpreter's start cost each call
    ~0.15 CPU-s); what only the script does is tested through it: here, and in the tests that start it
    themselves (concurrent runs, a reader that stops reading)."""
    # The timeout is a safety net only: the tool's own silence limit ends a stuck run.
    return subprocess.run([sys.executable, str(cleanroom_tool), *args], capture_output=True, text=True,
                          timeout=600, stdin=subprocess.DEVNULL)


# --- parse ------------------------------------------------------------------

def test_parse_good_log_writes_results(tmp_path: Path) -> None:
    log = tmp_path / "serial.log"
    log.write_bytes(make_log())
    p = tool_proc("parse", str(log))
    assert p.returncode == 0, p.stdout + p.stderr
    assert p.stdout.splitlines()[0] == "records: 14 good, 0 corrupt, 0 missing, complete: yes"
    doc = json.loads((tmp_path / "results.json").read_text())
    assert doc["complete"] is True and doc["status"] == "ok"
    assert doc["corrupt"] == 0 and doc["missing"] == []
    assert [r["seq"] for r in doc["records"]] == list(range(14))
    rows = list(csv.DictReader((tmp_path / "results.csv").open()))
    assert len(rows) == 4
    assert rows[1] == {"bench": "bench0", "case": "case1", "param_size": "8192", "unit": "cycles",
                       "n": "64", "min": "101", "med": "111", "max": "191", "mean": "121"}


def test_parse_damaged_log_still_writes_good_records(tmp_path: Path) -> None:
    lines = make_log().split(b"\r\n")
    lines[2] = lines[2].replace(b'"family":23', b'"family":24')  # CRC now wrong
    del lines[9]
    log = tmp_path / "serial.log"
    log.write_bytes(b"\r\n".join(lines))
    out = tmp_path / "out"
    p = tool_proc("parse", str(log), "--out", str(out))
    assert p.returncode == 4
    first = p.stdout.splitlines()[0]
    assert first == "records: 12 good, 1 corrupt, 2 missing, complete: no"
    doc = json.loads((out / "results.json").read_text())
    assert doc["corrupt"] == 1 and len(doc["missing"]) == 2
    assert len(doc["records"]) == 12 and doc["complete"] is False
    assert not (tmp_path / "results.json").exists()


@pytest.mark.parametrize("status,code", [("ok", 0), ("fail", 1), ("config", 2), ("fault", 3)])
def test_parse_exit_status_follows_done(tmp_path: Path, status: str, code: int) -> None:
    log = tmp_path / "serial.log"
    log.write_bytes(make_log(status))
    assert tool_proc("parse", str(log)).returncode == code


def test_parse_incomplete_log_fails(tmp_path: Path) -> None:
    log = tmp_path / "serial.log"
    log.write_bytes(make_log().rsplit(b"@cr1", 1)[0])  # done lost
    p = tool_proc("parse", str(log))
    assert p.returncode == 4
    assert "complete: no" in p.stdout and (tmp_path / "results.csv").is_file()


def test_parse_missing_file(tmp_path: Path) -> None:
    p = tool_proc("parse", str(tmp_path / "nope.log"))
    assert p.returncode == 5 and "cannot read" in p.stderr


def two_boots(repo_root: Path) -> bytes:
    """Two real logs joined, as the issue had them: bench tsc, then bench ctxsw."""
    return ((repo_root / "tests" / "fixtures" / "qemu-quick.log").read_bytes()
            + (repo_root / "docs" / "data" / "qemu-icount-ctxsw.log").read_bytes())


def test_parse_a_log_of_two_boots_writes_a_set_per_boot(tmp_path: Path, repo_root: Path) -> None:
    """Issue 19: the second boot's records were kept after the first done
    ("conflicting records", "2 done records"), never said to be a boot."""
    log = tmp_path / "serial.log"
    log.write_bytes(two_boots(repo_root))
    p = tool_proc("parse", str(log))
    assert p.returncode == 4, p.stderr
    out = p.stdout.splitlines()
    assert out[0].startswith("the log holds 2 boots")
    assert out[1].startswith("boot 1 of 2 (log lines 1-18), cmdline ") and "suite=quick" in out[1]
    assert out[1].endswith(f"results in {tmp_path / 'boot-1'}")
    assert "conflicting" not in p.stdout and "done records" not in p.stdout
    assert not (tmp_path / "results.json").exists()
    benches = []
    for k in (1, 2):
        doc = json.loads((tmp_path / f"boot-{k}" / "results.json").read_text())
        assert doc["boot"]["index"] == k and doc["boot"]["of"] == 2 and doc["complete"] and not doc["conflicts"]
        assert [r["t"] for r in doc["records"]].count("hello") == 1
        assert (tmp_path / f"boot-{k}" / "results.csv").is_file()
        benches.append({r["bench"] for r in doc["records"] if r["t"] == "result"})
    assert benches == [{"tsc"}, {"ctxsw"}]
    # --boot K: that boot alone, as a log of one boot is written
    p = tool_proc("parse", str(log), "--boot", "2", "--out", str(tmp_path / "two"))
    assert p.returncode == 0, p.stdout + p.stderr
    doc = json.loads((tmp_path / "two" / "results.json").read_text())
    assert doc["boot"]["index"] == 2 and doc["boot"]["of"] == 2 and doc["boot"]["lines"][0] == 19
    assert {r["bench"] for r in doc["records"] if r["t"] == "result"} == {"ctxsw"}
    p = tool_proc("parse", str(log), "--boot", "3")
    assert p.returncode == 5 and "--boot 3: " in p.stderr and "holds 2 boots; choose 1 to 2" in p.stderr
    assert tool_proc("parse", str(log), "--boot", "0").returncode == 5


def test_report_never_mixes_two_boots(tmp_path: Path, repo_root: Path) -> None:
    """Issue 19: report exited 0 with the first boot's command line above the
    second boot's ctxsw results."""
    log = tmp_path / "serial.log"
    log.write_bytes(two_boots(repo_root))
    for path in (log, tmp_path):
        p = tool_proc("report", "--no-plots", str(path))
        assert p.returncode == 5 and not p.stdout
        assert "holds 2 boots (1: log lines 1-18, ok; 2: log lines 19-" in p.stderr and "--boot K" in p.stderr
    p = tool_proc("report", "--no-plots", str(log), "--boot", "2")
    assert p.returncode == 0, p.stderr
    assert "bench=ctxsw" in p.stdout and "suite=quick" not in p.stdout
    assert (tmp_path / "boot-2" / "report.txt").is_file() and not (tmp_path / "report.txt").exists()
    tool_proc("parse", str(log))
    p = tool_proc("report", "--no-plots", str(tmp_path), "--boot", "1")
    assert p.returncode == 0 and "suite=quick" in p.stdout and "bench=ctxsw" not in p.stdout
    # a results.json written before boots were told apart
    from cleanroom_host.records.protocol import assemble, scan
    (tmp_path / "old").mkdir()
    (tmp_path / "old" / "results.json").write_text(json.dumps(to_json_doc(assemble(scan(log.read_bytes())), "x")))
    p = tool_proc("report", "--no-plots", str(tmp_path / "old"))
    assert p.returncode == 5 and "mixes the records of 2 boots" in p.stderr


def test_usage_error_exit_status(cleanroom_tool: Path) -> None:
    assert script(cleanroom_tool, "run", "--emulator", "vmware").returncode == 5
    assert script(cleanroom_tool).returncode == 5
    for bad in ("0", "-3", "soon", "inf"):
        p = tool_proc("run", "--silence", bad)
        assert p.returncode == 5 and "--silence" in p.stderr, bad
        assert tool_proc("capture", "--port", "/dev/null", "--timeout", bad).returncode == 5


# --- run with a fake emulator ----------------------------------------------

@pytest.fixture
def fake(tmp_path: Path, fixtures_dir: Path) -> dict[str, Any]:
    """A fake kernel file, a log to play, and the environment for the fake."""
    kernel = tmp_path / "cleanroom.elf"
    kernel.write_bytes(b"\x7fELF fake")
    log = tmp_path / "play.log"
    log.write_bytes(make_log())
    info = tmp_path / "info.json"
    results = tmp_path / "results"
    env = {"FAKE_LOG": str(log), "FAKE_INFO": str(info), "CLEANROOM_RESULTS": str(results)}
    return {"kernel": kernel, "log": log, "info": info, "env": env, "results": results,
            "binary": str(fixtures_dir / "fake_emulator.py")}


def run_fake(fake: dict[str, Any], *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return tool_proc("run", "--kernel", str(fake["kernel"]), "--emulator-binary", fake["binary"],
                *args, env=dict(fake["env"], **env))


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is dead too; it is reaped by its parent (already gone).
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return False


def test_run_qemu_command_line_and_results(tmp_path: Path, fake: dict[str, Any]) -> None:
    out = tmp_path / "out"
    p = run_fake(fake, "--cmdline", "suite=selftest", "--out", str(out),
                 "--cpu", "486", "--memory", "16", "--qemu-arg=-s")
    assert p.returncode == 0, p.stdout + p.stderr
    argv = json.loads(fake["info"].read_text())["argv"]
    # the kernel by a name of the run's own, a link to it (emulators.KERNEL_LINK: a boot does not depend on the path)
    assert argv == ["-kernel", emulators.KERNEL_LINK, "-append", "suite=selftest exit=auto",
                    "-nodefaults", "-vga", "std", "-display", "none", "-serial", "stdio", "-monitor", "none", "-no-reboot",
                    "-device", "isa-debug-exit,iobase=0xf4,iosize=0x04", "-m", "16", "-cpu", "486", "-s"]
    assert (out / "serial.log").read_bytes() == fake["log"].read_bytes()
    doc = json.loads((out / "results.json").read_text())
    assert doc["complete"] and doc["status"] == "ok" and doc["run"]["kernel"] == str(fake["kernel"].absolute())
    run = doc["run"]
    assert run["emulator"] == "qemu" and run["kernel_cmdline"] == "suite=selftest exit=auto"
    assert run["command"][1:] == argv and run["timed_out"] is False and run["exit_code"] == 0
    assert isinstance(run["wall_seconds"], float)
    assert run["silence"] == 60 and run["timeout"] is None  # no total limit unless --timeout
    assert run["hung"] is False and run["last_seq"] == 13
    assert "records: 14 good, 0 corrupt, 0 missing, complete: yes" in p.stdout
    assert not fake["results"].exists()  # --out given: results/ untouched


def test_run_icount_keeps_exit_token(fake: dict[str, Any], tmp_path: Path) -> None:
    p = run_fake(fake, "--emulator", "qemu-icount", "--cmdline", "suite=quick exit=halt",
                 "--out", str(tmp_path / "o"))
    assert p.returncode == 0, p.stderr
    argv = json.loads(fake["info"].read_text())["argv"]
    assert argv[argv.index("-append") + 1] == "suite=quick exit=halt"
    assert argv[-len(emulators.ICOUNT_ARGS):] == list(emulators.ICOUNT_ARGS) and "-m" in argv and argv[argv.index("-m") + 1] == "128"


def test_run_stops_soon_after_done(fake: dict[str, Any], tmp_path: Path) -> None:
    # The fake lingers after `done` for longer than the test's safety net: only
    # the tool stopping it after the grace period lets this pass.
    p = run_fake(fake, "--out", str(tmp_path / "o"), FAKE_HANG="900")
    assert p.returncode == 0, p.stderr
    run = json.loads((tmp_path / "o" / "results.json").read_text())["run"]
    assert run["stopped_after_done"] is True and run["timed_out"] is False and run["hung"] is False
    assert not pid_alive(json.loads(fake["info"].read_text())["pid"])


def test_run_silence_is_a_hang(fake: dict[str, Any], tmp_path: Path) -> None:
    """9 records, then only noise and a corrupt frame: hung after 2 s without a good record."""
    out = tmp_path / "o"
    p = run_fake(fake, "--out", str(out), "--silence", "2",
                 FAKE_LINES="10", FAKE_HANG="900", FAKE_NOISE="0.3")
    assert p.returncode == 4, p.stdout + p.stderr
    assert "no record for 2 s after seq 8; 9 records received" in p.stderr
    doc = json.loads((out / "results.json").read_text())
    assert [r["seq"] for r in doc["records"]] == list(range(9)) and doc["complete"] is False
    run = doc["run"]
    assert run["hung"] is True and run["timed_out"] is False and run["last_seq"] == 8
    assert run["silence"] == 2 and run["timeout"] is None
    assert b"stuck in a loop" in (out / "serial.log").read_bytes()  # the noise was read, and did not count
    assert not pid_alive(json.loads(fake["info"].read_text())["pid"])


def test_run_silent_from_the_start(fake: dict[str, Any], tmp_path: Path) -> None:
    out = tmp_path / "o"
    p = run_fake(fake, "--out", str(out), "--silence", "1.5", FAKE_LINES="1", FAKE_HANG="900")
    assert p.returncode == 4
    assert "no record for 1.5 s after the emulator started; 0 records received" in p.stderr
    run = json.loads((out / "results.json").read_text())["run"]
    assert run["hung"] is True and run["last_seq"] is None and run["bench_seconds"] == {}


@pytest.mark.early
def test_slow_run_is_not_a_hang(fake: dict[str, Any], tmp_path: Path) -> None:
    """6 records 1 s apart (7 s in all, with the noise line before them) under a 3 s silence limit."""
    fake["log"].write_bytes(make_log(benches=0))
    out = tmp_path / "o"
    p = run_fake(fake, "--out", str(out), "--silence", "3", FAKE_DELAY="1")
    assert p.returncode == 0, p.stdout + p.stderr
    doc = json.loads((out / "results.json").read_text())
    assert doc["complete"] and len(doc["records"]) == 6
    assert doc["run"]["hung"] is False and doc["run"]["silence"] == 3 and doc["run"]["last_seq"] == 5


def test_run_timeout_keeps_what_arrived(fake: dict[str, Any], tmp_path: Path) -> None:
    out = tmp_path / "o"
    p = run_fake(fake, "--out", str(out), "--timeout", "2", FAKE_LINES="10", FAKE_HANG="900")
    assert p.returncode == 4
    assert "timed out after 2 s (--timeout); 9 records received" in p.stderr
    doc = json.loads((out / "results.json").read_text())
    assert len(doc["records"]) == 9 and doc["complete"] is False
    assert doc["run"]["timed_out"] is True and doc["run"]["hung"] is False and doc["run"]["timeout"] == 2
    assert (out / "serial.log").read_bytes() == b"\r\n".join(fake["log"].read_bytes().split(b"\r\n")[:10]) + b"\r\n"
    assert not pid_alive(json.loads(fake["info"].read_text())["pid"])


def test_run_time_per_benchmark(fake: dict[str, Any], tmp_path: Path) -> None:
    out = tmp_path / "o"
    p = run_fake(fake, "--out", str(out), FAKE_DELAY="0.01")
    assert p.returncode == 0, p.stderr
    per_bench = json.loads((out / "results.json").read_text())["run"]["bench_seconds"]
    assert list(per_bench) == ["boot", "bench0", "bench1"]
    assert all(isinstance(v, float) and v >= 0 for v in per_bench.values())
    line = next(x for x in p.stdout.splitlines() if x.startswith("time per benchmark: "))
    assert line.startswith("time per benchmark: boot ") and ", bench0 " in line and ", bench1 " in line


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_session_credits_each_gap_to_the_next_records_bench() -> None:
    clock = Clock()
    session = Session(io.BytesIO(), Progress(io.StringIO(), "quiet"), clock=clock)
    arrivals = [(0.5, {"t": "hello"}), (0.1, {"t": "config"}),
                (0.2, {"t": "progress", "bench": "tsc", "done": 0, "total": 1}),
                (1.0, {"t": "result", "bench": "tsc"}), (0.25, {"t": "progress", "bench": "tsc"}),
                (0.4, {"t": "progress", "bench": "ctxsw"}), (3.0, {"t": "result", "bench": "ctxsw"}),
                (0.7, {"t": "done"}), (0.3, {"t": "test", "name": "crc32"})]
    for seq, (gap, rec) in enumerate(arrivals):
        clock.now += gap
        session.feed(frame(dict(rec, seq=seq)))
    session.feed(b"@cr1 {\"t\":\"result\",\"bench\":\"tsc\"} ~00000000\r\n")  # corrupt: no arrival
    # config (set-up) is the boot's; done goes with the benchmark before it; self-tests are one entry
    assert session.bench_seconds() == {"boot": 0.6, "tsc": 1.45, "ctxsw": 4.1, "selftest": 0.3}
    assert session.good == 9 and session.corrupt == 1 and session.last_seq == 8


def test_limits_count_silence_not_total_time() -> None:
    clock = Clock()
    session = Session(io.BytesIO(), Progress(io.StringIO(), "quiet"), clock=clock)
    run, capture = Limits(silence=10), Limits(silence=10, silence_before_first=False)
    clock.now += 9.9
    assert run.check(session) is None
    clock.now += 0.1
    assert run.check(session) == "hung" and capture.check(session) is None  # capture waits for the PC
    assert run.message("hung", session) == "no record for 10 s after the emulator started; 0 records received"
    for seq in range(100):  # 100 records 9 s apart: 900 s in all, never 10 s of silence
        session.feed(frame({"t": "progress", "seq": seq, "bench": "b"}))
        clock.now += 9
        assert run.check(session) is None and capture.check(session) is None
    clock.now += 1
    assert run.check(session) == capture.check(session) == "hung"
    assert capture.message("hung", session) == "no record for 10 s after seq 99; 100 records received"
    total = Limits(silence=10, timeout=800)  # --timeout 800, on the test's clock
    assert total.check(session) == "hung"
    session.feed(frame({"t": "progress", "seq": 100, "bench": "b"}))
    assert total.check(session) == "timeout"
    assert total.message("timeout", session) == "timed out after 800 s (--timeout); 101 records received"


def test_run_emulator_dies_early(fake: dict[str, Any], tmp_path: Path) -> None:
    p = run_fake(fake, "--out", str(tmp_path / "o"), FAKE_LINES="4", FAKE_EXIT="7")
    assert p.returncode == 4
    assert "emulator exited with status 7 before a done record" in p.stderr


@pytest.mark.parametrize("status,code", [("fail", 1), ("config", 2), ("fault", 3)])
def test_run_exit_status_follows_done(fake: dict[str, Any], tmp_path: Path,
                                      status: str, code: int) -> None:
    fake["log"].write_bytes(make_log(status))
    assert run_fake(fake, "--out", str(tmp_path / "o")).returncode == code


def test_run_progress_lines_and_quiet(fake: dict[str, Any], tmp_path: Path) -> None:
    p = run_fake(fake, "--out", str(tmp_path / "a"))
    assert [line for line in p.stderr.splitlines() if line.startswith("progress:")] == [
        "progress: bench0 (2 cases)", "progress: bench1 (2 cases)"]
    p = run_fake(fake, "--out", str(tmp_path / "b"), "--quiet")
    assert p.returncode == 0 and "progress" not in p.stderr


def test_progress_bar_on_a_terminal() -> None:
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    stream = Tty()
    progress = Progress.for_stream(stream, quiet=False)
    assert progress.mode == "bar"
    progress.record({"t": "progress", "seq": 5, "bench": "switch", "done": 1, "total": 4})
    progress.record({"t": "progress", "seq": 6, "bench": "switch", "done": 3, "total": 4})
    progress.finish()
    text = stream.getvalue()
    assert "\r[" in text and " 75% switch 3/4" in text and text.endswith("\n")
    assert Progress.for_stream(io.StringIO(), quiet=False).mode == "lines"


def test_run_default_dir_and_latest_symlink(fake: dict[str, Any]) -> None:
    p1 = run_fake(fake)
    p2 = run_fake(fake, "--emulator", "qemu-icount")
    assert p1.returncode == 0 and p2.returncode == 0
    dirs = sorted(d.name for d in fake["results"].iterdir() if d.name != "latest")
    assert len(dirs) == 2
    assert any(d.endswith("-qemu") for d in dirs) and any(d.endswith("-qemu-icount") for d in dirs)
    latest = fake["results"] / "latest"
    assert latest.is_symlink() and not os.path.isabs(os.readlink(latest))
    assert latest.resolve().name.endswith("-qemu-icount")
    assert json.loads((latest / "results.json").read_text())["run"]["emulator"] == "qemu-icount"


def test_concurrent_runs_never_share_a_results_directory(cleanroom_tool: Path, fake: dict[str, Any]) -> None:
    """Issue 19: two runs started together without --out picked the same
    name (chosen first, created later with exist_ok): both said "results in"
    one path and one log overwrote the other."""
    n = 4
    env = dict(os.environ, **fake["env"])
    procs = [subprocess.Popen([sys.executable, str(cleanroom_tool), "run", "--kernel", str(fake["kernel"]),
                               "--emulator-binary", fake["binary"], "--quiet"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                              stdin=subprocess.DEVNULL) for _ in range(n)]
    said = []
    for proc in procs:
        stdout, stderr = proc.communicate(timeout=600)
        assert proc.returncode == 0, stderr
        said.append(stdout.rsplit("results in ", 1)[1].split()[0].rstrip(";"))
    assert len(set(said)) == n, said
    dirs = sorted(d for d in fake["results"].iterdir() if d.name != "latest")
    assert sorted(str(d) for d in dirs) == sorted(said)
    for d in dirs:  # each a whole run of its own
        assert (d / "serial.log").read_bytes() == fake["log"].read_bytes()
        assert json.loads((d / "results.json").read_text())["complete"] is True
    assert (fake["results"] / "latest").resolve() in {d.resolve() for d in dirs}


def test_results_directories_made_at_once_are_all_distinct(tmp_path: Path) -> None:
    """Many creations in the same second from many threads: every one gets a
    directory of its own, made by the mkdir itself; latest names one of them,
    then the newest once the next run starts."""
    when = datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc)
    made: list[Path] = []

    def one() -> None:
        path = runner.new_results_dir(tmp_path / "results", "qemu", now=when)
        runner.point_latest(path)
        made.append(path)

    threads = [threading.Thread(target=one) for _ in range(32)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    names = sorted(p.name for p in made)
    assert len(set(names)) == 32 and all(p.is_dir() for p in made)
    assert "20260102-030405-qemu" in names and "20260102-030405-qemu-32" in names
    latest = tmp_path / "results" / "latest"
    assert latest.resolve() in {p.resolve() for p in made}
    newest = runner.new_results_dir(tmp_path / "results", "qemu", now=when)
    runner.point_latest(newest)
    assert newest.name == "20260102-030405-qemu-33" and os.readlink(latest) == newest.name
    assert not [p for p in (tmp_path / "results").iterdir() if p.name.startswith(".latest")]


def test_run_missing_kernel_names_make(fake: dict[str, Any], tmp_path: Path) -> None:
    p = tool_proc("run", "--kernel", str(tmp_path / "none.elf"), env=fake["env"])
    assert p.returncode == 5 and "`make`" in p.stderr
    p = tool_proc("run", "--emulator", "iso", "--iso", str(tmp_path / "none.iso"), env=fake["env"])
    assert p.returncode == 5 and "`make iso`" in p.stderr
    assert not fake["results"].exists()


def test_run_missing_emulator_names_package(fake: dict[str, Any], tmp_path: Path) -> None:
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    p = tool_proc("run", "--kernel", str(fake["kernel"]), env=dict(fake["env"], PATH=str(empty)))
    assert p.returncode == 5
    assert "qemu-system-i386 not found" in p.stderr and "qemu-system-x86" in p.stderr
    assert "tools/setup.sh" in p.stderr


def test_run_bochs_reads_serial_file_under_a_pty(fake: dict[str, Any], tmp_path: Path) -> None:
    installed("grub-mkrescue")
    out = tmp_path / "o"
    p = run_fake(fake, "--emulator", "bochs", "--cmdline", "suite=selftest",
                 "--out", str(out), FAKE_DELAY="0.01")
    assert p.returncode == 0, p.stdout + p.stderr
    info = json.loads(fake["info"].read_text())
    assert info["tty"] is True and info["term"]
    assert info["argv"][0] == "-q" and info["argv"][1] == "-f" and info["argv"][3] == "-rc"
    assert (out / "serial.log").read_bytes() == fake["log"].read_bytes()
    doc = json.loads((out / "results.json").read_text())
    assert doc["run"]["kernel_cmdline"] == "suite=selftest exit=auto" and doc["complete"]


# --- report -------------------------------------------------------------------

EXTRA: list[dict[str, Any]] = [
    {"t": "test", "name": "crc32_vectors", "ok": True, "detail": ""},
    {"t": "test", "name": "page_fault_guard", "ok": False, "detail": "no #PF at 0x1000"},
    {"t": "skip", "what": "bench:rdtscp_pair", "why": "cpu lacks rdtscp"},
    {"t": "error", "code": "mem_small", "msg": "only 15 MiB usable"},
    {"t": "fault", "vector": 14, "name": "page_fault", "eip": 0x101234, "err": 2, "cr2": 0xdead0000,
     "bench": "touch"},
]


def test_report_sections(tmp_path: Path) -> None:
    log = tmp_path / "serial.log"
    log.write_bytes(make_log("fail", EXTRA))
    p = tool_proc("report", "--full", str(log))
    assert p.returncode == 0, p.stderr
    text = p.stdout
    assert "AuthenticAMD \"AMD EPYC test\"" in text and "family 23 model 49 stepping 0" in text
    assert "tsc rdtscp sse2" in text and "L1d 32 KiB 8-way 64 B lines; L2 512 KiB" in text
    assert "TCGTCGTCGTCG" in text
    assert "2.994 GHz (2994000000 Hz, method pit), serialise lfence, overhead 33 TSC ticks" in text
    assert "usable 127 MiB" in text and "cmdline     suite=quick exit=auto" in text
    assert "suite=quick paging=off runs=5" in text
    lines = text.splitlines()
    header = next(i for i, line in enumerate(lines) if line.split()[:3] == ["bench", "case", "params"])
    rows = [line.split() for line in lines[header + 2: header + 6]]
    assert rows[3] == ["bench1", "case1", "size=8192", "64", "101", "111", "191", "121"]
    # Numeric columns are right-aligned: the min column ends where its header ends.
    assert lines[header].index("min") + 3 == lines[header + 2].index("100") + 3
    assert "self-tests: 1 passed, 1 failed" in text
    assert "page_fault_guard  FAIL  no #PF at 0x1000" in text
    assert "cpu lacks rdtscp" in text and "only 15 MiB usable" in text
    assert "0x00101234" in text and "0xdead0000" in text
    assert lines[-1].startswith("done: status fail")


def test_report_accepts_dir_json_and_log(tmp_path: Path) -> None:
    log = tmp_path / "serial.log"
    log.write_bytes(make_log())
    from_log = tool_proc("report", str(tmp_path)).stdout  # dir with only serial.log
    assert tool_proc("parse", str(log)).returncode == 0
    from_dir = tool_proc("report", str(tmp_path)).stdout
    from_json = tool_proc("report", str(tmp_path / "results.json")).stdout
    body = lambda s: s.split("full tables:", 1)[1]  # noqa: E731 - the lines before name the path
    assert body(from_dir) == body(from_json) == body(from_log)
    assert "bench0" in from_dir
    p = tool_proc("report", str(tmp_path / "nothing"))
    assert p.returncode == 5


def test_report_recorded_qemu_run(fixtures_dir: Path, tmp_path: Path) -> None:
    """A real quick-suite run recorded from QEMU (tests/fixtures/qemu-quick.log)."""
    log = fixtures_dir / "qemu-quick.log"
    from cleanroom_host.records.protocol import parse_log
    res = parse_log(log.read_bytes())
    assert res.complete and res.status == "ok" and not res.damaged
    p = tool_proc("report", "--full", "--out", str(tmp_path), str(log))
    assert p.returncode == 0
    text = p.stdout
    cpu = res.first("cpu")
    assert cpu is not None and str(cpu["vendor"]) in text
    hello = res.first("hello")
    assert hello is not None and hello["cmdline"] in text
    results = res.of_type("result")
    assert results, "a quick run measures something"
    assert f"results ({len(results)}," in text
    for r in results:
        assert f"{r['bench']}" in text
    assert text.splitlines()[-1].startswith("done: status ok")


def test_a_reader_that_stops_reading_ends_nothing(fixtures_dir: Path, cleanroom_tool: Path, tmp_path: Path) -> None:
    """`cleanroom compare A B | head`: the reader closes the pipe after a few lines; compare still writes its
    CSVs and ends with its status, without a BrokenPipeError traceback (it ended so, status 1, before)."""
    log = str(fixtures_dir / "qemu-icount-make-run.log")
    proc = subprocess.Popen([str(cleanroom_tool), "compare", log, log, "--out", str(tmp_path)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    first = os.read(proc.stdout.fileno(), 100)  # more than a pipe holds follows: compare meets the closed pipe
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 0 and first.startswith(b"compare: A = "), err
    assert "BrokenPipe" not in err and "Traceback" not in err, err
    assert (tmp_path / "compare.csv").is_file() and (tmp_path / "compare-derived.csv").is_file()
