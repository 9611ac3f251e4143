"""Per-case evidence (issue 12): memory types from the MTRRs and PAT, APERF/MPERF and the SMI
count around each recorded set, CR4.MCE and the machine-check fault, as real boots print them.
QEMU's qemu32 CPU has no MTRRs (memtype `unknown`, said once); Skylake-Client has MTRRs that
SeaBIOS programs write-back below the PCI hole, and Intel's SMI count. The lookup itself and the
4 MiB split are unit-tested on constructed MTRR sets (tests/unit/test_memtype.c)."""

from __future__ import annotations

import sys
from pathlib import Path

from booting import boot, connect_when_listening, done, of_type

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))
from cleanroom_host.machines.machine import Machine, aperf_mperf_ratio, evidence_notes  # noqa: E402

CHEAP = "bench=tsc runs=2"


def evidence(res: dict) -> dict:
    ev = of_type(res, "evidence")
    assert len(ev) == 1, "one evidence record per boot"
    return ev[0]


def test_no_mtrrs_means_unknown_said_once(tmp_path: Path) -> None:
    rc, res = boot(tmp_path, "qemu", CHEAP, "--cpu", "qemu32")
    assert rc == 0 and done(res)["status"] == "ok"
    ev = evidence(res)
    assert ev["mtrr"] == "absent" and ev["memtype"] == "unknown"
    assert ev["aperf_mperf"] is False and ev["aperf_mperf_why"]
    assert ev["smi_count"] is False and ev["smi_count_why"]
    assert ev["mce"] is True and "mce_why" not in ev  # qemu32 has MCE: CR4.MCE is set
    results = of_type(res, "result")
    assert results and all(r["memtype"] == "unknown" for r in results)
    assert not any("aperf" in r or "mperf" in r or "smi" in r for r in results)  # absent: not per result


def test_mtrrs_read_write_back_and_smi_count_on_an_intel_model(tmp_path: Path) -> None:
    rc, res = boot(tmp_path, "qemu", CHEAP, "--cpu", "Skylake-Client")
    assert rc == 0 and done(res)["status"] == "ok"
    ev = evidence(res)
    assert ev["mtrr"] == "on" and ev["mtrr_default"] == "wb" and ev["mtrr_vcnt"] >= 1
    assert any(v["type"] == "uc" for v in ev["mtrr_var"])  # SeaBIOS: the PCI hole below 4 GiB
    assert ev["memtype"] == "wb" and ev["split_4m"] == 0 and ev["pat0"] == "wb"
    assert ev["smi_count"] is True and ev["mce"] is True and ev["mc_banks"] > 0
    # QEMU TCG does not count APERF/MPERF: absent, with the reason, never a made-up ratio
    assert ev["aperf_mperf"] is False and "CPUID 6" in ev["aperf_mperf_why"]
    results = of_type(res, "result")
    assert results and all(r["memtype"] == "wb" and r["smi"] == 0 for r in results)
    assert "SMI" not in Machine.of(res["records"], res.get("run")).trust


def test_memory_that_is_not_write_back_is_refused_naming_the_range(tmp_path: Path) -> None:
    rc, res = boot(tmp_path, "qemu", "provoke=uc " + CHEAP, "--cpu", "max")
    assert rc == 0 and done(res)["status"] == "ok"
    assert not of_type(res, "result"), "nothing measured on uncached memory"
    skips = of_type(res, "skip")
    assert skips and all("is uc, not write-back" in s["why"] and "[0x" in s["why"] for s in skips)
    trust = Machine.of(res["records"], res.get("run")).trust
    assert f"{len(skips)} cases refused" in trust


def test_machine_check_is_a_fault_record_with_vector_18(tmp_path: Path) -> None:
    rc, res = boot(tmp_path, "qemu", "provoke=mc", "--cpu", "max")
    assert rc == 3 and done(res)["status"] == "fault"
    (f,) = of_type(res, "fault")
    assert f["vector"] == 18 and f["name"] == "machine_check" and f["what"] == "mc"
    assert f["mcg_status"] == 0 and f["mc_bank"] is None  # int 18: no bank reports an error


def test_hosted_says_not_available(tmp_path: Path) -> None:
    rc, res = boot(tmp_path, "hosted", CHEAP)
    assert rc == 0
    ev = evidence(res)
    assert ev["mtrr"] == "hosted" and ev["memtype"] == "unknown" and ev["mce"] is False
    assert "user space" in ev["aperf_mperf_why"] and "user space" in ev["smi_count_why"]
    assert all(r["memtype"] == "unknown" for r in of_type(res, "result"))


def test_trust_summary_names_turbo_smis_and_memory_types() -> None:
    def result(case: str, **kw: object) -> dict:
        return {"t": "result", "bench": "workset", "case": case, "memtype": "wb", **kw}
    records = [
        {"t": "evidence", "aperf_mperf": True, "smi_count": True, "mce": True, "mtrr": "on", "memtype": "wb",
         "split_4m": 1},
        result("single", aperf=1300, mperf=1000, smi=0),
        result("multi", aperf=1005, mperf=1000, smi=2),
        result("loop", aperf=800, mperf=1000, smi=0, memtype="wt"),
    ]
    assert aperf_mperf_ratio(records[1]) == 1.3 and aperf_mperf_ratio({"aperf": 1, "mperf": 0}) is None
    m = Machine.of(records)
    assert m.evidence is not None
    notes = " | ".join(evidence_notes(m.evidence))
    assert "APERF/MPERF 0.80..1.30 in 2 results" in notes and "workset/single" in notes
    assert "1 results touched by an SMI (workset/multi x2)" in notes
    assert "not write-back (workset/loop wt)" in notes and "1 4 MiB pages" in notes
    assert "SMI" in m.trust


