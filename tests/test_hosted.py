"""The hosted build: bench/ and runtime/ as a Linux program printing the
kernel's records, run pinned to one CPU through the host tool."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from booting import TOOL_SAFETY_NET_S, boot, done, of_type

REPO = Path(__file__).resolve().parent.parent
HOSTED = REPO / "build" / "hosted" / "cleanroom-hosted"

pytestmark = pytest.mark.skipif(not HOSTED.exists(), reason="build/hosted/cleanroom-hosted missing: run `make hosted`")


def test_short_sweep_is_a_complete_valid_record_set(tmp_path: Path) -> None:
    rc, res = boot(tmp_path, "hosted", "bench=workset,ctxsw sizes=0,1K,4K,64K,1M reps=20 runs=3")
    assert rc == 0 and res["complete"] and res["corrupt"] == 0 and not res["missing"]
    hello = of_type(res, "hello")[0]
    assert hello["platform"] == "hosted" and hello["loader"] == "linux"
    tsc = of_type(res, "tsc")[0]
    assert tsc["method"] in ("cpuid15", "cpuid16", "clock_monotonic_raw") and tsc["hz"] > 10**8
    ws = [r for r in of_type(res, "result") if r["bench"] == "workset"]
    assert len(ws) == 5 * 2
    assert all(r["params"]["paging"] == "host" for r in ws)
    # reps=20 refills of 1 MiB: the single series writes at least 40 MiB; no CPU does that in under 0.4 Mcycles
    big = next(r for r in ws if r["case"] == "single" and r["params"]["size"] == 1 << 20)
    assert big["min"] > 400_000
    # the quick suite's paging=on pass cannot exist in a process: a skip naming why
    assert any("paging" in s["why"] for s in of_type(res, "skip"))


def test_same_arguments_as_the_kernel_and_bad_ones_rejected() -> None:
    proc = subprocess.run([str(HOSTED), "suite=quick", "bench=nosuch", "runs=0"], capture_output=True, text=True,
                          timeout=TOOL_SAFETY_NET_S)
    assert proc.returncode == 2
    records = [json.loads(line[5:line.rindex(" ~")]) for line in proc.stdout.splitlines() if line.startswith("@cr1 ")]
    errors = [r for r in records if r["t"] == "error"]
    assert {e["token"] for e in errors} == {"bench=nosuch", "runs=0"}
    assert records[-1]["t"] == "done" and records[-1]["status"] == "config"


def test_fiber_stack_overflow_is_a_fault_naming_the_fiber(tmp_path: Path) -> None:
    rc, res = boot(tmp_path, "hosted", "provoke=fiber")
    assert rc == 3 and done(res)["status"] == "fault"
    f = of_type(res, "fault")[0]
    assert f["vector"] == 14 and f["name"] == "page_fault" and f["fiber"] == "overflow"
    assert "guard page" in f["cause"]


def test_selftest_is_skipped_not_faked(tmp_path: Path) -> None:
    rc, res = boot(tmp_path, "hosted", "suite=selftest")
    assert rc == 0 and not of_type(res, "test")
    assert any(s["what"] == "selftest" for s in of_type(res, "skip"))
