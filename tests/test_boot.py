"""Boot tests: the real kernel under QEMU (-kernel, GRUB on BIOS and on
UEFI), Bochs, old CPUs and small memory, captured and parsed by the host
tool exactly as a user runs it."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from booting import (HOSTED, KERNEL, SMALL_ALL, TOOL_CMD, TOOL_SAFETY_NET_S, boot, built, done, errors, of_type,
                     shared_boot, uefi_selftest)
from cleanroom_host.machines import emulators

# What the issue asks the self-test to cover, by record name.
REQUIRED_SELFTESTS = {
    "crc32", "record_writer", "cmdline_accept", "cmdline_reject", "cpuid", "tsc_monotonic", "alloc",
    "paging_identity", "pf_unmapped_write", "fault_divide_error", "fault_invalid_opcode", "wp_readonly",
    "console",
    # isolated-address-space threads (issue 5)
    "uthread_syscalls", "uthread_share", "uthread_stack_private", "uthread_faults", "uthread_commit_merge",
    "uthread_commit_order", "uthread_heap", "uthread_lifecycle", "uthread_sync", "uthread_map_demand",
}

pytestmark = pytest.mark.usefixtures("kernel_elf")


def assert_selftest_passes(rc: int, res: dict[str, Any]) -> None:
    tests = of_type(res, "test")
    failed = [f"{t['name']}: {t['detail']}" for t in tests if not t["ok"]]
    assert not failed, failed
    assert res["complete"] and res["corrupt"] == 0 and not res["missing"]
    assert len(tests) >= 12
    assert REQUIRED_SELFTESTS <= {t["name"] for t in tests}
    d = done(res)
    assert d["status"] == "ok" and d["passed"] == len(tests) and d["failed"] == 0
    assert rc == 0
    types = [r["t"] for r in res["records"]]
    assert types[:5] == ["hello", "cpu", "tsc", "mem", "config"]


def test_selftest_qemu(boots_root: Path) -> None:
    rc, res = shared_boot(boots_root, "qemu", "suite=selftest")  # test_aspace.py reads its thread faults
    assert_selftest_passes(rc, res)
    hello = of_type(res, "hello")[0]
    assert hello["proto"] == 1 and hello["loader"] == "qemu" and "suite=selftest" in hello["cmdline"]
    assert hello["multiboot"] == 1, "QEMU's -kernel speaks multiboot v1 only"
    assert of_type(res, "mem")[0]["image"][0] == 2 << 20, "v1 loaders put the image at its link address"
    assert "paging_pse36" not in {t["name"] for t in of_type(res, "test")}, "no RAM above 4 GiB: not applied"
    cpu = of_type(res, "cpu")[0]
    assert cpu["platform"] == "qemu" and cpu["hypervisor"] == "TCGTCGTCGTCG"
    assert "tsc" in cpu["features"] and cpu["caches"], "QEMU's default CPU reports leaf-4 caches"
    mem = of_type(res, "mem")[0]
    assert 100 << 20 < mem["usable"] <= 128 << 20 and 0 < mem["largest"] <= mem["usable"]


def test_iso_bios_through_grub(tmp_path: Path) -> None:
    rc, res = boot(tmp_path, "iso", "suite=selftest")
    assert_selftest_passes(rc, res)
    hello = of_type(res, "hello")[0]
    assert hello["loader"].startswith("GRUB") and hello["vga"] is True
    assert_grub_multiboot2(res)


@pytest.mark.early
def test_iso_uefi_through_grub(boots_root: Path) -> None:
    rc, res, _screen = uefi_selftest(boots_root)  # test_screen reads its screen
    assert_selftest_passes(rc, res)
    hello = of_type(res, "hello")[0]
    assert hello["loader"].startswith("GRUB")
    assert hello["vga"] is False, "UEFI leaves no VGA text mode: the mirror must say it is absent"
    assert hello["screen"] == "framebuffer" and hello["fb_access"] == "direct"
    acpi = assert_grub_multiboot2(res)
    assert acpi["revision"] == 2 and acpi["root"] == "xsdt", "OVMF publishes ACPI 2.0+ tables"
    assert acpi["pm_timer"] and acpi["hpet"], "the FADT and HPET tables behind that RSDP must be read"


def assert_grub_multiboot2(res: dict[str, Any]) -> dict[str, Any]:
    """The ISO's GRUB boots the kernel through multiboot2: it placed the
    relocatable image at the lowest free address from 1 MiB (not the link
    address, 2 MiB: the self-tests passing show the fix-up worked) and
    passed the RSDP, which the kernel takes before any scan. The acpi object."""
    assert of_type(res, "hello")[0]["multiboot"] == 2
    assert of_type(res, "mem")[0]["image"][0] == 1 << 20
    assert not errors(res, "image_overlap")
    acpi: dict[str, Any] = of_type(res, "tsc")[0]["acpi"]
    assert acpi["where"] == "multiboot2" and acpi["rsdp"] is None, "the loader passed a copy, not an address"
    return acpi


def test_selftest_bochs(boots_root: Path) -> None:
    rc, res = shared_boot(boots_root, "bochs", "suite=selftest")  # test_clock.py reads its calibration
    assert_selftest_passes(rc, res)
    cpu = of_type(res, "cpu")[0]
    assert cpu["platform"] == "bochs"
    assert cpu["boot_cr0"] & (1 << 30), "Bochs' BIOS leaves caches disabled; the kernel must see and undo it"


def test_bad_cmdline_is_rejected_before_measuring(tmp_path: Path) -> None:
    rc, res = boot(tmp_path, "qemu", "suite=fast runs=12x sizes= foo=1 reps=5 reps=6")
    assert rc == 2
    assert done(res)["status"] == "config"
    errors = of_type(res, "error")
    tokens = {e["token"]: e for e in errors}
    assert set(tokens) == {"suite=fast", "runs=12x", "sizes=", "foo=1", "reps=6"}
    assert tokens["suite=fast"]["accepted"] == "selftest|quick|paper|all|smp"
    assert "suite=" in tokens["foo=1"]["accepted"]
    assert tokens["reps=6"]["msg"] == "duplicate key"
    measured = {"tsc", "result", "test", "progress"} & {r["t"] for r in res["records"]}
    assert not measured, f"nothing may be measured before the config is valid: {measured}"


# The kernel keeps this many bytes of the multiboot command line (CMDLINE_MAX - 1).
CMDLINE_KEPT = 4095


# the tool adds exit=auto to a kernel's line (the hosted build has no exit=); QEMU gets the kernel by the run's
# own name (emulators.KERNEL_LINK), the hosted build is started by its path
@pytest.mark.parametrize("emulator,program,first,added", [("qemu", KERNEL, emulators.KERNEL_LINK, " exit=auto"),
                                                          ("hosted", HOSTED, str(HOSTED), "")])
def test_a_command_line_past_the_limit_is_an_error_not_a_cut(tmp_path: Path, emulator: str, program: Path,
                                                             first: str, added: str) -> None:
    """Issue 19: a line longer than the buffer was cut silently, and the
    token the cut split was read shortened (runs=20000 ran as runs=2)."""
    built(program, "hosted" if emulator == "hosted" else "all")
    # the loader's first token is the program, then these: pad so the limit falls right after "runs=2"
    head, tail = "bench=tsc maxsize=", "64K runs=2"
    pad = CMDLINE_KEPT - len(f"{first} {head}{tail}")
    line = f"{head}{'0' * pad}{tail}0000"
    rc, res = boot(tmp_path, emulator, line)
    assert rc == 2 and done(res)["status"] == "config"
    hello = res["records"][0]
    assert hello["t"] == "hello" and hello["cmdline_cut"] is True
    assert hello["cmdline_len"] == len(f"{first} {line}{added}")
    assert "runs=" not in hello["cmdline"] and hello["cmdline"].endswith("64K ")
    (err,) = of_type(res, "error")
    assert err["code"] == "cmdline" and err["token"] == "runs=20000"
    assert err["len"] == hello["cmdline_len"] and err["limit"] == CMDLINE_KEPT
    assert err["cut"] == "runs=20000" + added and err["cut_tokens"] == len(err["cut"].split())
    assert f"{hello['cmdline_len']} bytes" in err["msg"] and f"at most {CMDLINE_KEPT}" in err["msg"]
    assert not of_type(res, "result") and not of_type(res, "cpu")


def test_no_tsc_on_a_486_is_a_clean_error(tmp_path: Path) -> None:
    rc, res = boot(tmp_path, "qemu", "suite=quick", "--cpu", "486")
    assert res["complete"]
    errors = of_type(res, "error")
    assert errors and "tsc" in errors[0]["code"]
    assert done(res)["status"] == "fail" and rc == 1
    assert not of_type(res, "fault")


def test_pentium_completes_with_cpuid_serialisation(tmp_path: Path) -> None:
    """Every benchmark and self-test on a CPU without cmov, SSE, rdtscp or global pages."""
    rc, res = boot(tmp_path, "qemu", SMALL_ALL, "--cpu", "pentium")
    assert rc == 0 and done(res)["status"] == "ok"
    assert of_type(res, "tsc")[0]["serialize"] == "cpuid"
    skipped = {s["what"] for s in of_type(res, "skip")}
    assert {"rdtscp", "rdtsc_lfence"} <= skipped
    assert {r["case"] for r in of_type(res, "result")} >= {"rdtsc", "rdtsc_cpuid", "empty"}


def test_pse36_pages_reach_ram_above_4gib(tmp_path: Path) -> None:
    """The paging_pse36 self-test runs where there is RAM above 4 GiB and
    PSE-36: QEMU's CPU walks the PDE the kernel builds (address bits 32-39
    in bits 13-20) to the high RAM, not to its alias below 4 GiB."""
    rc, res = boot(tmp_path, "qemu", "suite=selftest", "--memory", "5120", "--cpu", "qemu32,+pse36")
    tests = {t["name"]: t for t in of_type(res, "test")}
    assert rc == 0 and done(res)["status"] == "ok"
    pse36 = tests["paging_pse36"]
    assert pse36["ok"] and pse36["detail"].startswith("0x1") and "kept its own" in pse36["detail"], pse36


def test_small_memory_completes(tmp_path: Path) -> None:
    rc, res = boot(tmp_path, "qemu", SMALL_ALL, "--memory", "16")
    assert rc == 0 and done(res)["status"] == "ok", of_type(res, "skip") + of_type(res, "error")
    assert of_type(res, "mem")[0]["usable"] < 16 << 20


@pytest.mark.parametrize("kind,vector,name", [
    ("de", 0, "divide_error"), ("ud", 6, "invalid_opcode"), ("pf", 14, "page_fault"),
    ("gp", 13, "general_protection"), ("stack", 8, "double_fault"), ("fiber", 8, "double_fault"),
])
def test_unexpected_fault_is_reported(tmp_path: Path, kind: str, vector: int, name: str) -> None:
    rc, res = boot(tmp_path, "qemu", f"provoke={kind}")
    assert rc == 3 and done(res)["status"] == "fault" and res["complete"]
    f = of_type(res, "fault")
    assert len(f) == 1
    f = f[0]
    assert (f["vector"], f["name"], f["bench"], f["what"]) == (vector, name, "provoke", kind)
    assert f["eip"] >= 0x100000, "eip points into the kernel"
    if kind == "pf":
        assert f["cr2"] == 0x10
    if kind in ("stack", "fiber"):  # the CPU could not push the #PF frame: the #DF task reports it
        assert f["fiber"] == ("kernel" if kind == "stack" else "overflow") and "guard page" in f["cause"]
        assert f["cr2"] >> 12 == f["esp"] >> 12 or f["cr2"] < f["esp"]


# the quick suite's benchmarks but locks and aspace (test_locks and test_aspace boot theirs twice),
# its sweep cut short, two runs each (samples of two runs are as exact as of five): a second full
# quick suite took ~25 s of the tests' time, this one 5 s
SHORT_QUICK = "suite=quick bench=tsc,ctxsw,workset,create maxsize=16K runs=2 warmup=0 reps=100"  # reps: 1 s a boot, not 4


def test_icount_runs_are_identical(tmp_path: Path) -> None:
    """Two boots give the same records, and in each every sample of a case is the same count, the first run
    too (no warm-up): why make run's kernel step runs each case once (the Makefile's CMDLINE)."""
    runs = []
    for k in range(2):
        rc, res = boot(tmp_path / str(k), "qemu-icount", SHORT_QUICK)
        assert rc == 0
        runs.append([r for r in res["records"] if r["t"] == "result"])
    assert {r["bench"] for r in runs[0]} == {"tsc", "ctxsw", "workset", "create"}
    assert runs[0] and runs[0] == runs[1]
    assert all(len(set(r["samples"])) == 1 == len(r["samples"]) - 1 for r in runs[0]), \
        [(r["bench"], r["case"], r["samples"]) for r in runs[0] if len(set(r["samples"])) != 1]


def test_results_carry_raw_samples_and_progress(tmp_path: Path) -> None:
    rc, res = boot(tmp_path, "qemu", "bench=tsc raw=1 runs=5")
    assert rc == 0
    progress = of_type(res, "progress")
    assert progress and progress[-1]["done"] == progress[-1]["total"] == 5
    for r in of_type(res, "result"):
        assert r["unit"] == "cycles" and r["n"] == 5 and len(r["samples"]) == 5
        assert r["min"] <= r["med"] <= r["max"] and r["min"] <= r["mean"] <= r["max"]
        assert sorted(r["samples"])[0] == r["min"]
    # the quick suite's default: the same cases with paging off, then on
    assert [r["params"]["paging"] for r in of_type(res, "result")] == ["off"] * 4 + ["on"] * 4


def test_paging_both_runs_each_benchmark_twice(tmp_path: Path) -> None:
    rc, res = boot(tmp_path, "qemu", "bench=tsc paging=both pagesize=4m runs=3")
    assert rc == 0
    modes = [(r["case"], r["params"]["paging"], r["params"]["pagesize"]) for r in of_type(res, "result")]
    assert ("rdtsc", "off", "4m") in modes and ("rdtsc", "on", "4m") in modes


# Throttled on purpose: with -icount shift=8,align=on QEMU runs one guest
# instruction per 256 ns of virtual time and keeps the guest from running
# ahead of the host's clock, so the run below takes about 14 s on any host
# (longer on a slow or busy one), records under a second apart (measured:
# 0.9 s at most, the firmware's 1.9 s before the first one the longest
# gap; at shift=9 all twice that, 28 s in all). That length is a property
# of the throttle, not something this test measures: the run is 3.5 times
# the silence limit, which is twice the longest gap.
SLOW_QEMU = ("--qemu-arg=-icount", "--qemu-arg=shift=8,align=on")
SLOW_WORKLOAD = "bench=tsc,ctxsw,locks,workset paging=both runs=8 warmup=0 reps=200 sizes=0,256,4K"
SILENCE_S = 4


@pytest.mark.early
def test_a_slow_run_that_keeps_talking_is_not_a_hang(tmp_path: Path) -> None:
    """Total time does not matter, only silence: a run several times longer
    than the silence limit completes (a fixed limit that long would have
    killed it)."""
    rc, res = boot(tmp_path, "qemu", SLOW_WORKLOAD, *SLOW_QEMU, f"--silence={SILENCE_S}")
    assert rc == 0 and done(res)["status"] == "ok" and res["complete"]
    assert not res["run"]["hung"] and res["run"]["timeout"] is None
    assert len(of_type(res, "result")) > 100


def test_a_kernel_that_stops_printing_is_reported_hung(tmp_path: Path) -> None:
    """provoke=hang: the benchmarks' records arrive, then silence and no
    done record; the tool stops it after the silence limit, keeps every
    record and names the last one."""
    out = tmp_path / "hang"
    proc = subprocess.run(
        [*TOOL_CMD, "run", "--emulator", "qemu", "--cmdline", "provoke=hang bench=tsc runs=2", "--out", str(out),
         "--quiet", f"--silence={SILENCE_S}"],
        capture_output=True, text=True, timeout=TOOL_SAFETY_NET_S, stdin=subprocess.DEVNULL)
    assert proc.returncode == 4, proc.stderr
    res = json.loads((out / "results.json").read_text())
    assert not of_type(res, "done") and not res["complete"]
    assert len(of_type(res, "result")) == 8, "four tsc cases, paging off and on: all kept"
    last = res["records"][-1]["seq"]
    assert f"no record for {SILENCE_S} s after seq {last}" in proc.stderr
    assert res["run"]["hung"] and res["run"]["last_seq"] == last
