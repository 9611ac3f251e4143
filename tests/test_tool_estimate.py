"""The duration estimate before long emulator runs (tools/cleanroom_host/machines/estimate.py)."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "fixtures"))

import synth_workset  # noqa: E402

from booting import QUICK_ICOUNT, tool_proc  # noqa: E402
from cleanroom_host.machines import defaults, estimate, registry  # noqa: E402

REPO = Path(__file__).resolve().parent.parent

MIB = 1 << 20


def test_paper_suite_plan_is_the_kernels_default() -> None:
    """The paper suite's own figures of lib/defaults.h (tests/test_defaults.py: the kernel's)."""
    d = defaults.load()
    p = estimate.plan("suite=paper")
    assert (p.runs, p.warmup, p.passes) == (d.number("CR_DEF_PAPER_RUNS"), d.number("CR_DEF_PAPER_WARMUP"), 2)
    assert p.sizes[:9] == [0, 1, 2, 3, 4, 6, 8, 12, 16] and p.maxsize == d.number("CR_DEF_PAPER_MAXSIZE")
    assert p.sizes[-1] <= p.maxsize < 2 * p.sizes[-1]
    assert p.workset_reps(1) == p.workset_reps(p.maxsize) == d.number("CR_DEF_SWEEP_PAPER_REPS")
    assert p.ctxsw_reps() == d.number("CR_DEF_CTXSW_PAPER_REPS")
    assert set(p.benches) >= {"workset", "ctxsw"}


def test_model_matches_a_real_quick_run(quick_icount: tuple[int, dict[str, Any]]) -> None:
    """Sizes and reps of this kernel's quick run (make run's: two runs a case) are what the model assumes."""
    _, res = quick_icount
    plan = estimate.plan(QUICK_ICOUNT[1])
    cfg = next(r for r in res["records"] if r["t"] == "config")
    assert (cfg["cfg"]["runs"], cfg["cfg"]["warmup"]) == (plan.runs, plan.warmup)
    results = [r for r in res["records"] if r["t"] == "result"]
    seen = {(r["params"]["size"], r["params"]["reps"]) for r in results
            if r["bench"] == "workset" and r["params"]["paging"] == "off"}
    assert sorted(seen) == [(s, plan.workset_reps(s)) for s in plan.sizes]
    threads = {r["params"]["size"] for r in results if r["case"] == "workset_threads"}
    assert sorted(threads) == plan.aspace_sizes()
    # the suite's benchmarks, read from bench/registry.def and each one's in_quick, are the ones it ran
    ran = dict.fromkeys(r["bench"] for r in res["records"] if r["t"] in ("result", "skip") and r.get("bench"))
    assert tuple(ran) == plan.benches


def test_bytes_refills_and_switches_by_hand() -> None:
    p = estimate.plan("bench=workset sizes=0,4K,1M reps=20 runs=3 warmup=1 paging=both")
    est = estimate.estimate(p, "qemu", 128)
    assert est is not None
    rounds = (3 + 1) * 2
    assert est.bytes == 2 * 2 * 20 * (4096 + MIB) * rounds
    assert est.refills == 2 * 2 * 20 * 3 * rounds
    assert est.switches == 2 * 20 * 3 * rounds
    s = estimate.speed_of("qemu")
    assert est.lock_reps == 0
    assert est.seconds == pytest.approx(s.boot_s + est.bytes / s.bytes_per_s + est.refills * s.refill_s
                                        + est.switches * s.switch_s)


def test_locks_reps_by_hand() -> None:
    d = defaults.load()
    est = estimate.estimate(estimate.plan("suite=paper bench=locks runs=3 warmup=1"), "qemu", 128)
    assert est is not None and est.bytes == est.switches == 0
    assert est.lock_reps == d.number("CR_DEF_LOCKS_PAPER_REPS") * (3 + 1) * 2
    s = estimate.speed_of("qemu")
    assert est.seconds == pytest.approx(s.boot_s + est.lock_reps * s.lock_rep_s)


def test_sizes_that_do_not_fit_are_left_out() -> None:
    p = estimate.plan("bench=workset sizes=1M,100M reps=1 runs=3 warmup=1 paging=both")
    est = estimate.estimate(p, "qemu", 128)
    assert est is not None and est.skipped_sizes == 1 and est.bytes == 2 * 2 * MIB * (3 + 1) * 2


def test_sizes_read_as_the_kernel_reads_them() -> None:
    """Leading zeros count for nothing; a size of thousands of digits is the
    kernel's to reject (out of range), not a crash of the tool (int() refuses
    past 4300 digits)."""
    assert estimate.parse_size("0" * 5000 + "64K") == 64 * 1024
    with pytest.raises(estimate.CmdlineError, match="out of range"):
        estimate.parse_size("9" * 5000 + "K")


def test_no_estimate_without_a_timed_benchmark() -> None:
    assert estimate.estimate(estimate.plan("suite=selftest"), "qemu", 128) is None
    assert estimate.estimate(estimate.plan("bench=tsc"), "qemu", 128) is None
    assert estimate.estimate(estimate.plan("bench=ctxsw"), "qemu", 128) is not None
    assert estimate.estimate(estimate.plan("bench=locks"), "qemu", 128) is not None


# --- the registry: which benchmarks a suite runs ------------------------------------------------

XCHG = """/* bench xchg: planted by tests/test_tool_estimate.py */
#include "bench/registry.h"

