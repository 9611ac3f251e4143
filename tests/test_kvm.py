"""--emulator kvm: QEMU with -accel kvm -cpu host, and what the trust line says of a run under a hypervisor.

The development machine's /dev/kvm is a software hypervisor (kvm_pvm): it traps rdtsc
and refuses CR0.PG with #GP, and QEMU's default -cpu host does not start on it at all.
tests/fixtures/kvm-pvm-tsc-paging.log is `run --emulator kvm --cpu host,-arch-capabilities
--cmdline "bench=tsc paging=both"` there.
"""

from __future__ import annotations

import io
import json
import os
import time
from pathlib import Path
from typing import Any

import pytest
from test_report_summary import unwrap

from cleanroom_host import cli
from cleanroom_host.machines import emulators, machine
from cleanroom_host.records import results, text
from cleanroom_host.records.protocol import encode_record, parse_log
from cleanroom_host.reports import frame as report

REPO = Path(__file__).resolve().parent.parent
KVM_LOG = REPO / "tests" / "fixtures" / "kvm-pvm-tsc-paging.log"
# what `run` recorded of that run besides the records: the row, and the kernel function of the fault's eip
KVM_RUN = {"emulator": "kvm", "fault_in": "paging_enable+0x6b"}


def test_a_trapped_rdtsc_and_a_refused_paging_are_named_in_the_trust_line() -> None:
    recs = parse_log(KVM_LOG.read_bytes()).records
    m = machine.Machine.of(recs, KVM_RUN)
    assert m.kind == "vm" and m.units.name == "TSC ticks"
    assert "a virtual machine (KVMKVMKVM): this CPU, its caches and its TSC at native speed" in m.trust
    fewest = min(r["min"] for r in recs if r.get("case") == "rdtsc")
    assert f"the hypervisor traps rdtsc: a back-to-back pair takes at least {fewest} TSC ticks" in m.trust
    assert ("the kernel took general_protection (vector 13) at eip 0x20a1ab in paging_enable+0x6b: the hypervisor "
            "refused turning paging on (setting CR0.PG); nothing after it was measured") in m.trust


def test_the_trap_is_told_from_a_cpu_s_own_rdtsc() -> None:
    """The same records with a back-to-back pair of 30 ticks (a CPU's): no trap; the fault without the
    function the runner found is still a fault under a hypervisor, said so."""
    recs = [dict(r, min=30, med=30, max=31) if r.get("case") == "rdtsc" else r
            for r in parse_log(KVM_LOG.read_bytes()).records]
    trust = machine.Machine.of(recs, {"emulator": "kvm"}).trust
    assert "traps rdtsc" not in trust
    assert "general_protection (vector 13) at eip 0x20a1ab: under a hypervisor most likely one refusing" in trust


def kvm_with_answers(rdtsc: int | None = None) -> results.ResultSet:
    """The kvm fixture's run as if paging had not faulted: its hello, cpu, tsc and tsc results, then
    tests/fixtures/hosted-workset.log's ctxsw and workset results and a done, framed anew. rdtsc: the
    back-to-back pair's ticks instead of the trapped ones."""
    kvm = [r for r in parse_log(KVM_LOG.read_bytes()).records if r["t"] not in ("fault", "done")]
    if rdtsc is not None:
        kvm = [dict(r, min=rdtsc, med=rdtsc, max=rdtsc) if r.get("case") == "rdtsc" else r for r in kvm]
    more = [r for r in parse_log((REPO / "tests" / "fixtures" / "hosted-workset.log").read_bytes()).records
            if r["t"] == "result" and r["bench"] != "tsc"]
    recs = kvm + more + [{"t": "done", "status": "ok", "records": len(kvm) + len(more), "passed": 0, "failed": 0}]
    log = b"".join(encode_record(dict(r, seq=i)) for i, r in enumerate(recs))
    return results.ResultSet(Path("kvm-answers.log"), results.to_json_doc(parse_log(log), "kvm", {"emulator": "kvm"}))


def answers_heading(rs: results.ResultSet) -> str:
    return next(line for line in unwrap(report.summary(rs)) if line.startswith(("answers", "no answers")))


