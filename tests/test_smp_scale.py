"""Many CPUs on a machine with two: the multi-CPU suite at the papers' scale (16 and 32 CPUs).

The hosted build runs 16 workers (32 in make test-scale) over this machine's CPUs (`--oversubscribe`:
several a CPU, every pause a yield), which exercises every cross-CPU wait, start line and wake-up at that count:
the linuxvm hang of 2026-11-27 (its sleepers woken one at a time while the caller waited for each in
turn, which stranded all but one from 4 CPUs on) ends such a run with a `cpu_silent` error within
seconds, and so fails here. Such a run checks logic only: its report gives no timing answers. The
kernel boots `suite=smp` on 5 vCPUs of multi-threaded TCG and starts all 32 CPUs `cpus=` allows;
`make test-scale` (not `make test`: 32 s and 20 s side by side on 2 host cores) runs `suite=smp` on 16
vCPUs, the self-tests on 32 and the hosted suite at its default repetitions on 32 workers. Nothing
here asserts a time: under TCG and oversubscribed the CPUs are host threads taking turns."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from booting import boot, done, of_type, tool_main
from smpchecks import check_problems, layout_problems

from cleanroom_host.machines import estimate, smpestimate

# Logic, not numbers: one recorded run per case, no warm-up, short loops (reps is each benchmark's own
# count: round trips, increments, lock+unlocks, mmaps).
SHORT = "runs=1 warmup=0 reps=500"
# Oversubscribed, a ping-pong pair on one CPU takes a switch a round trip: coherence's 496 pairs at 32
# workers took 7.6 s of 11.7 at reps=500 (33 s beside the rest of make test), 2.2 of 4.6 at reps=100,
# which still commits isolation's pages (every 100 = every reps) and fills falseshare's window
OVERSUBSCRIBED = "runs=1 warmup=0 reps=100"
HOSTED_BENCHES = {"coherence", "falseshare", "isolation", "smplocks", "linuxvm"}
KERNEL_BENCHES = {"coherence", "falseshare", "isolation", "smplocks", "shootdown", "aslock"}

# the builds these tests boot: make test makes both, so a missing one fails naming its target (conftest.py)
needs_kernel = pytest.mark.usefixtures("kernel_elf")
needs_hosted = pytest.mark.usefixtures("hosted_elf")


def id_ranges(ids: list[int]) -> str:
    """bench/parallel.c's params.cpu_ids: "0-3,8" (runs of consecutive ids)."""
    out, i = [], 0
    while i < len(ids):
        j = i
        while j + 1 < len(ids) and ids[j + 1] == ids[j] + 1:
            j += 1
        out.append(str(ids[i]) if i == j else f"{ids[i]}-{ids[j]}")
        i = j + 1
    return ",".join(out)


def check_run(res: dict[str, Any], cpus: int, benches: set[str]) -> None:
    """What a multi-CPU run must show at any scale, however its CPUs were scheduled: it ended ok with
    every record, every CPU asked for in use, every benchmark ran and every check held, and each k sweep
    names the CPUs its workers ran on."""
    assert done(res)["status"] == "ok", [e["msg"] for e in of_type(res, "error")]
    assert res["complete"] and not res["missing"]
    assert not of_type(res, "error"), of_type(res, "error")
    smp = of_type(res, "smp")[0]
    assert smp["used"] == cpus == len(smp["used_ids"]) and smp["failed"] == 0
    results = of_type(res, "result")
    assert {r["bench"] for r in results} == benches
    assert check_problems(results) == []  # every check param present, each 0 (smpchecks.CHECKS)
    assert layout_problems(results) == []  # packed ints in one line up to 16, two from 17; padded a line each
    for r in results:
        if r["bench"] == "coherence":
            assert smp["used_ids"][r["params"]["from"]] == r["params"]["from_id"]
            assert smp["used_ids"][r["params"]["to"]] == r["params"]["to_id"]
        elif "cpu_ids" in r["params"] or r["params"].get("cpus", 1) > 1:
            k = r["params"]["cpus"]
            assert r["params"]["cpu_ids"] == id_ranges(smp["used_ids"][:k]), (r["bench"], r["case"], r["params"])
            assert ("smt" in r["params"]) == (smp["cores"] is not None)
    # the largest k of every sweep is every CPU
    for bench in benches - {"coherence"}:
        assert max(r["params"].get("cpus", 1) for r in results if r["bench"] == bench) == cpus, bench
    pairs = {(r["params"]["from"], r["params"]["to"]) for r in results if r["bench"] == "coherence"}
    assert pairs == {(a, b) for a in range(cpus) for b in range(a + 1, cpus)}