static void run(struct bench_ctx *ctx)
{
    (void)ctx;
}

const struct bench bench_xchg = {
    .name = "xchg",
    .what = "an xchg, a mov pair (and, no doubt, more: commas in a string)",
#ifdef CLEANROOM_HOSTED
    .in_quick = true, // the hosted build's quick suite only
#else
    .in_smp = true,
#endif
    .run = run,
};
"""


def planted_registry(root: Path, source: str = XCHG, line: str = "BENCH(bench_xchg) /* one line */") -> Path:
    """A copy of bench/*.c and bench/registry.def with a benchmark of one file and one registry line."""
    (root / "bench").mkdir(parents=True)
    for p in (REPO / "bench").glob("*.c"):
        (root / "bench" / p.name).write_text(p.read_text())
    (root / "bench" / "xchg.c").write_text(source)
    reg = (REPO / "bench" / "registry.def").read_text()
    (root / "bench" / "registry.def").write_text(reg + line + "\n")
    return root


def test_a_suite_is_the_registrys_benchmarks_in_run_order() -> None:
    """What app/suite.c runs: quick those in_quick, smp those in_smp, paper and all every one, in the
    registry's order; the #ifdef CLEANROOM_HOSTED blocks say which build has which."""
    benches = registry.load()
    kernel, hosted = registry.names(benches, False), registry.names(benches, True)
    assert "aspace" in kernel and "aspace" not in hosted and "peers" in hosted and "peers" not in kernel
    for build in (False, True):
        # every benchmark but those run by name only (bench asm: the user's code)
        by_name = {f.name for f in registry.built(benches, build) if f.by_name_only}
        every = tuple(b for b in registry.names(benches, build) if b not in by_name)
        assert by_name == {"asm"}
        assert estimate.plan("suite=paper", hosted=build).benches == every
        assert estimate.plan("suite=all", hosted=build).benches == every
        assert estimate.plan("suite=selftest", hosted=build).benches == ()
        quick, smp = (estimate.plan(f"suite={s}", hosted=build).benches for s in ("quick", "smp"))
        assert quick and smp and not set(quick) & set(smp) and set(quick) | set(smp) == set(every)
        assert list(quick) == [b for b in every if b in quick]
    assert "workset" in registry.suite(benches, "quick", False) and "coherence" in registry.suite(benches, "smp", True)


def test_a_benchmark_of_one_file_and_one_line_is_in_its_suites(tmp_path: Path) -> None:
    root = planted_registry(tmp_path)
    benches = registry.load(root)
    assert benches[-1].name == "xchg" and benches[-1].source == root / "bench" / "xchg.c"
    assert benches[-1].kernel == registry.Fields("xchg", in_quick=False, in_smp=True)
    assert benches[-1].hosted == registry.Fields("xchg", in_quick=True, in_smp=False)
    assert estimate.plan("suite=quick", hosted=True, benches=benches).benches[-1] == "xchg"
    assert "xchg" not in estimate.plan("suite=quick", benches=benches).benches
    assert estimate.plan("suite=smp", benches=benches).benches[-1] == "xchg"
    assert estimate.plan("suite=paper", benches=benches).benches[-1] == "xchg"
    # a line inside the registry's blocks: in that build only
    root = planted_registry(tmp_path / "kernel", line="#ifndef CLEANROOM_HOSTED\nBENCH(bench_xchg)\n#endif")
    benches = registry.load(root)
    assert "xchg" in registry.names(benches, False) and "xchg" not in registry.names(benches, True)


@pytest.mark.parametrize("source, line, why", [
    (XCHG.replace(".in_smp = true", ".in_smp = IN_SMP"), "", "xchg.c:15: cannot read .in_smp = IN_SMP: "
                                                             "expected true or false"),
    (XCHG.replace('.name = "xchg"', ".name = XCHG_NAME"), "", "xchg.c:10: cannot read .name = XCHG_NAME: "
                                                              "expected a string literal"),
    (XCHG.replace("#else", "#elif 1"), "", "xchg.c:14: cannot read '#elif 1' in a struct bench"),
    (XCHG.replace("bench_xchg", "bench_swap"), "", "bench_xchg is defined in no file of bench/*.c"),
    (XCHG, "BENCH(bench_xchg, 2)", "registry.def:{n}: cannot read 'BENCH(bench_xchg, 2)': expected BENCH(bench_NAME)"),
    (XCHG, "#ifdef CLEANROOM_HOSTED\nBENCH(bench_xchg)", "an #ifdef or #ifndef CLEANROOM_HOSTED is not closed"),
    (XCHG, "#if CLEANROOM_HOSTED\nBENCH(bench_xchg)\n#endif", "registry.def:{n}: cannot read '#if CLEANROOM_HOSTED'"),
    (XCHG + XCHG.replace("static void run", "static void run2"), "", "2 definitions of const struct bench bench_xchg"),
], ids=["flag", "name", "elif", "undefined", "line", "unclosed", "if", "twice"])
def test_a_registry_it_cannot_read_is_an_error_naming_the_line(tmp_path: Path, source: str, line: str, why: str) -> None:
    root = planted_registry(tmp_path, source, line or "BENCH(bench_xchg)")
    n = (REPO / "bench" / "registry.def").read_text().count("\n") + 1  # the planted line's
    with pytest.raises(registry.RegistryError, match=re.escape(why.format(n=n))):
        registry.load(root)
    with pytest.raises(defaults.DefaultsError):  # what `run` reports and starts nothing for, as for lib/defaults.h
        estimate.plan("suite=quick", benches=registry.load(root))


def test_a_benchmark_without_a_cost_model_is_named_not_a_crash(fake: dict[str, Any], tmp_path: Path) -> None:
    """A new benchmark (or a planted one) counts as 0 s, and the estimate says so: alone it has none (run
    says why), beside a modelled one its text names it."""
    alone = estimate.plan("bench=xchg")
    assert alone.unmodelled() == ("xchg",) and estimate.estimate(alone, "qemu", 128) is None
    assert estimate.case_seconds(alone, "qemu", 128) == {} and estimate.longest_case(alone, "qemu", 128) is None
    both = estimate.plan("bench=xchg,locks,tsc")
    est = estimate.estimate(both, "qemu", 128)
    only = estimate.estimate(estimate.plan("bench=locks"), "qemu", 128)
    assert est is not None and only is not None and est.seconds == only.seconds
    assert both.unmodelled() == ("xchg",) and "no cost model for xchg: counted as 0 s" in est.text("qemu")
    assert "no cost model" not in only.text("qemu")
    assert estimate.plan("bench=coherence", hosted=True).unmodelled() == ()  # hosted: smpestimate's
    assert estimate.plan("bench=coherence").unmodelled() == ("coherence",)
    p = tool_proc("run", "--cmdline", "bench=xchg", "--out", str(tmp_path / "o"), *fake["args"], env=fake["env"])
    assert p.returncode == 0, p.stderr
    assert "no duration estimate: no cost model for xchg" in p.stderr and "not started" not in p.stderr


def test_hosted_runs_paging_both_once_and_pages_both_twice() -> None:
    """The hosted build cannot switch paging (one pass); its workset compares pages= instead."""
    cmdline = "bench=workset sizes=1M reps=10 runs=1 warmup=0 paging=both"
    kernel = estimate.estimate(estimate.plan(cmdline), "qemu", 128)
    hosted = estimate.estimate(estimate.plan(cmdline, hosted=True), "hosted", 3072)
    both = estimate.estimate(estimate.plan(cmdline + " pages=both", hosted=True), "hosted", 3072)
    assert kernel is not None and hosted is not None and both is not None
    assert hosted.bytes == 4 * 10 * MIB and kernel.bytes == both.bytes == 2 * hosted.bytes


def test_hosted_quick_defaults_are_the_hosted_builds() -> None:
    """The hosted variants of lib/defaults.h, where it has them (tests/test_defaults.py: the build's)."""
    d = defaults.load()
    p = estimate.plan("bench=workset", hosted=True)
    assert d.number("CR_DEF_QUICK_RUNS_HOSTED") == 0  # runs=auto: from its first decision to the quick budget
    assert (p.auto and p.runs == d.number("CR_DEF_AUTO_MIN_RUNS") and p.runs_max == d.number("CR_DEF_QUICK_BUDGET_HOSTED")
            and p.maxsize == d.number("CR_DEF_QUICK_MAXSIZE_HOSTED"))
    assert p.warmup == d.number("CR_DEF_QUICK_WARMUP")
    most, least, series = (d.number(f"CR_DEF_SWEEP_QUICK_{k}_HOSTED") for k in ("MAX_REPS", "MIN_REPS", "BYTES"))
    assert p.workset_reps(0) == most and p.workset_reps(2 * series) == least
    assert p.workset_reps(series // 1000) == 1000  # the series' bytes over the size, between the two


def test_runs_auto_is_estimated_from_its_first_decision_to_its_budget() -> None:
    """runs=auto: the estimate gives both ends; the --yes and silence limits take the budget."""
    fixed = estimate.plan("bench=workset runs=20")
    auto = estimate.plan("bench=workset runs=auto budget=20")
    assert auto.auto and auto.runs == 5 and auto.runs_max == 20 and not fixed.auto
    low = estimate.estimate(estimate.plan("bench=workset runs=5"), "qemu-icount", 128)
    high = estimate.estimate(fixed, "qemu-icount", 128)
    est = estimate.estimate(auto, "qemu-icount", 128)
    assert low is not None and high is not None and est is not None
    assert est.seconds == high.seconds and est.seconds_min == low.seconds
    assert "runs=auto, 5 to 20 rounds per set" in est.text("qemu-icount")
    assert estimate.case_seconds(auto, "qemu-icount", 128) == estimate.case_seconds(fixed, "qemu-icount", 128)
    # a budget in seconds stops at the harness's most rounds; a budget below the first decision ends there
    assert estimate.plan("bench=workset runs=auto budget=30s").runs_max == 64
    assert (estimate.plan("bench=workset runs=auto budget=3").runs, estimate.plan("runs=auto budget=3").runs_max) == (3, 3)


def test_paper_suite_takes_hours_in_every_emulator() -> None:
    for emu in ("qemu", "qemu-icount", "iso", "uefi", "bochs"):
        est = estimate.estimate(estimate.plan("suite=paper"), emu, 128)
        assert est is not None and est.seconds > 3600, emu
        assert est.bytes > 2e14  # ~80 MiB of sizes x 4 x 100000 x 4 x 2


def test_longest_case_by_hand() -> None:
    """One case is all its rounds of one size (multi: with the switches); paging passes are separate cases."""
    p = estimate.plan("bench=workset,ctxsw,locks sizes=0,4K,1M reps=20 runs=3 warmup=1 paging=both")
    s = estimate.speed_of("qemu")
    cases = estimate.case_seconds(p, "qemu", 128)
    assert cases["workset"] == pytest.approx(4 * (2 * 20 * MIB / s.bytes_per_s + 40 * s.refill_s + 40 * s.switch_s))
    # ctxsw: 4 routines x 2 shapes x (2R switches + 2R loop iterations), 5 round robins of R and their loop R
    assert cases["ctxsw"] == pytest.approx(4 * 38 * 20 * s.switch_s)
    assert cases["locks"] == pytest.approx(4 * 20 * s.lock_rep_s)
    assert estimate.longest_case(p, "qemu", 128) == max(cases.values())


def test_longest_case_of_aspace_counts_the_probe_round() -> None:
    p = estimate.plan("bench=aspace sizes=1M reps=20 runs=3 warmup=1")
    s = estimate.speed_of("qemu")
    threads = 2 * 20 * MIB / s.bytes_per_s + 40 * s.refill_s + 40 * s.thread_switch_s
    assert estimate.longest_case(p, "qemu", 128) == pytest.approx(5 * max(threads, 20 * s.aspace_rep_s))


def test_longest_case_grows_with_sizes_and_reps() -> None:
    def case(cmdline: str) -> float:
        secs = estimate.longest_case(estimate.plan(cmdline), "qemu", 128)
        assert secs is not None
        return secs

    assert case("bench=workset sizes=1M reps=100") < case("bench=workset sizes=4M reps=100")
    assert case("bench=workset sizes=1M,4M reps=100") == case("bench=workset sizes=4M reps=100")
    assert case("bench=workset sizes=1M reps=100") < case("bench=workset sizes=1M reps=1000")
    assert case("bench=workset sizes=1M,100M reps=100") == case("bench=workset sizes=1M reps=100")  # 100M does not fit
    assert case("bench=workset sizes=1M reps=100 paging=both") == case("bench=workset sizes=1M reps=100 paging=on")


@pytest.mark.parametrize("cmdline", ["suite=quick", "suite=paper", "bench=locks reps=50000", "bench=ctxsw,aspace"])
@pytest.mark.parametrize("emu", ["qemu", "qemu-icount", "bochs", "hosted"])
def test_longest_case_is_part_of_the_run(cmdline: str, emu: str) -> None:
    p = estimate.plan(cmdline)
    est, case = estimate.estimate(p, emu, 128), estimate.longest_case(p, emu, 128)
    assert est is not None and case is not None and 0 < case < est.seconds


def test_no_longest_case_without_a_timed_benchmark() -> None:
    assert estimate.longest_case(estimate.plan("suite=selftest"), "qemu", 128) is None
    assert estimate.longest_case(estimate.plan("suite=paper"), "vmware", 128) is None


def test_silence_limit_from_the_longest_case() -> None:
    assert estimate.silence_for(1.0, 60) == 60
    assert estimate.silence_for(100.0, 60) == 330
    paper = estimate.longest_case(estimate.plan("suite=paper"), "qemu", 128)
    quick = estimate.longest_case(estimate.plan("suite=quick"), "qemu", 128)
    assert paper is not None and paper > 1800  # a 24 MiB case of 100000 reps: the better part of hours
    assert quick is not None and estimate.silence_for(quick, 60) == 60


@pytest.fixture
def fake(tmp_path: Path, fixtures_dir: Path) -> dict[str, Any]:
    kernel = tmp_path / "cleanroom.elf"
    kernel.write_bytes(b"\x7fELF fake")
    log = tmp_path / "play.log"
    log.write_bytes(synth_workset.log())
    info = tmp_path / "info.json"
    return {"kernel": kernel, "info": info,
            "args": ["--kernel", str(kernel), "--emulator-binary", str(fixtures_dir / "fake_emulator.py")],
            "env": {"FAKE_LOG": str(log), "FAKE_INFO": str(info), "CLEANROOM_RESULTS": str(tmp_path / "r")}}


@pytest.mark.parametrize("emu", ["qemu", "qemu-icount"])
def test_long_run_refused_without_yes(fake: dict[str, Any], emu: str) -> None:
    p = tool_proc("run", "--emulator", emu, "--cmdline", "suite=paper", *fake["args"], env=fake["env"])
    assert p.returncode == 5
    assert f"estimated duration under {emu}: ~" in p.stderr and "not started" in p.stderr and "--yes" in p.stderr
    assert not fake["info"].exists()  # nothing was started


def test_yes_starts_it_with_a_raised_silence_limit(fake: dict[str, Any],
                                                    tmp_path: Path) -> None:
    out = tmp_path / "o"
    p = tool_proc("run", "--cmdline", "suite=paper", "--yes", "--out", str(out), *fake["args"],
             env=fake["env"])
    assert p.returncode == 0, p.stderr
    case = estimate.longest_case(estimate.plan("suite=paper"), "qemu", 128)
    assert case is not None
    silence = 3 * case + 30
    assert f"silence limit raised to {silence:.0f} s for this run (longest case estimated at " in p.stderr
    assert fake["info"].exists() and "timeout" not in p.stderr
    run = json.loads((out / "results.json").read_text())["run"]
    assert run["silence"] == pytest.approx(silence) and run["timeout"] is None


def test_silence_option_wins_over_the_estimate(fake: dict[str, Any], tmp_path: Path) -> None:
    out = tmp_path / "o"
    p = tool_proc("run", "--cmdline", "suite=paper", "--yes", "--silence", "45", "--out", str(out),
             *fake["args"], env=fake["env"])
    assert p.returncode == 0, p.stderr
    assert "silence limit raised" not in p.stderr
    assert json.loads((out / "results.json").read_text())["run"]["silence"] == 45


def test_quiet_raises_the_limit_without_saying_so(fake: dict[str, Any], tmp_path: Path) -> None:
    out = tmp_path / "o"
    p = tool_proc("run", "--cmdline", "suite=paper", "--yes", "--quiet", "--out", str(out),
             *fake["args"], env=fake["env"])
    assert p.returncode == 0, p.stderr
    assert "silence limit raised" not in p.stderr
    assert json.loads((out / "results.json").read_text())["run"]["silence"] > 600


def test_short_run_starts_quietly(fake: dict[str, Any], tmp_path: Path) -> None:
    p = tool_proc("run", "--cmdline", "suite=quick", "--out", str(tmp_path / "o"), *fake["args"],
             env=fake["env"])
    assert p.returncode == 0 and "estimated duration" not in p.stderr and "silence limit" not in p.stderr
    est = estimate.estimate(estimate.plan("suite=quick"), "qemu", 128)
    assert est is not None and est.seconds < 30  # not printed
    run = json.loads((tmp_path / "o" / "results.json").read_text())["run"]
    assert run["silence"] == 60 and run["timeout"] is None  # its cases are short: the default stays


def test_hosted_is_never_refused(fake: dict[str, Any], tmp_path: Path, fixtures_dir: Path) -> None:
    p = tool_proc("run", "--emulator", "hosted", "--cmdline", "suite=paper", "--out", str(tmp_path / "o"),
             "--emulator-binary", str(fixtures_dir / "fake_emulator.py"), env=fake["env"])
    assert p.returncode == 0, p.stderr
    assert "estimated duration under hosted: ~" in p.stderr and "not started" not in p.stderr
    silence = json.loads((tmp_path / "o" / "results.json").read_text())["run"]["silence"]
    est = estimate.estimate(estimate.plan("suite=paper"), "hosted", 3072)
    case = estimate.longest_case(estimate.plan("suite=paper"), "hosted", 3072)
    assert est is not None and est.seconds > 600
    assert case is not None and silence == pytest.approx(3 * case + 30) and silence > 60
