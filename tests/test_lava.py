"""LAVA: the jobs lava-job writes (checked with LAVA's own schema), their monitors over recorded serial
logs (run as LAVA's dispatcher runs them, tests/lava_monitor.py), and lava-fetch back to results.json."""

from __future__ import annotations

import importlib
import io
import json
import stat
from pathlib import Path
from typing import Any

import pytest
import yaml

from cleanroom_host import cli
from cleanroom_host.machines import emulators, lavajob
from cleanroom_host.records import results
from cleanroom_host.records.protocol import encode_record, parse_log
from booting import tool_main
from lava_monitor import run_monitors

REPO = Path(__file__).resolve().parent.parent
SELFTEST_LOG = REPO / "tests" / "fixtures" / "qemu-icount-selftest-tsc-create.log"
# what LAVA 2023.01's own classes logged of SELFTEST_LOG (tests/fixtures/lava/record.py)
LAVA_LOG = REPO / "tests" / "fixtures" / "lava" / "qemu-icount-selftest-tsc-create.yaml"
QUICK_LOGS = ["qemu-icount-quick.log", "qemu-quick.log", "bochs-quick-256k.log", "hosted-quick.log"]


def lava_schema() -> Any:
    """LAVA's own job schema: Debian's lava-common (tools/setup.sh, which make test runs first, installs it and
    links it into .venv: its absence is a failure, never a skip)."""
    try:
        return importlib.import_module("lava_common.schemas")
    except ImportError as exc:
        raise AssertionError(f"lava_common.schemas cannot be imported ({exc}): tools/setup.sh installs Debian's "
                             "lava-common and links it into .venv") from exc