def test_a_trapped_rdtsc_gives_no_answers() -> None:
    """The machine lines say every figure of a run whose hypervisor traps rdtsc is the cost of its
    emulation: the answers' heading says so too, as plain QEMU's does; an untrapped rdtsc (a CPU's few
    dozen ticks) under the same hypervisor, and a hosted run, still give answers."""
    trapped = kvm_with_answers()
    assert machine.rdtsc_trapped(trapped.records) == 10192
    assert answers_heading(trapped).startswith("no answers: the hypervisor traps rdtsc, so every figure here is "
                                               "the cost of its emulation, not the CPU's; ")
    assert any(line.lstrip().startswith("switch cost") for line in report.summary(trapped))
    assert answers_heading(kvm_with_answers(rdtsc=30)).startswith("answers; ")
    hosted = results.load(REPO / "tests" / "fixtures" / "hosted-workset.log")
    assert answers_heading(hosted).startswith("answers; ")


@pytest.mark.parametrize("log", ["qemu-quick.log", "qemu-icount-quick.log", "hosted-quick.log"])
def test_no_hypervisor_note_where_the_tsc_is_an_emulator_s_or_untrapped(log: str) -> None:
    recs = parse_log((REPO / "docs" / "data" / log).read_bytes()).records
    assert machine.hypervisor_notes(recs, None, machine.classify(recs)) == []


# --- runs with a stand-in QEMU ------------------------------------------------------------------------

@pytest.fixture
def fake_kvm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fixtures_dir: Path) -> dict[str, Path]:
    """A /dev/kvm that opens, a kernel file and the fake emulator playing the recorded kvm log."""
    dev = tmp_path / "kvm"
    dev.write_bytes(b"")
    monkeypatch.setattr(emulators, "KVM_DEVICE", dev)
    kernel = tmp_path / "cleanroom.elf"
    kernel.write_bytes(b"\x7fELF fake")
    monkeypatch.setenv("FAKE_LOG", str(KVM_LOG))
    monkeypatch.setenv("FAKE_INFO", str(tmp_path / "info.json"))
    return {"kernel": kernel, "fake": fixtures_dir / "fake_emulator.py", "info": tmp_path / "info.json"}


def run_kvm(fake: dict[str, Path], out: Path, *argv: str) -> tuple[int, str, str]:
    o, e = io.StringIO(), io.StringIO()
    status = cli.main(["run", "--emulator", "kvm", "--emulator-binary", str(fake["fake"]), "--kernel",
                       str(fake["kernel"]), "--out", str(out), "--quiet", *argv], o, e)
    return status, o.getvalue(), e.getvalue()


def test_kvm_runs_qemu_with_kvm_on_the_host_s_cpu(fake_kvm: dict[str, Path], tmp_path: Path) -> None:
    status, _, err = run_kvm(fake_kvm, tmp_path / "r", "--cmdline", "bench=tsc")
    assert status == results.EXIT_FAULT, err  # the recorded run: paging refused
    argv = json.loads(fake_kvm["info"].read_text())["argv"]
    assert argv[argv.index("-accel"):][:4] == ["-accel", "kvm", "-cpu", "host"]
    assert "the hypervisor traps rdtsc" in err and "general_protection (vector 13)" in err
    assert max(len(line) for line in err.splitlines()) <= text.WIDTH, err  # the notes at the report's width
    run_kvm(fake_kvm, tmp_path / "r2", "--cmdline", "bench=tsc", "--cpu", "host,-arch-capabilities")
    argv = json.loads(fake_kvm["info"].read_text())["argv"]
    assert argv.count("-cpu") == 1 and argv[argv.index("-cpu") + 1] == "host,-arch-capabilities"
    run_kvm(fake_kvm, tmp_path / "r3", "--cmdline", "bench=tsc", "--cpus", "2")  # the CPUs are the host's too
    argv = json.loads(fake_kvm["info"].read_text())["argv"]
    assert argv[argv.index("-smp") + 1] == "2" and argv[argv.index("-append") + 1] == "bench=tsc cpus=2 exit=auto"