@needs_hosted
# 16 workers on this machine's CPUs: the linuxvm hang stranded every worker from the fourth on; 32 (19 s
# in make test) runs in make test-scale at the default repetitions
@pytest.mark.parametrize("cpus", [16])
def test_hosted_suite_smp_oversubscribed_ends_and_every_check_holds(tmp_path: Path, cpus: int) -> None:
    allowed = len(os.sched_getaffinity(0))
    assert allowed < cpus, "this test oversubscribes: it needs fewer CPUs than workers"
    rc, res = boot(tmp_path, "hosted", f"suite=smp {OVERSUBSCRIBED}", "--cpus", str(cpus), "--oversubscribe")
    check_run(res, cpus, HOSTED_BENCHES)  # first: its message names an error record
    assert rc == 0
    smp = of_type(res, "smp")[0]
    assert smp["shared_cpus"] == allowed and sorted(set(smp["used_ids"])) == sorted(os.sched_getaffinity(0))
    # the duration model counts the cases this run measured, benchmark by benchmark, at this many CPUs
    plan = estimate.plan(f"suite=smp {OVERSUBSCRIBED}", hosted=True, cpus=cpus).smp()
    for bench in HOSTED_BENCHES:
        assert smpestimate.cases(bench, plan) == sum(1 for r in of_type(res, "result") if r["bench"] == bench), bench
    # the report says it is no timing answer, and why
    rc, out, _err = tool_main("report", str(tmp_path / "hosted"), "--no-plots")
    assert rc == 0
    flat = " ".join(out.split())
    assert f"no answers: {cpus} workers took turns on {allowed} CPUs (oversubscribe=1)" in flat
    assert "\nanswers;" not in out


def test_the_estimate_keeps_16_cpus_within_their_budgets() -> None:
    """The defaults (lib/defaults.h) against the time budgets of issue 28, by the duration model (a model:
    docs/REPORT.md says what it was fitted to): hosted suite=smp on 16 CPUs within 3 minutes, make run's
    multi-CPU part (the Makefile's HOSTED_SMP_CMDLINE) within 30 s; and the model's terms grow with the CPUs."""
    makefile = (Path(__file__).resolve().parent.parent / "Makefile").read_text()
    smp_part = next(line.split("?=", 1)[1].strip() for line in makefile.splitlines()
                    if line.startswith("HOSTED_SMP_CMDLINE"))
    full = estimate.estimate(estimate.plan("suite=smp", hosted=True, cpus=16), "hosted", 0)
    part = estimate.estimate(estimate.plan(smp_part, hosted=True, cpus=16), "hosted", 0)
    assert full is not None and part is not None
    assert set(full.smp) == set(smpestimate.BENCHES) and set(part.smp) == {"coherence", "falseshare"}
    assert full.seconds < 180 and part.seconds < 30, (full.text("hosted"), part.text("hosted"))
    two = estimate.estimate(estimate.plan("suite=smp", hosted=True, cpus=2), "hosted", 0)
    assert two is not None and all(two.smp[b] < full.smp[b] for b in smpestimate.BENCHES)


LENT = Path(__file__).resolve().parent.parent / "docs" / "data" / "16cpu-intel-2026-11-28-lent"


def test_the_estimate_is_near_what_16_cpus_took() -> None:
    """The model against the lent 16-core machine's times (docs/data/16cpu-intel-2026-11-28-lent: the
    suite's time per benchmark in suite-smp.stamps, make run's part in times.txt): the whole within 25 %,
    each benchmark within 2x. A model that forgets a term (linuxvm's forks, its threads queueing on one
    lock: 0.8 s for 7.5) fails."""
    took = {}
    for line in (LENT / "suite-smp.stamps").read_text().splitlines():
        name, seconds = line.split()[:2]
        took[name] = float(seconds)
    for line in (LENT / "times.txt").read_text().splitlines():
        name, rest = line.split(":", 1)
        took[name] = float(rest.split(",")[1].split()[0])
    full = estimate.estimate(estimate.plan("suite=smp", hosted=True, cpus=16), "hosted", 0)
    part = estimate.estimate(estimate.plan("bench=coherence,falseshare cpus=all runs=5", hosted=True, cpus=16),
                             "hosted", 0)
    assert full is not None and part is not None
    for bench in smpestimate.BENCHES:
        assert 0.5 < full.smp[bench] / took[bench] < 2, (bench, full.smp[bench], took[bench])
    assert 0.75 < sum(full.smp.values()) / took["total"] < 1.25, (full.smp, took)
    assert 0.75 < sum(part.smp.values()) / took["makerun-smp"] < 1.25, (part.smp, took["makerun-smp"])