def lava_job(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = cli.main(["lava-job", *argv], out, err)
    return status, out.getvalue(), err.getvalue()


def job_of(*argv: str) -> dict[str, Any]:
    schema = lava_schema()
    status, text, err = lava_job(*argv)
    assert status == 0, err
    assert err == ""  # checked with LAVA's schema: nothing to say
    job = yaml.safe_load(text)
    schema.validate(job, strict=True)  # LAVA's own validator, once more, on what was printed
    return job


def action(job: dict[str, Any], kind: str) -> dict[str, Any]:
    return next(a[kind] for a in job["actions"] if kind in a)


# --- lava-job -------------------------------------------------------------------------------------

def test_a_qemu_job_boots_the_kernel_with_cleanroom_s_exit_and_monitors() -> None:
    job = job_of("--device-type", "qemu", "--cmdline", "suite=quick")
    image = action(job, "deploy")["images"]["kernel"]
    assert image["url"] == (REPO / "build" / "cleanroom.elf").as_uri()
    assert image["image_arg"] == '-kernel {kernel} -append "suite=quick exit=qemu"'
    assert job["context"]["arch"] == "i386" and job["context"]["no_kvm"] is True  # the default row: TCG
    assert job["context"]["cpu"] == "qemu32"  # the row's CPU (QEMU's default), not LAVA's core2duo
    assert "-device isa-debug-exit,iobase=0xf4,iosize=0x04" in job["context"]["extra_options"]
    assert action(job, "boot")["method"] == "qemu"
    assert action(job, "test")["monitors"] == lavajob.monitors()
    assert "notify" not in job


def test_a_pc_job_loads_the_kernel_with_ipxe_from_the_dispatcher() -> None:
    job = job_of("--device-type", "x86", "--boot", "ipxe", "--kernel-url", "http://lab/cleanroom.elf")
    assert job["device_type"] == "x86"
    assert action(job, "deploy") == {"to": "tftp", "timeout": {"minutes": 10},
                                     "kernel": {"url": "http://lab/cleanroom.elf"}}
    assert action(job, "boot")["commands"] == ["dhcp", "kernel tftp://{SERVER_IP}/{KERNEL} exit=halt", "boot"]


@pytest.mark.parametrize("argv, check", [
    (["--device-type", "qemu", "--emulator", "kvm", "--cmdline", "bench=tsc"],
     lambda j: j["context"]["no_kvm"] is False and j["context"]["cpu"] == "host"),  # LAVA adds -enable-kvm
    (["--device-type", "qemu", "--emulator", "qemu-icount"],
     lambda j: "-icount shift=0,sleep=off" in j["context"]["extra_options"]
     and "-rtc base=2000-01-01T00:00:00,clock=vm" in j["context"]["extra_options"]),
    (["--device-type", "qemu", "--iso-url", "https://lab/cleanroom.iso"],  # GRUB's menu picks the command line
     lambda j: action(j, "deploy")["images"] == {"iso": {"url": "https://lab/cleanroom.iso",
                                                         "image_arg": "-cdrom {iso} -boot d"}}
     and j["job_name"] == "cleanroom (the ISO's default entry) on qemu (qemu)"
     and j["metadata"]["cleanroom.cmdline"] == "the ISO's default entry" and "exit=qemu" not in yaml.dump(j)),
    (["--device-type", "x86", "--boot", "grub", "--kernel-url", "http://lab/k.elf", "--cmdline", "suite=paper",
      "--tag", "pc-07", "--lava-device-type", "x86-grub"],
     lambda j: "multiboot (tftp,{SERVER_IP})/{KERNEL} suite=paper exit=halt" in action(j, "boot")["commands"]
     and j["tags"] == ["pc-07"] and j["device_type"] == "x86-grub"),
    (["--device-type", "x86", "--boot", "grub", "--iso-url", "http://lab/c.iso", "--cmdline", "suite=selftest"],
     lambda j: action(j, "boot")["commands"][1:3] == ["loopback cleanroom (tftp,{SERVER_IP})/{KERNEL}",
                                                       "multiboot (cleanroom)/boot/cleanroom.elf suite=selftest "
                                                       "exit=halt"]),
    (["--device-type", "qemu", "--notify", "https://results.lab/hook", "--job-name", "pc-lab run 1"],
     lambda j: j["job_name"] == "pc-lab run 1" and j["notify"]["callbacks"][0]["url"] == "https://results.lab/hook"),
])
def test_every_kind_of_job_passes_lava_s_schema(argv: list[str], check: Any) -> None:
    assert check(job_of(*argv))


def test_the_timeouts_follow_the_duration_estimate(tmp_path: Path) -> None:
    """suite=paper takes hours in QEMU and seconds on a PC: the job waits accordingly, and for the
    longest case between two records."""
    qemu = job_of("--device-type", "qemu", "--cmdline", "suite=paper")
    pc = job_of("--device-type", "x86", "--boot", "ipxe", "--kernel-url", "http://l/k", "--cmdline", "suite=paper")
    quick = job_of("--device-type", "qemu", "--cmdline", "suite=quick")
    minutes = lambda j: action(j, "test")["timeout"]["minutes"]  # noqa: E731
    assert minutes(qemu) > 24 * 60 > minutes(pc) > minutes(quick)
    assert (qemu["timeouts"]["connections"]["lava-test-monitor"]["minutes"]
            > quick["timeouts"]["connections"]["lava-test-monitor"]["minutes"])
    assert qemu["timeouts"]["job"]["minutes"] > minutes(qemu)
    out = tmp_path / "job.yaml"
    status, text, err = lava_job("--device-type", "qemu", "--out", str(out))
    assert status == 0 and text == f"wrote {out}\n"
    assert yaml.safe_load(out.read_text())["device_type"] == "qemu"


def test_an_unknown_device_type_is_refused_with_the_accepted_ones(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        lava_job("--device-type", "arm")
    assert exit_.value.code == results.EXIT_SETUP
    assert "invalid choice: 'arm' (choose from 'qemu', 'x86')" in capsys.readouterr().err


@pytest.mark.parametrize("argv, said", [
    (["--device-type", "x86", "--kernel-url", "http://l/k"], "--device-type x86 needs --boot: choose one of ipxe, grub"),
    (["--device-type", "x86", "--boot", "grub"], "--device-type x86 needs --kernel-url or --iso-url"),
    (["--device-type", "x86", "--boot", "ipxe", "--iso-url", "http://l/c.iso"], "an ISO needs --boot grub"),
    (["--device-type", "qemu", "--boot", "ipxe"], "--boot applies to --device-type x86"),
    (["--device-type", "qemu", "--iso-url", "http://l/c.iso", "--cmdline", "suite=quick"],
     "--cmdline with --iso-url: an ISO boots its own menu's default entry"),
    (["--device-type", "qemu", "--emulator", "bochs"], "--emulator 'bochs': LAVA's qemu device type can stand for "
                                                       "qemu, qemu-icount, kvm"),
    (["--device-type", "x86", "--boot", "ipxe", "--kernel-url", "http://l/k", "--emulator", "kvm"],
     "--emulator applies to --device-type qemu"),
    (["--device-type", "qemu", "--cmdline", 'suite=quick bench="tsc"'], "--cmdline token 'bench=\"tsc\"'"),
    (["--device-type", "qemu", "--kernel-url", "ftp://lab/k.elf"],
     "--kernel-url 'ftp://lab/k.elf': LAVA downloads http://..., https://..., file://..."),
])
def test_a_job_that_cannot_be_written_is_refused_by_name(argv: list[str], said: str) -> None:
    status, out, err = lava_job(*argv)
    assert status == results.EXIT_SETUP and out == ""
    assert said in err


def test_lava_s_schema_refuses_what_it_should() -> None:
    """The check is LAVA's, not a formality: a job without visibility or with an unknown boot method fails."""
    lava_schema()
    good = lava_job("--device-type", "qemu")[1]
    assert lavajob.validate(good) is None
    assert "visibility" in str(lavajob.validate(good.replace("visibility: public\n", "")))
    assert lavajob.validate(good.replace("method: qemu", "method: qemu-bogus")) is not None


# --- the monitors, as LAVA runs them ---------------------------------------------------------------

def _of(cases: list[dict[str, Any]], suite: str) -> list[dict[str, Any]]:
    return [c for c in cases if c["definition"] == suite]


@pytest.mark.parametrize("name", QUICK_LOGS)
def test_every_result_of_a_quick_log_is_one_test_case_with_its_median(name: str) -> None:
    log = REPO / "docs" / "data" / name
    recs = [r for r in parse_log(log.read_bytes()).records if r["t"] == "result"]
    cases = run_monitors(log, lavajob.monitors())
    found = _of(cases, lavajob.MONITOR_RESULTS)
    assert [c["measurement"] for c in found] == [float(r["med"]) for r in recs]
    assert [c["units"] for c in found] == [r["unit"] for r in recs]
    assert [c["extra"]["test_case_id"].split('"')[0] for c in found] == [r["bench"] for r in recs]
    assert len({c["case"] for c in found}) == len(found)  # one name per case: bench, case and params
    assert _of(cases, lavajob.MONITOR_SELFTEST) == []  # a quick run has no self-tests


def test_every_self_test_is_a_pass_or_fail_and_the_results_follow(tmp_path: Path) -> None:
    """A run of self-tests and benchmarks (the kernel writes case_no after params): each test record
    one case, pass or fail as it says, then each result."""
    lines = SELFTEST_LOG.read_bytes().splitlines(keepends=True)
    recs = parse_log(SELFTEST_LOG.read_bytes()).records
    tests = [r for r in recs if r["t"] == "test"]
    # one self-test failed: the same record with ok false, framed as the kernel frames it
    failed = dict(tests[3], ok=False)
    i = next(k for k, line in enumerate(lines) if f'"seq":{failed["seq"]},'.encode() in line)
    lines[i] = encode_record(failed)
    log = tmp_path / "serial.log"
    log.write_bytes(b"".join(lines))
    cases = run_monitors(log, lavajob.monitors())
    selftests = _of(cases, lavajob.MONITOR_SELFTEST)
    assert [c["case"] for c in selftests] == [t["name"] for t in tests]
    assert [c["result"] for c in selftests] == ["fail" if t["seq"] == failed["seq"] else "pass" for t in tests]
    measured = [r for r in recs if r["t"] == "result"]
    found = _of(cases, lavajob.MONITOR_RESULTS)
    assert [c["measurement"] for c in found] == [float(r["med"]) for r in measured]
    assert not any("case_no" in c["case"] for c in found)  # stable names: no per-boot numbering


def lava_results(log: Path) -> list[dict[str, Any]]:
    """The results entries of a LAVA log, as the monitors logged them (level left out)."""
    out = []
    for line in log.read_text().splitlines():
        entry = yaml.safe_load(line[2:])
        if entry["lvl"] == "results":
            msg = {k: v for k, v in entry["msg"].items() if k != "level"}
            if "measurement" in msg:
                msg["measurement"] = float(msg["measurement"])
            out.append(msg)
    return out


@pytest.mark.parametrize("maxread", [4092, 2000, 7])
def test_the_monitors_give_what_lava_s_own_code_gave(maxread: int) -> None:
    """LAVA 2023.01's TestMonitorAction made these cases of this log (tests/fixtures/lava); the monitor
    here makes the same, whatever pexpect reads at a time."""
    expected = lava_results(LAVA_LOG)
    assert len(expected) == 56
    assert run_monitors(SELFTEST_LOG, lavajob.monitors(), maxread) == expected


# --- lava-fetch -------------------------------------------------------------------------------------

def fetch(tmp_path: Path, *argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = cli.main(["lava-fetch", *argv], out, err)
    return status, out.getvalue(), err.getvalue()


def doc_of(path: Path) -> dict[str, Any]:
    doc = json.loads(path.read_text())
    return {k: v for k, v in doc.items() if k not in ("run", "source")}


def test_lava_fetch_gives_the_results_json_parse_gives_of_the_raw_log(tmp_path: Path) -> None:
    status, out, err = fetch(tmp_path, str(LAVA_LOG), "--out", str(tmp_path / "f"), "--device", "pc-07")
    assert status == results.EXIT_OK, err
    raw = tmp_path / "raw" / "serial.log"
    raw.parent.mkdir()
    raw.write_bytes(SELFTEST_LOG.read_bytes())
    assert cli.main(["parse", str(raw)], io.StringIO(), io.StringIO()) == results.EXIT_OK
    assert doc_of(tmp_path / "f" / "results.json") == doc_of(tmp_path / "raw" / "results.json")
    assert (tmp_path / "f" / "results.csv").read_text() == (tmp_path / "raw" / "results.csv").read_text()
    run = json.loads((tmp_path / "f" / "results.json").read_text())["run"]
    assert run["device"] == "pc-07" and run["emulator"] == "lava"
    assert run["machine"] == 'pc-07: "QEMU Virtual CPU version 2.5+" (GenuineIntel family 6 model 6), platform qemu'
    assert run["test_cases"] == {"cleanroom-selftest": {"pass": 44}, "cleanroom": {"pass": 12}}
    assert "LAVA's test cases: 12 in cleanroom (12 result records), 44 in cleanroom-selftest (44 test records)" in out


def test_lava_fetch_reads_lavacli_s_own_dump_of_the_log(tmp_path: Path) -> None:
    """`lavacli jobs logs --raw` loads the server's log and dumps each entry again (ruamel's safe dumper,
    flow style, every scalar double-quoted, one line each): the same serial.log comes back."""
    redumped = tmp_path / "lavacli.yaml"
    with redumped.open("w") as f:
        for line in LAVA_LOG.read_text().splitlines():
            f.write("- " + yaml.safe_dump(yaml.safe_load(line[2:]), default_flow_style=True, default_style='"',
                                         width=10**6))
    assert redumped.read_text() != LAVA_LOG.read_text()
    for log, out in ((LAVA_LOG, "a"), (redumped, "b")):
        assert fetch(tmp_path, str(log), "--out", str(tmp_path / out))[0] == results.EXIT_OK
    assert (tmp_path / "b" / "serial.log").read_bytes() == (tmp_path / "a" / "serial.log").read_bytes()
    assert doc_of(tmp_path / "b" / "results.json") == doc_of(tmp_path / "a" / "results.json")


def fake_lavacli(tmp_path: Path, log: Path, device: str = "pc-07") -> Path:
    """A stand-in for lavacli 3.1.0: `jobs logs --raw ID` prints the log, `jobs show --yaml ID` the job."""
    prog = tmp_path / "lavacli"
    calls = tmp_path / "calls"
    prog.write_text(f"""#!/bin/sh
echo "$*" >> {calls}
case "$*" in
  "-i lab jobs logs --raw 1234") cat {log} ;;
  "-i lab jobs show --yaml 1234") printf 'id: 1234\\ndevice: {device}\\ndevice_type: x86\\n' ;;
  *) echo "Unable to call 'jobs': job not found" >&2; exit 1 ;;
esac
""")
    prog.chmod(prog.stat().st_mode | stat.S_IXUSR)
    return prog


def test_lava_fetch_asks_lavacli_for_a_job_s_log_and_device(tmp_path: Path) -> None:
    prog = fake_lavacli(tmp_path, LAVA_LOG)
    status, out, err = fetch(tmp_path, "1234", "-i", "lab", "--lavacli", str(prog), "--out", str(tmp_path / "f"))
    assert status == results.EXIT_OK, err
    assert (tmp_path / "calls").read_text() == "-i lab jobs logs --raw 1234\n-i lab jobs show --yaml 1234\n"
    run = json.loads((tmp_path / "f" / "results.json").read_text())["run"]
    assert (run["job"], run["device"], run["device_type"]) == ("1234", "pc-07", "x86")
    assert out.splitlines()[-4].startswith("LAVA job 1234: ")
    status, out, err = fetch(tmp_path, "999", "-i", "lab", "--lavacli", str(prog))
    assert status == results.EXIT_SETUP
    assert "-i lab jobs logs --raw 999` failed (exit 1): Unable to call 'jobs': job not found" in err


@pytest.mark.parametrize("source, said", [
    ("no-such-file.yaml", "'no-such-file.yaml': neither a file nor a LAVA job id"),
    (str(SELFTEST_LOG), "not a LAVA job log: no line is a log entry {dt, lvl, msg} (line 1: 'cleanroom 0.1.0"),
])
def test_lava_fetch_refuses_what_is_no_lava_log(tmp_path: Path, source: str, said: str) -> None:
    status, out, err = fetch(tmp_path, source, "--out", str(tmp_path / "f"))
    assert status == results.EXIT_SETUP and said in err
    assert not (tmp_path / "f").exists()


def test_lava_fetch_says_how_to_get_lavacli(tmp_path: Path) -> None:
    status, _, err = fetch(tmp_path, "1234", "--lavacli", str(tmp_path / "none"))
    assert status == results.EXIT_SETUP
    assert "not found: install lavacli (pip install lavacli==3.1.0)" in err


def test_the_emulators_lava_can_stand_for_are_the_kernel_loaders() -> None:
    assert [e.name for e in emulators.EMULATORS if e.loads_kernel] == ["qemu", "qemu-icount", "kvm"]


def test_lava_fetch_keeps_going_past_lines_that_are_no_log_entry(tmp_path: Path) -> None:
    """A log cut and pasted with a line of something else: the entries are still read, the line named."""
    log = tmp_path / "job.yaml"
    log.write_text("lavacli: polling\n" + LAVA_LOG.read_text())
    status, out, err = fetch(tmp_path, str(log), "--out", str(tmp_path / "f"))
    assert status == results.EXIT_OK, err
    assert "319 log entries; 1 other line(s), e.g. 'lavacli: polling'" in out
    run = json.loads((tmp_path / "f" / "results.json").read_text())["run"]
    assert run["log_bad_lines"] == 1 and run["wall_seconds"] > 0


# --- lava-fetch of what LAVA's own dispatcher wrote --------------------------------------------------

# lava-run's standard error (make test-lab's way: lava-job --device-type qemu --emulator qemu-icount --cmdline
# "bench=tsc runs=2", lava-device, tools/lab/lava-run) of a run whose done record came at level feedback: the
# monitors stopped at done's start and the finalize step's read-feedback logged the rest of the line
LAVA_RUN_LOG = REPO / "tests" / "fixtures" / "lava" / "lava-run-qemu-icount-tsc.log"
DONE = '@cr1 {\\"t\\":\\"done\\",'  # as LAVA's ShellLogger writes it


def log_entries(path: Path) -> list[dict[str, Any]]:
    return [yaml.safe_load(line) for line in path.read_text().splitlines()]


def write_entries(path: Path, entries: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(e) + "\n" for e in entries))
    return path


def done_entry(entries: list[dict[str, Any]]) -> int:
    return next(i for i, e in enumerate(entries) if isinstance(e["msg"], str) and e["msg"].startswith(DONE))


def test_lava_fetch_keeps_the_done_record_lava_logged_as_feedback(tmp_path: Path) -> None:
    entries = log_entries(LAVA_RUN_LOG)
    assert entries[done_entry(entries)]["lvl"] == "feedback"  # what this log is for
    status, out, err = fetch(tmp_path, str(LAVA_RUN_LOG), "--out", str(tmp_path / "f"), "--device", "qemu01")
    assert status == results.EXIT_OK, err
    assert "records: 30 good, 0 corrupt, 0 missing, complete: yes" in out
    doc = json.loads((tmp_path / "f" / "results.json").read_text())
    assert doc["complete"] is True and doc["records"][-1]["t"] == "done"
    assert doc["run"]["test_cases"]["cleanroom"] == {"pass": doc["run"]["records"]["result"]}
    # LAVA's poweroff (pexpect's log of it, then the terminal's echo) is not the device's
    assert (tmp_path / "f" / "serial.log").read_text().splitlines()[-1].startswith('@cr1 {"t":"done",')


def test_the_console_is_the_same_whichever_level_done_came_at(tmp_path: Path) -> None:
    """The race: in other runs the monitor's last read held done's whole line and LAVA logged it as target; the
    finalize step logs feedback with the namespace, the QEMU session's close without: one console each way."""
    entries = log_entries(LAVA_RUN_LOG)
    i = done_entry(entries)
    as_target = [dict(e, lvl="target") if k == i else e for k, e in enumerate(entries)]
    as_target[i].pop("ns", None)
    no_ns = [{k: v for k, v in e.items() if k != "ns"} for e in entries]
    serials = []
    for name, variant in (("feedback", entries), ("target", as_target), ("no-ns", no_ns)):
        assert fetch(tmp_path, str(write_entries(tmp_path / f"{name}.log", variant)),
                     "--out", str(tmp_path / name))[0] == results.EXIT_OK
        serials.append((tmp_path / name / "serial.log").read_bytes())
    assert serials[0] == serials[1] == serials[2]


def test_feedback_of_another_namespace_is_another_device_s(tmp_path: Path) -> None:
    entries = log_entries(LAVA_RUN_LOG)
    i = done_entry(entries)
    other = dict(entries[i], ns="host")  # a second namespace's console, read by the finalize step
    log = write_entries(tmp_path / "job.log", entries[:i] + [other] + entries[i:])
    assert fetch(tmp_path, str(log), "--out", str(tmp_path / "f"))[0] == results.EXIT_OK
    assert (tmp_path / "f" / "serial.log").read_text().count('"t":"done"') == 1


def test_a_line_lava_sent_into_is_reported_damaged_not_mended(tmp_path: Path) -> None:
    """The one way LAVA splits a device's line: it sends while the line has only partly arrived. pexpect logs
    what was sent after the line's start (one target entry), the rest of the line comes as the next entry."""
    entries = log_entries(LAVA_RUN_LOG)
    i = done_entry(entries)
    done = entries[i]["msg"]
    cut = done.index("records")
    drop = {k for k, e in enumerate(entries) if e["lvl"] == "input" or e["msg"] == "poweroff"}
    kept = [e for k, e in enumerate(entries) if k != i and k not in drop]
    j = next(k for k, e in enumerate(kept) if e["dt"] > entries[i]["dt"])
    split = [{"dt": entries[i]["dt"], "lvl": "input", "msg": "poweroff\n"},
             {"dt": entries[i]["dt"], "lvl": "target", "msg": done[:cut] + "poweroff"},
             {"dt": entries[i]["dt"], "lvl": "feedback", "msg": "poweroff"},
             {"dt": entries[i]["dt"], "lvl": "feedback", "msg": done[cut:]}]
    log = write_entries(tmp_path / "job.log", kept[:j] + split + kept[j:])
    status, out, _ = fetch(tmp_path, str(log), "--out", str(tmp_path / "f"))
    assert status != results.EXIT_OK
    assert "1 corrupt" in out and "complete: no" in out


# --- lava-device ------------------------------------------------------------------------------------

def lava_device(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = cli.main(["lava-device", *argv], out, err)
    return status, out.getvalue(), err.getvalue()


def small_templates(tmp_path: Path) -> Path:
    """Device-type templates shaped as LAVA's are (a type extends base.jinja2 and fills its block; the command
    comes from the job's arch), small enough to read: a stand-in for lava-server's, which make test-lab renders."""
    d = tmp_path / "device-types"
    d.mkdir()
    (d / "base.jinja2").write_text("constants: {}\nparameters: {}\ntimeouts: {actions: {}, connections: {}}\n"
                                   "actions:\n  deploy:\n    methods: {tmpfs: }\n  boot:\n    connections: "
                                   "{serial: }\n    methods:\n{% block body %}{% endblock %}\n")
    (d / "qemu.jinja2").write_text("{% extends 'base.jinja2' %}\n{% block body %}\n      qemu:\n"
                                   "        command: qemu-system-{{ arch }}\n{% if cpu %}\n"
                                   "        cpu: {{ cpu }}\n{% endif %}\n{% endblock %}\n")
    return d


def test_lava_device_renders_the_type_with_the_job_s_context(tmp_path: Path) -> None:
    job = tmp_path / "job.yaml"
    assert lava_job("--device-type", "qemu", "--emulator", "qemu-icount", "--out", str(job))[0] == 0
    status, out, err = lava_device("--job", str(job), "--templates", str(small_templates(tmp_path)))
    assert status == 0, err
    methods = yaml.safe_load(out)["actions"]["boot"]["methods"]
    assert methods == {"qemu": {"command": "qemu-system-i386", "cpu": "qemu32"}}
    # what lavacli's --context passes a server, which loads it as YAML and renders with it
    status, context, _ = lava_device("--job", str(job), "--context")
    assert status == 0 and len(context.splitlines()) == 1
    assert yaml.safe_load(context) == yaml.safe_load(job.read_text())["context"]


def test_lava_device_renders_a_device_s_own_dictionary(tmp_path: Path) -> None:
    job = tmp_path / "job.yaml"
    assert lava_job("--device-type", "qemu", "--out", str(job))[0] == 0
    pc = tmp_path / "qemu07.jinja2"
    pc.write_text("{% set cpu = 'Haswell' %}\n{% extends 'qemu.jinja2' %}\n")
    status, out, err = lava_device("--job", str(job), "--templates", str(small_templates(tmp_path)),
                                   "--dictionary", str(pc), "--out", str(tmp_path / "qemu07.yaml"))
    assert status == 0 and out == f"wrote {tmp_path / 'qemu07.yaml'}\n", err
    assert "cpu: Haswell" in (tmp_path / "qemu07.yaml").read_text()


@pytest.mark.parametrize("job_text, argv, said", [
    ("device_type: qemu\n", ["--device-type", "qemuu"],
     "device type 'qemuu': no qemuu.jinja2 in {templates}; 2 device types there, e.g. qemu"),
    ("actions: []\n", [], "the job names no device_type"),
    ("device_type: qemu\ncontext: [arch]\n", [], "the job's context is list, not a mapping of variables"),
    ("device_type: qemu\n", ["--templates", "{templates}/none"], "--templates {templates}/none: not a directory"),
])
def test_lava_device_refuses_by_name(tmp_path: Path, job_text: str, argv: list[str], said: str) -> None:
    templates = small_templates(tmp_path)
    job = tmp_path / "job.yaml"
    job.write_text(job_text)
    args = [a.format(templates=templates) for a in argv]
    if "--templates" not in args:
        args += ["--templates", str(templates)]
    status, out, err = lava_device("--job", str(job), *args)
    assert status == results.EXIT_SETUP and out == ""
    assert said.format(templates=templates) in err


def test_lava_s_device_schema_checks_what_is_rendered(tmp_path: Path) -> None:
    templates = small_templates(tmp_path)
    base = templates / "base.jinja2"
    base.write_text(base.read_text().replace("constants: {}\n", ""))
    job = tmp_path / "job.yaml"
    job.write_text("device_type: qemu\ncontext: {arch: i386}\n")
    status, out, err = lava_device("--job", str(job), "--templates", str(templates))
    assert status == results.EXIT_SETUP and out == ""
    assert "LAVA's device schema refuses the configuration: required key not provided @ data['constants']" in err


def test_a_job_carries_the_users_code_as_a_module(tmp_path: Path) -> None:
    """qemu: LAVA downloads it beside the kernel and QEMU gets it by -initrd; x86: the dispatcher serves it as the
    ramdisk, which iPXE's and GRUB's commands load as the kernel's module. The job is LAVA's schema's (lava-job
    checks it); test_lab.py runs the qemu one through LAVA's dispatcher."""
    job = tmp_path / "asm.yaml"
    rc, _out, err = tool_main("lava-job", "--device-type", "qemu", "--emulator", "qemu-icount", "--asm", "nop",
                              "--out", str(job))
    assert rc == 0, err
    doc = yaml.safe_load(job.read_text())
    images = action(doc, "deploy")["images"]
    assert images["user"] == {"url": (tmp_path / "asm.user.bin").as_uri(), "image_arg": "-initrd {user}"}
    assert '-append "bench=asm exit=qemu"' in images["kernel"]["image_arg"]
    assert (tmp_path / "asm.user.bin").read_bytes()[:4] == b"CRUC"
    for boot, loads in (("ipxe", "module tftp://{SERVER_IP}/{RAMDISK}"), ("grub", "module (tftp,{SERVER_IP})/{RAMDISK}")):
        rc, _out, err = tool_main("lava-job", "--device-type", "x86", "--boot", boot, "--kernel-url", "http://lab/k.elf",
                                  "--lock-file", str(REPO / "tests" / "fixtures" / "usercode" / "ticket.c"),
                                  "--module-url", "http://lab/ticket.bin", "--out", str(tmp_path / f"{boot}.yaml"))
        assert rc == 0, err
        doc = yaml.safe_load((tmp_path / f"{boot}.yaml").read_text())
        assert action(doc, "deploy")["ramdisk"]["url"] == "http://lab/ticket.bin"
        assert loads in action(doc, "boot")["commands"] and "bench=locks" in " ".join(action(doc, "boot")["commands"])
    rc, _out, err = tool_main("lava-job", "--device-type", "qemu", "--asm", "nop")
    assert rc == 5 and "needs --out" in err, err
    rc, _out, err = tool_main("lava-job", "--device-type", "qemu", "--asm", "nop", "--switch-file",
                              str(REPO / "tests" / "fixtures" / "usercode" / "jump.asm"), "--out", str(job))
    assert rc == 5 and "one piece of the user's code a job" in err, err
