"""The lab without a LAVA server, as docs/LAB.md gives it: lava-job writes a job, lava-device renders LAVA's
qemu device type with the job's context, LAVA's own dispatcher (lava-run of Debian's lava-dispatcher 2023.01,
unpacked by `tools/setup.sh lab-packages`, run by tools/lab/lava-run) boots it, lava-fetch reads its log.
make test-lab runs these (marked `lab`: make test does not); lava-run wants root, as a LAVA worker runs."""

from __future__ import annotations

import io
import json
import os
import subprocess
from pathlib import Path
from typing import Any, Callable

import pytest
import yaml

from cleanroom_host import cli
from cleanroom_host.machines import lavajob, lavalog
from cleanroom_host.records import results
from conftest import LAB_PROPERTY

pytestmark = [pytest.mark.lab, pytest.mark.usefixtures("lab", "kernel_elf", "kernel_iso")]

REPO = Path(__file__).resolve().parent.parent
LAVA_RUN = REPO / "tools" / "lab" / "lava-run"
LAVA_PYTHON = REPO / "tools" / "lab" / "lava-python"
DISPATCHER = REPO / ".venv" / "lava" / "root" / "usr" / "lib" / "python3" / "dist-packages" / "lava_dispatcher"
ICOUNT_CMDLINE = "bench=tsc,ctxsw runs=2"
ISO_RUNS = 6  # the ISO job's done record comes at level target or feedback, as a race decides: several runs
LAVA_RUN_S = 600  # far above a job's time here (2 s for the icount job, 16 s for the ISO's quick suite)
FINISHED = "Job finished correctly"  # lava-run's last info entry of a job that passed
# What differs between the records of LAVA's run and a direct one of the same command line: the hello
# record's command line starts with the kernel's path (LAVA's download directory, not build/); and the TSC
# calibration's readings, because LAVA's qemu device type is another machine: a virtio NIC whose iPXE ROM
# runs before the kernel, QEMU's default devices. The firmware's time moves where the PM timer's ticks fall
# against the kernel's start (999999599 Hz directly, 1000006000 under LAVA), and with it the pair of sources
# the kernel picks and the calibration's instructions. Each machine repeats its own readings exactly (the
# test after this one); with QEMU's default -icount sleep=on they followed the host's clock.
VARIES = {"hello": ("cmdline", "cmdline_len"), "tsc": ("sources", "spread_ppm", "pair", "pair_ppm", "cost")}


@pytest.fixture(scope="session")
def lab() -> None:
    assert DISPATCHER.is_dir(), ("LAVA's dispatcher is not unpacked in .venv/lava: `tools/setup.sh lab-packages` "
                                 "does it (make test-lab runs it)")
    assert os.geteuid() == 0, "lava-run runs as root only (as a LAVA worker does): run make test-lab as root"


def tool(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = cli.main(list(argv), out, err)
    return status, out.getvalue(), err.getvalue()


def lava_run(tmp_path: Path, name: str, *job_argv: str, device_of: Callable[[Path], Path] | None = None
             ) -> tuple[subprocess.CompletedProcess[str], Path]:
    """Write the job, render the device for it, run it through lava-run: (lava-run, the log it wrote)."""
    job = tmp_path / f"{name}.yaml"
    status, _, err = tool("lava-job", *job_argv, "--job-name", f"cleanroom lab {name}", "--out", str(job))
    assert status == 0, err
    device = tmp_path / f"{name}-qemu01.yaml"
    if device_of is None:
        status, _, err = tool("lava-device", "--job", str(job), "--out", str(device))
        assert status == 0, err
    else:
        device = device_of(job)
    log = tmp_path / f"{name}.log"
    # lava-run keeps a job's files in /var/lib/lava/dispatcher/tmp/<job id>: an id of this process's own
    proc = subprocess.run([str(LAVA_RUN), "--device", str(device), "--job-id", f"cleanroom-{os.getpid()}-{name}",
                           "--output-dir", str(tmp_path / f"{name}-out"), str(job)],
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=LAVA_RUN_S)
    log.write_text(proc.stderr)
    return proc, log


def finished(proc: subprocess.CompletedProcess[str], log: Path) -> None:
    tail = "\n".join(log.read_text().splitlines()[-8:])
    assert proc.returncode == 0 and FINISHED in log.read_text(), f"lava-run failed ({proc.returncode}):\n{tail}"


def fetched(tmp_path: Path, log: Path, name: str) -> tuple[str, dict[str, Any]]:
    out_dir = tmp_path / f"{name}-fetched"
    status, out, err = tool("lava-fetch", str(log), "--device", "qemu01", "--out", str(out_dir))
    assert status == results.EXIT_OK, out + err
    return out, json.loads((out_dir / results.RESULTS_JSON).read_text())


def done_level(log: Path) -> str:
    """The level LAVA logged the kernel's done record at."""
    for line in log.read_text().splitlines():
        entry = yaml.safe_load(line)
        if isinstance(entry, dict) and str(entry.get("msg", "")).startswith('@cr1 {\\"t\\":\\"done\\",'):
            return str(entry["lvl"])
    raise AssertionError(f"{log}: LAVA logged no done record")


def cases_match_records(doc: dict[str, Any]) -> None:
    """LAVA's monitors made a test case of every result and every self-test, and its own job passed."""
    cases = doc["run"]["test_cases"]
    kinds = [r["t"] for r in doc["records"]]
    assert cases.get(lavajob.MONITOR_RESULTS, {}) == ({"pass": kinds.count("result")} if "result" in kinds else {})
    selftests = {"pass": sum(r["t"] == "test" and r["ok"] for r in doc["records"]),
                 "fail": sum(r["t"] == "test" and not r["ok"] for r in doc["records"])}
    assert cases.get(lavajob.MONITOR_SELFTEST, {}) == {k: n for k, n in selftests.items() if n}
    assert set(cases[lavalog.LAVA]) == {"pass"}


def without_varying(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in r.items() if k not in VARIES.get(r["t"], ())} for r in records]