def boot_with_stale_bank(tmp_path: Path, cmdline: str) -> list[dict]:
    """QEMU stopped before the first instruction (-S); its human monitor logs a corrected error
    in bank 1 (VAL|EN|ADDRV, no UC: no #MC is raised), as firmware leaves banks from before a
    reset; then the kernel boots. Returns the records."""
    import json
    import subprocess
    import zlib

    kernel = Path(__file__).resolve().parent.parent / "build" / "cleanroom.elf"
    sock, log = tmp_path / "mon.sock", tmp_path / "serial.log"
    proc = subprocess.Popen(["qemu-system-i386", "-cpu", "max", "-m", "64", "-no-reboot", "-display", "none",
                             "-device", "isa-debug-exit,iobase=0xf4,iosize=0x04", "-S",
                             "-monitor", f"unix:{sock},server=on,wait=off", "-serial", f"file:{log}",
                             "-kernel", str(kernel), "-append", cmdline + " exit=qemu"],
                            stderr=subprocess.DEVNULL)
    try:
        mon = connect_when_listening(sock, proc, 60)

        def command(text: str) -> None:
            """Send one line; return once the monitor prompts again after it."""
            mon.sendall(text.encode() + b"\n")
            got = b""
            while got.count(b"(qemu)") < 1:
                got += mon.recv(4096)

        got = b""
        while b"(qemu)" not in got:  # the greeting
            got += mon.recv(4096)
        command("mce 0 1 0x9400000000000000 0 0x12345000 0")
        command("c")
        assert proc.wait(timeout=120) in (1, 7), "the kernel ended through isa-debug-exit"
    finally:
        proc.kill()
    records = []
    for line in log.read_bytes().decode(errors="replace").splitlines():
        if line.startswith("@cr1 "):
            body, crc = line[5:].rsplit(" ~", 1)
            assert zlib.crc32(body.encode()) == int(crc, 16)
            records.append(json.loads(body))
    return records


def test_a_bank_left_valid_before_the_boot_is_recorded_cleared_and_not_blamed(tmp_path: Path) -> None:
    """Issue 23: firmware leaves banks valid from before the reset; a #MC during the run must
    name only its own bank. The stale one is in the evidence record and cleared, so the
    machine check provoked afterwards (int 18: no bank of its own) names none."""
    records = boot_with_stale_bank(tmp_path, "provoke=mc " + CHEAP)
    ev = [r for r in records if r["t"] == "evidence"][0]
    assert ev["mc_stale"] == 1
    assert ev["mc_stale_banks"] == [{"bank": 1, "status": 0x9400000000000000, "addr": 0x12345000, "cleared": True}]
    fault = [r for r in records if r["t"] == "fault"][0]
    assert fault["vector"] == 18 and fault["mc_bank"] is None and fault["mc_status"] is None


def test_limit_cpuid_maxval_is_cleared_before_the_cpu_is_identified(tmp_path: Path) -> None:
    """Issue 23: firmware may leave IA32_MISC_ENABLE bit 22 set, capping CPUID at leaf 2-3. The
    kernel clears it on Intel CPUs before cpu_identify and says so in the cpu record. QEMU's
    firmware leaves it clear, so provoke=cpuidlimit sets it first; QEMU stores the bit (it does
    not cap CPUID itself), so the test checks the read-clear-read path and the record."""
    rc, res = boot(tmp_path / "set", "qemu", "provoke=cpuidlimit " + CHEAP, "--cpu", "Skylake-Client")
    cpu = of_type(res, "cpu")[0]
    assert rc == 0 and cpu["cpuid_limit"] == "cleared" and cpu["max_leaf"] >= 0xd
    rc, res = boot(tmp_path / "clear", "qemu", CHEAP, "--cpu", "Skylake-Client")
    assert of_type(res, "cpu")[0]["cpuid_limit"] == "clear"
    rc, res = boot(tmp_path / "amd", "qemu", CHEAP, "--cpu", "EPYC")
    assert of_type(res, "cpu")[0]["cpuid_limit"] == "n/a"  # no such MSR on AMD: never touched


def test_the_chipset_watchdog_is_read_and_named(tmp_path: Path) -> None:
    """Issue 23: the TCO timer of an Intel ICH/PCH can reset a machine that runs with
    interrupts off. QEMU's q35 has an ICH9 whose TCO runs with NO_REBOOT set (QEMU's default);
    its i440FX machine has no TCO at all, which is said, not guessed."""
    rc, res = boot(tmp_path / "q35", "qemu", CHEAP, "--qemu-arg=-M", "--qemu-arg=q35")
    tco = evidence(res)["tco"]
    assert rc == 0 and tco == {"where": "lpc", "halted": False, "timeout_ms": 2400, "no_reboot": True}
    rc, res = boot(tmp_path / "pc", "qemu", CHEAP)
    tco = evidence(res)["tco"]
    assert tco["where"] is None and "no Intel ICH/PCH TCO" in tco["why"]
