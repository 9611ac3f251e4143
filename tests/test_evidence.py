"""Per-case evidence (issue 12): memory types from the MTRRs and PAT, APERF/MPERF and the SMI
count around each recorded set, CR4.MCE and the machine-check fault, as real boots print them.
QEMU's qemu32 CPU has no MTRRs (memtype `unknown`, said once); Skylake-Client has MTRRs that
SeaBIOS programs write-back below the PCI hole, and Intel's SMI count. The lookup itself and the
4 MiB split are unit-tested on constructed MTRR sets (tests/unit/test_memtype.c)."""

from __future__ import annotations

import sys
from pathlib import Path

from booting import boot, done, of_type

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))
from cleanroom_host.machine import Machine, aperf_mperf_ratio, evidence_notes  # noqa: E402

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