def test_the_qemu_icount_job_gives_the_records_of_a_direct_run(tmp_path: Path) -> None:
    proc, log = lava_run(tmp_path, "icount", "--device-type", "qemu", "--emulator", "qemu-icount",
                         "--cmdline", ICOUNT_CMDLINE)
    finished(proc, log)
    _, lava = fetched(tmp_path, log, "icount")
    cmdline = yaml.safe_load((tmp_path / "icount.yaml").read_text())["metadata"]["cleanroom.cmdline"]
    status, out, err = tool("run", "--emulator", "qemu-icount", "--cmdline", cmdline, "--quiet",
                            "--out", str(tmp_path / "direct"))
    assert status == results.EXIT_OK, out + err
    direct = json.loads((tmp_path / "direct" / results.RESULTS_JSON).read_text())
    assert lava["complete"] is direct["complete"] is True
    assert lava["records"][-1] == direct["records"][-1] and lava["records"][-1]["t"] == "done"
    assert [r for r in lava["records"] if r["t"] == "result"] == [r for r in direct["records"] if r["t"] == "result"]
    assert without_varying(lava["records"]) == without_varying(direct["records"])
    hellos = [d["records"][0]["cmdline"].split(" ", 1)[1] for d in (lava, direct)]
    assert hellos[0] == hellos[1] == cmdline  # the same command line after the kernel's path
    cases_match_records(lava)


def test_two_runs_of_the_qemu_icount_job_give_the_same_bytes(tmp_path: Path) -> None:
    """Exact in the lab too: the job's own serial log, firmware lines included, repeats byte for byte but for
    the hello line, which names the job's download directory (docs/REPORT.md, Exactness). That path is the
    head of the kernel's command line, so the two jobs' ids are of one length: a longer path is more
    instructions before the TSC's calibration (the job ids "first" and "second" gave two PM timer readings)."""
    logs = []
    for name in ("job-a", "job-b"):
        proc, log = lava_run(tmp_path, name, "--device-type", "qemu", "--emulator", "qemu-icount",
                             "--cmdline", ICOUNT_CMDLINE)
        finished(proc, log)
        fetched(tmp_path, log, name)
        lines = (tmp_path / f"{name}-fetched" / results.SERIAL_LOG).read_bytes().splitlines(keepends=True)
        hello = [i for i, line in enumerate(lines) if line.startswith(b'@cr1 {"t":"hello"')]
        assert len(hello) == 1, lines[:20]
        logs.append(lines[:hello[0]] + lines[hello[0] + 1:])
    assert logs[0] == logs[1] and len(logs[0]) > 100


