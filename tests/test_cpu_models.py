"""Every emulated CPU a new user might pick boots, ends and passes (issue 12).

The probing this kernel does of a real PC (ACPI tables, HPET, PM timer,
PCI, UARTs, MTRRs, APERF/MPERF, the SMI counter, the AMD lfence MSR, the
machine-check registers) meets a different answer on each CPU model: an MSR
that raises #GP, a CPUID leaf that is missing, a feature bit that is set
while the register behind it does not exist. A probe that trusts the wrong
one faults or waits; these boots show that none does, from a 486-class
QEMU model to a Tiger Lake in Bochs.

Under qemu-icount the true TSC rate is exactly 1 GHz (one instruction per
virtual nanosecond), so each model's calibration is checked too. Each boot
is a self-test under one second of emulation."""

from __future__ import annotations

from pathlib import Path

import pytest

from booting import boot, done, of_type

# 21 QEMU models across the IA-32 line: Intel from the Pentium to Ice Lake,
# AMD from the Athlon to Zen 2, the Atom, QEMU's own and "max".
QEMU_MODELS = ("pentium", "pentium2", "pentium3", "athlon", "n270", "coreduo", "core2duo", "qemu32", "kvm32",
               "Conroe", "Penryn", "Nehalem", "SandyBridge", "Haswell", "Skylake-Client", "Icelake-Server",
               "Opteron_G2", "phenom", "EPYC-Rome", "Denverton", "max")
# Bochs models its CPUs' MSRs more closely than TCG: a recent Intel and a Zen.
BOCHS_MODELS = ("tigerlake", "ryzen")
ICOUNT_HZ = 10**9
AGREE = 0.005


def assert_passes(rc: int, res: dict) -> None:
    failed = [f"{t['name']}: {t['detail']}" for t in of_type(res, "test") if not t["ok"]]
    assert not failed, failed
    assert not of_type(res, "fault"), of_type(res, "fault")
    assert res["complete"] and res["corrupt"] == 0 and not res["missing"]
    assert done(res)["status"] == "ok" and rc == 0


@pytest.mark.parametrize("model", QEMU_MODELS)
def test_qemu_model_boots_calibrates_and_passes(tmp_path: Path, model: str) -> None:
    rc, res = boot(tmp_path, "qemu-icount", "suite=selftest", "--cpu", model)
    assert_passes(rc, res)
    tsc = of_type(res, "tsc")[0]
    assert tsc["agree"] is True and abs(tsc["hz"] - ICOUNT_HZ) <= AGREE * ICOUNT_HZ, tsc
    assert of_type(res, "evidence"), "the per-case evidence record (MTRRs, APERF/MPERF, SMI) is there"


@pytest.mark.early
@pytest.mark.parametrize("model", BOCHS_MODELS)
def test_bochs_model_boots_and_passes(tmp_path: Path, model: str) -> None:
    rc, res = boot(tmp_path, "bochs", "suite=selftest", "--cpu", model)
    assert_passes(rc, res)
    assert of_type(res, "tsc")[0]["agree"] is True
