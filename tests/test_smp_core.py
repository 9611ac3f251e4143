"""More than one CPU (issue 20), the shared core: cpus=N starts the other CPUs from the MADT
with INIT-SIPI-SIPI, every CPU runs what the boot CPU posts, paging follows the boot CPU's,
an IPI arrives, no increment is lost; what does not exist is a named error, never a hang; an
exception on another CPU is the boot CPU's fault record naming that CPU. Under QEMU TCG the
vCPUs are host threads: these tests check invariants, never timings. The default (cpus=1)
starts nothing (the existing tests show its records unchanged)."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest

from booting import KERNEL, boot, done, halted_cpus, human_monitor, of_type, tool_proc

needs_kernel = pytest.mark.usefixtures("kernel_elf")
SMP_TESTS = {"smp_every_cpu_answers", "smp_no_lost_increment", "smp_paging_follows", "smp_ipi"}


def smp_record(res: dict) -> dict:
    [s] = of_type(res, "smp")
    return s


@needs_kernel
# single-threaded TCG runs the vCPUs in turn (a CPU spinning without pause keeps the host thread for
# a time slice): two CPUs there, four under multi-threaded TCG (test_smp_share.py runs four single)
@pytest.mark.parametrize("cpus,accel", [(2, "multi"), (4, "multi"), (2, "single")])
def test_every_cpu_starts_and_passes_the_smp_self_tests(tmp_path: Path, cpus: int, accel: str) -> None:
    rc, res = boot(tmp_path, "qemu", "suite=selftest", "--cpus", str(cpus),
                   "--qemu-arg=-accel", f"--qemu-arg=tcg,thread={accel}")
    assert rc == 0 and done(res)["status"] == "ok"
    s = smp_record(res)
    assert s["wanted"] == cpus and s["found"] == cpus and s["used"] == cpus
    assert s["used_ids"] == list(range(cpus)) and s["failed_ids"] == [] and s["why"] is None
    assert s["apic"] == "xapic" and 0 < s["trampoline"] < 0x100000 and s["trampoline"] % 4096 == 0
    tests = {t["name"]: t for t in of_type(res, "test")}
    assert SMP_TESTS <= tests.keys() and all(tests[n]["ok"] for n in SMP_TESTS), \
        [tests[n]["detail"] for n in SMP_TESTS if n in tests]
    assert f"{cpus} CPUs, {cpus} ran" in tests["smp_every_cpu_answers"]["detail"]


@needs_kernel
def test_more_cpus_than_exist_is_a_named_error_not_a_hang(tmp_path: Path) -> None:
    rc, res = boot(tmp_path, "qemu", "bench=tsc runs=2 cpus=8", "--qemu-arg=-smp", "--qemu-arg=2")
    assert rc == 0 and done(res)["status"] == "ok"  # the run goes on with the CPUs there are
    [err] = [e for e in of_type(res, "error") if e["code"] == "cpus"]
    assert "cpus=8" in err["msg"] and "lists 2 CPUs" in err["msg"] and "running on 2" in err["msg"]
    s = smp_record(res)
    assert s["used"] == 2 and s["why"] == "fewer CPUs than cpus= asks for"


@needs_kernel
def test_one_cpu_by_default_and_no_smp_record(tmp_path: Path) -> None:
    rc, res = boot(tmp_path, "qemu", "suite=selftest", "--qemu-arg=-smp", "--qemu-arg=2")
    assert rc == 0 and not of_type(res, "smp")
    assert of_type(res, "config")[0]["cfg"]["cpus"] == 1
    assert not SMP_TESTS & {t["name"] for t in of_type(res, "test")}  # nothing to test with one CPU


@needs_kernel
def test_a_fault_on_another_cpu_names_that_cpu(tmp_path: Path) -> None:
    rc, res = boot(tmp_path, "qemu", "bench=tsc provoke=cpufault", "--cpus", "2")
    [fault] = of_type(res, "fault")
    assert fault["vector"] == 6 and fault["name"] == "invalid_opcode"
    assert fault["cpu"] == 1 and fault["apic_id"] == 1 and fault["bench"] == "provoke"
    assert done(res)["status"] == "fault" and rc != 0
    rc, res = boot(tmp_path / "one", "qemu", "bench=tsc runs=2 provoke=cpufault")
    [skip] = [s for s in of_type(res, "skip") if s["what"] == "provoke=cpufault"]
    assert "second CPU" in skip["why"] and done(res)["status"] == "ok"


@needs_kernel
def test_idle_cpus_halt_until_the_boot_cpu_posts_work(tmp_path: Path) -> None:
    """While the boot CPU runs a one-CPU benchmark the three others are idle: halted, not spinning on their
    mailboxes; then every one of them answers posts again (the self-tests above, the multi-CPU suites).
    Before, an idle vCPU spun and kept a host thread busy."""
    serial, sock = tmp_path / "serial.log", tmp_path / "monitor.sock"
    qemu = subprocess.Popen(["qemu-system-i386", "-nodefaults", "-display", "none", "-m", "128", "-smp", "4",
                             "-serial", f"file:{serial}", "-monitor", f"unix:{sock},server=on,wait=off",
                             "-kernel", str(KERNEL), "-append", "bench=ctxsw cpus=4 runs=100000 warmup=0"],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        with human_monitor(sock, qemu, 60) as conn:
            # the boot CPU in the benchmark (its first result can be far off: runs=100000); no second
            # look at the clock: a vCPU still spinning stays so
            while b'"t":"progress"' not in (serial.read_bytes() if serial.exists() else b""):
                assert qemu.poll() is None, "QEMU ended before the benchmark began"
                time.sleep(0.1)
            cpus = halted_cpus(conn)
            assert b'"t":"done"' not in serial.read_bytes(), "the run ended before the look"
    finally:
        qemu.kill()
        qemu.wait()
    assert cpus == {0: False, 1: True, 2: True, 3: True}, cpus


@pytest.mark.usefixtures("hosted_elf")
def test_the_hosted_build_pins_one_thread_per_cpu(tmp_path: Path) -> None:
    import os
    allowed = sorted(os.sched_getaffinity(0))
    if len(allowed) < 2:
        pytest.skip("needs a second CPU, which this machine lacks (it gives the tests one)")
    rc, res = boot(tmp_path, "hosted", "bench=tsc runs=2", "--cpus", "2")
    assert rc == 0 and res["run"]["host_cpus"] == allowed[-2:]
    s = smp_record(res)
    assert s["used"] == 2 and s["used_ids"] == allowed[-2:] and s["apic"] == "host"
    # suite=smp without cpus= takes every CPU, and the tool pins the hosted build to all it may use
    rc, res = boot(tmp_path / "all", "hosted", "suite=smp bench=tsc runs=2")
    s = smp_record(res)
    assert rc == 0 and s["wanted"] == "all" and s["used"] == len(allowed) and res["run"]["host_cpus"] == allowed


def test_cpus_is_refused_where_it_does_not_apply(tmp_path: Path) -> None:
    proc = tool_proc("run", "--emulator", "bochs", "--cpus", "2", "--out", str(tmp_path / "b"))
    assert proc.returncode != 0 and "--cpus does not apply to bochs" in proc.stderr
    proc = tool_proc("run", "--emulator", "qemu", "--cpus", "0", "--out", str(tmp_path / "z"))
    assert proc.returncode != 0 and "not a whole number from 1" in proc.stderr