def test_a_guest_kvm_stopped_ends_the_run_on_qemu_s_words_before_the_silence_limit(
        fake_kvm: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """KVM's "internal error" leaves QEMU running and the guest stopped for good: the run ends when QEMU
    says so, not after the silence limit, and says what QEMU said. A liveness test: bounded by the silence
    limit alone (the fake QEMU stays silent for longer), never by how fast this machine is."""
    silence = 50
    monkeypatch.setenv("FAKE_LINES", "12")  # the banner and 11 records
    monkeypatch.setenv("FAKE_STDERR", "KVM internal error. Suberror: 1\nextra data[0]: 0x1\nemulation failure\n"
                                      "EAX=0023de14 EBX=00000000\n")
    monkeypatch.setenv("FAKE_HANG", str(silence + 10))
    start = time.monotonic()
    status, _, err = run_kvm(fake_kvm, tmp_path / "r", "--silence", str(silence))
    assert time.monotonic() - start < silence, "the run waited for its silence limit, not for QEMU's words"
    assert status == results.EXIT_DAMAGED
    assert "kvm stopped the guest (KVM internal error. Suberror: 1); 11 records received; it said:" in err
    assert "emulation failure" in err and "hint: KVM could not emulate an instruction of the kernel" in err
    run = json.loads((tmp_path / "r" / "results.json").read_text())["run"]
    assert run["emulator_error"] == "KVM internal error. Suberror: 1" and not run["hung"]
    trust = machine.Machine.of(parse_log((tmp_path / "r" / "serial.log").read_bytes()).records, run).trust
    assert "the hypervisor stopped the guest (KVM internal error. Suberror: 1)" in trust


def test_a_kvm_that_cannot_give_the_host_s_msr_gets_a_hint(fake_kvm: dict[str, Path], tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_LINES", "0")
    monkeypatch.setenv("FAKE_STDERR", "qemu-system-i386: error: failed to set MSR 0x10a to 0x69\n")
    monkeypatch.setenv("FAKE_EXIT", "134")
    status, _, err = run_kvm(fake_kvm, tmp_path / "r")
    assert status == results.EXIT_DAMAGED
    assert "emulator exited with status 134 before a done record" in err
    assert "hint: QEMU could not give the guest the host's IA32_ARCH_CAPABILITIES MSR" in err
    assert "try --cpu host,-arch-capabilities" in err


def test_no_kvm_is_said_before_anything_starts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(emulators, "KVM_DEVICE", tmp_path / "no-kvm")
    err = io.StringIO()
    status = cli.main(["run", "--emulator", "kvm", "--out", str(tmp_path / "r")], io.StringIO(), err)
    assert status == results.EXIT_SETUP
    assert f"--emulator kvm needs {tmp_path / 'no-kvm'}, which does not exist: hardware virtualisation" in err.getvalue()


# --- this machine's KVM -----------------------------------------------------------------------------------

def usable_kvm() -> str | None:
    """Why this machine cannot run --emulator kvm (None: it can try): it lacks /dev/kvm."""
    if not os.access(emulators.KVM_DEVICE, os.R_OK | os.W_OK):
        return f"{emulators.KVM_DEVICE} is missing or not readable and writable here"
    return None


def run_here(out: Path, *argv: str) -> tuple[int, str, dict[str, Any] | None]:
    err = io.StringIO()
    status = cli.main(["run", "--emulator", "kvm", "--cmdline", "bench=tsc paging=both runs=3 warmup=0", "--out",
                       str(out), "--quiet", *argv], io.StringIO(), err)
    doc = json.loads((out / "results.json").read_text()) if (out / "results.json").is_file() else None
    return status, err.getvalue(), doc


@pytest.mark.early
@pytest.mark.skipif(usable_kvm() is not None, reason=str(usable_kvm()))
@pytest.mark.usefixtures("kernel_elf")
def test_kvm_on_this_machine_ends_with_what_its_hypervisor_did(tmp_path: Path) -> None:
    """On a hardware KVM the tsc benchmark runs in both paging modes, the rdtsc untrapped; under a
    hypervisor that traps rdtsc or refuses paging, the run ends (never hangs) and says which, by name."""
    status, err, doc = run_here(tmp_path / "host")
    if "failed to set MSR 0x10a" in err:  # nested or software KVM: the hint names the way round it
        assert "try --cpu host,-arch-capabilities" in err
        status, err, doc = run_here(tmp_path / "noarch", "--cpu", "host,-arch-capabilities")
    if doc is None or not doc["records"]:
        pytest.skip(f"{emulators.KVM_DEVICE} here runs no kernel at all (no usable KVM): "
                    f"{err.strip().splitlines()[-1:]}")
    recs, run = doc["records"], doc["run"]
    trust = machine.Machine.of(recs, run).trust
    trapped = machine.rdtsc_trapped(recs)
    assert ("the hypervisor traps rdtsc" in trust) == (trapped is not None)
    if status == results.EXIT_FAULT:  # the hypervisor refused something: named, and where
        assert run.get("fault_in"), "the fault's eip names no kernel function"
        assert "the kernel took" in trust and run["fault_in"] in trust
        assert "the kernel took" in err
    else:
        assert status == results.EXIT_OK, err
        assert {r["params"]["paging"] for r in recs if r["t"] == "result"} == {"off", "on"}