def test_a_job_with_the_users_snippet_measures_what_a_direct_run_does(tmp_path: Path) -> None:
    """lava-job --asm: LAVA downloads the snippet beside the kernel and QEMU hands it over by -initrd (docs/LAB.md);
    under icount its results are a direct run's to the instruction."""
    proc, log = lava_run(tmp_path, "asm", "--device-type", "qemu", "--emulator", "qemu-icount", "--asm",
                         "imul {r}, {r}", "--cmdline", "bench=asm paging=off runs=2")
    finished(proc, log)
    _, lava = fetched(tmp_path, log, "asm")
    status, out, err = tool("run", "--emulator", "qemu-icount", "--asm", "imul {r}, {r}", "--cmdline",
                            "bench=asm paging=off runs=2", "--quiet", "--out", str(tmp_path / "direct"))
    assert status == results.EXIT_OK, out + err
    direct = json.loads((tmp_path / "direct" / results.RESULTS_JSON).read_text())
    asm = [[r for r in d["records"] if r["t"] == "result"] for d in (lava, direct)]
    assert asm[0] == asm[1] and {r["case"] for r in asm[0]} == {"chain", "independent"}
    assert all(r["med"] == 1.0 for r in asm[0])


@pytest.mark.parametrize("run", range(1, ISO_RUNS + 1))
def test_the_iso_job_s_done_record_is_kept_at_either_level(tmp_path: Path, run: int,
                                                          record_property: Callable[[str, object], None]) -> None:
    iso = REPO / "build" / "cleanroom.iso"
    proc, log = lava_run(tmp_path, f"iso{run}", "--device-type", "qemu", "--iso-url", iso.as_uri())
    finished(proc, log)
    out, doc = fetched(tmp_path, log, f"iso{run}")
    assert doc["complete"] is True and doc["corrupt"] == 0, out
    done = doc["records"][-1]
    assert done["t"] == "done" and done["status"] == "ok" and done["records"] == len(doc["records"]) - 1
    cases_match_records(doc)
    level = done_level(log)
    record_property(LAB_PROPERTY, f"ISO run {run}: done logged at level {level}; lava-fetch: {len(doc['records'])} "
                                  f"records, complete")


def test_a_device_rendered_without_the_job_s_context_has_no_qemu(tmp_path: Path) -> None:
    """docs/LAB.md's old recipe: the device's configuration rendered without the job's context names QEMU's
    program as `qemu-system-` (no arch), and LAVA refuses the job in validate."""
    def without_context(job: Path) -> Path:
        bare = job.with_name("no-context.yaml")
        bare.write_text(yaml.safe_dump({k: v for k, v in yaml.safe_load(job.read_text()).items() if k != "context"}))
        device = job.with_name("no-context-qemu01.yaml")
        status, _, err = tool("lava-device", "--job", str(bare), "--out", str(device))
        assert status == 0, err
        return device

    proc, log = lava_run(tmp_path, "bare", "--device-type", "qemu", "--emulator", "qemu-icount", "--cmdline",
                         ICOUNT_CMDLINE, device_of=without_context)
    assert proc.returncode != 0
    assert "Cannot find command 'qemu-system-' in $PATH" in log.read_text()


# LAVA's ShellLogger (lava_dispatcher.shell) fed as pexpect feeds it: what lavalog.py's reading rests on.
SHELL_LOGGER = """
import json, sys
from lava_dispatcher.shell import ShellLogger

class Log:
    def target(self, msg): print(json.dumps(["target", msg]))
    def feedback(self, msg, namespace=None): print(json.dumps(["feedback", msg, namespace]))

shell = ShellLogger(Log())
shell.namespace = None
shell.write('@cr1 {"t":"done",')     # the monitor stops at done's start: the rest is not yet read
shell.is_feedback, shell.namespace = True, "common"  # read-feedback listens
shell.write('"seq":9} ~0\\r\\n')
shell.is_feedback, shell.namespace = False, None
shell.write("@cr1 {\\"t\\":")           # a line that has partly arrived when LAVA sends
shell.write("poweroff")                # pexpect logs what is sent into the same logfile
shell.write("\\n")
shell.is_feedback = True
shell.write("poweroff\\r\\n")           # the terminal's echo
shell.write('"x"} ~1\\r\\n')            # the line's rest
"""


def test_lava_s_shell_logger_splits_a_line_only_where_lava_sends_into_it() -> None:
    proc = subprocess.run([str(LAVA_PYTHON), "-c", SHELL_LOGGER], capture_output=True, text=True, check=True)
    assert [json.loads(line) for line in proc.stdout.splitlines()] == [
        ["feedback", '@cr1 {\\"t\\":\\"done\\",\\"seq\\":9} ~0', "common"],  # one entry, at the later level
        ["target", '@cr1 {\\"t\\":poweroff'],
        ["feedback", "poweroff", None],
        ["feedback", '\\"x\\"} ~1', None]]