@needs_hosted
def test_oversubscribe_is_refused_where_it_does_not_apply(tmp_path: Path) -> None:
    rc, _out, err = tool_main("run", "--emulator", "hosted", "--cpus", "64", "--out", str(tmp_path / "h"))
    assert rc != 0 and "--oversubscribe runs 64 workers" in err
    rc, _out, err = tool_main("run", "--emulator", "qemu", "--cpus", "4", "--oversubscribe",
                              "--out", str(tmp_path / "q"))
    assert rc != 0 and "--oversubscribe applies to hosted only" in err
    rc, _out, err = tool_main("run", "--emulator", "hosted", "--oversubscribe", "--out", str(tmp_path / "n"))
    assert rc != 0 and "--oversubscribe needs --cpus N" in err


@needs_kernel
def test_the_kernel_refuses_oversubscribe(tmp_path: Path) -> None:
    rc, res = boot(tmp_path, "qemu", "oversubscribe=1 cpus=2 bench=tsc", "--qemu-arg=-smp", "--qemu-arg=2")
    assert rc != 0 and done(res)["status"] == "config"
    assert any("hosted build's" in e["msg"] for e in of_type(res, "error") if e["code"] == "cpus")


# More vCPUs than the host has cores spin in each other's waits: suite=smp alone took 2.2 s on 4, 2.8 s on
# 5 and 5.4 s on 8 vCPUs of the 2-CPU Intel guest (3.1, 4.8 and 9.2 s before idle CPUs halted; 61 s on 8
# beside the rest of make test). Five is the fewest that sweeps k past the self-tests' four, to a count
# that is no power of two (k = 1, 2, 4, 5).
KERNEL_CPUS = 5


@pytest.mark.early
@needs_kernel
def test_kernel_suite_smp_on_five_cpus(tmp_path: Path) -> None:
    rc, res = boot(tmp_path, "qemu", f"suite=smp {SHORT.replace('500', '20')}", "--cpus", str(KERNEL_CPUS))
    check_run(res, KERNEL_CPUS, KERNEL_BENCHES)
    assert rc == 0


@needs_kernel
def test_kernel_starts_every_one_of_32_cpus(tmp_path: Path) -> None:
    rc, res = boot(tmp_path, "qemu", "bench=tsc runs=1 warmup=0", "--cpus", "32")
    assert rc == 0 and done(res)["status"] == "ok"
    smp = of_type(res, "smp")[0]
    assert smp["used"] == 32 and smp["used_ids"] == list(range(32)) and smp["failed_ids"] == []
    assert smp["cores"] is not None and smp["core_ids"] == list(range(32))  # one thread a core: -smp 32


@needs_kernel
def test_kernel_names_smt_siblings_from_cpuid(tmp_path: Path) -> None:
    """QEMU's -smp 4,cores=2,threads=2: APIC ids 0-3, two threads a core; CPUID leaf 0xB says so and
    coherence's pairs say which of them are siblings."""
    rc, res = boot(tmp_path, "qemu", "bench=coherence cpus=4 runs=1 warmup=0 reps=20",
                   "--qemu-arg=-smp", "--qemu-arg=4,cores=2,threads=2", "--qemu-arg=-cpu", "--qemu-arg=max")
    assert rc == 0
    smp = of_type(res, "smp")[0]
    assert smp["cores"] == "cpuid_0b" and smp["core_ids"] == [0, 0, 1, 1]
    smt = {(r["params"]["from"], r["params"]["to"]): r["params"]["smt"] for r in of_type(res, "result")}
    assert smt == {(0, 1): 1, (2, 3): 1, (0, 2): 0, (0, 3): 0, (1, 2): 0, (1, 3): 0}


# --- make test-scale: the same at full size, outside make test ------------------------------------

@pytest.mark.scale
@needs_kernel
def test_scale_kernel_suite_smp_on_16_cpus(tmp_path: Path) -> None:
    rc, res = boot(tmp_path, "qemu", "suite=smp runs=1 warmup=0 reps=10", "--cpus", "16")
    check_run(res, 16, KERNEL_BENCHES)
    assert rc == 0


@pytest.mark.scale
@needs_kernel
def test_scale_kernel_self_tests_on_32_cpus(tmp_path: Path) -> None:
    rc, res = boot(tmp_path, "qemu", "suite=selftest", "--cpus", "32")
    assert rc == 0 and done(res)["status"] == "ok"
    tests = of_type(res, "test")
    assert tests and all(t["ok"] for t in tests), [t for t in tests if not t["ok"]]
    assert any(t["name"] == "smplock_no_lost_increment" and "32 CPUs" in t["detail"] for t in tests)


@pytest.mark.scale
@needs_hosted
def test_scale_hosted_suite_smp_at_default_reps_on_32(tmp_path: Path) -> None:
    rc, res = boot(tmp_path, "hosted", "suite=smp runs=1 warmup=0", "--cpus", "32", "--oversubscribe")
    check_run(res, 32, HOSTED_BENCHES)
    assert rc == 0
