"""lib/defaults.h, the one source of every benchmark's and suite's defaults:
the host reads it strictly, the duration estimate's figures are what the
kernel and the hosted build actually use, and no C file keeps a copy."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from booting import HOSTED, KERNEL, boot, built, installed, of_type, shared_boot
from cleanroom_host.machines import defaults, estimate, registry

REPO = Path(__file__).resolve().parent.parent
HEADER = REPO / "lib" / "defaults.h"

# Small boots whose records show every default the header holds: each
# reaches both clamps of the quick reps formula (its minimum binds at 1M
# under the kernel, at 32M hosted). Keys not given are the defaults.
KERNEL_BOOTS = (
    "suite=quick bench=tsc",  # the quick suite's runs, warmup, maxsize, budget
    "bench=tsc runs=auto",  # runs=auto's first decision (icount: every set converges there)
    "suite=selftest bench=tsc runs=65",  # more runs than a record carries samples of
    "suite=paper bench=tsc",
    "suite=selftest bench=tsc",  # outside the quick and paper suites
    "suite=quick bench=workset,ctxsw,locks,aspace maxsize=1M runs=1 warmup=0 paging=on",
    "suite=paper bench=workset,ctxsw sizes=0 runs=1 warmup=0 paging=off",
    "bench=coherence,falseshare,isolation,aslock,smplocks cpus=2 runs=1 warmup=0",
)
HOSTED_BOOTS = (
    "suite=quick bench=tsc",
    "suite=quick bench=workset,ctxsw,locks,peers sizes=0,64K,32M runs=1 warmup=0",
    "bench=coherence,falseshare,isolation,smplocks,linuxvm cpus=2 runs=1 warmup=0",
)
SMP_BENCHES = ("coherence", "falseshare", "isolation", "smplocks", "aslock", "linuxvm")
# One round of suite=paper's locks or aspace takes 10-30 s under qemu-icount, and
# the multi-CPU benchmarks' paper figures (1M increments a CPU) longer: these are
# checked only in the sources (test_no_c_file_keeps_its_own_default).
# runs=auto's most rounds shows as budget='s accepted range (test_the_budget_limit_is_the_headers).
NOT_BOOTED = {"CR_DEF_LOCKS_PAPER_REPS", "CR_DEF_ASPACE_PAPER_REPS", "CR_DEF_COHERENCE_PAPER_REPS",
              "CR_DEF_FALSESHARE_PAPER_REPS", "CR_DEF_ISOLATION_PAPER_REPS", "CR_DEF_SMPLOCKS_PAPER_REPS",
              "CR_DEF_AUTO_MAX_RUNS", "CR_DEF_REPLICAS_MAX", "CR_DEF_ADDED_MAX", "CR_DEF_LAYOUT_SEED",
              # bench asm runs only with the user's code, which these boots have not: tests/test_usercode.py
              # reads its copies and reps in the records, its scratch buffer's last word, and copies='s range
              "CR_DEF_ASM_COPIES", "CR_DEF_ASM_COPIES_MAX", "CR_DEF_ASM_REPS", "CR_DEF_ASM_SCRATCH"}


def booted(root: Path, hosted: bool, cmdline: str) -> tuple[int, dict[str, Any]]:
    """One small boot, shared by the tests; the kernel's cpus=N given as --cpus N (QEMU -smp N too).
    Plain TCG, where the parameters are all that is read (half the time of -icount); runs=auto
    under -icount, where every set converges at its first decision."""
    if hosted:  # the hosted run pins itself to the CPUs its cpus= asks for
        built(HOSTED, "hosted")
        return shared_boot(root, "hosted", cmdline)
    built(KERNEL, "all")
    emulator = "qemu-icount" if "runs=auto" in cmdline else "qemu"
    cpus = re.search(r"\bcpus=(\d+)", cmdline)
    if not cpus:
        return shared_boot(root, emulator, cmdline)
    return shared_boot(root, emulator, cmdline.replace(cpus.group(0), "").strip(), "--cpus", cpus.group(1))


def boots(root: Path) -> list[tuple[bool, str, dict[str, Any]]]:
    """(hosted, cmdline, results.json) of every small boot, each booted once per session."""
    out = []
    for hosted, cmdlines in ((False, KERNEL_BOOTS), (True, HOSTED_BOOTS)):
        for cmdline in cmdlines:
            rc, res = booted(root, hosted, cmdline)
            assert rc == 0 and res["complete"], f"{cmdline}: exit status {rc}"
            out.append((hosted, cmdline, res))
    return out


def mismatches(header: defaults.Defaults, hosted: bool, cmdline: str, res: dict[str, Any]) -> list[str]:
    """Every figure the build used (config record, result params) that differs from
    what the estimate predicts from `header` for this command line, naming the default."""
    p = estimate.plan(cmdline, hosted=hosted, header=header)
    names = p.fig.names
    out: list[str] = []

    def check(what: str, used: object, predicted: object, *sources: str) -> None:
        if used != predicted:
            named = ", ".join(names.get(s, s) for s in sources)
            out.append(f"{cmdline!r}{' (hosted)' if hosted else ''}: {what}: the build used {used}, "
                       f"the estimate predicts {predicted} from {named}")

    (config,) = of_type(res, "config")
    cfg, given = config["cfg"], set(config["given"])
    suite_field = f"{p.suite}_{{}}" if p.suite in estimate.SWEEP_SUITES else "{}"
    runs: object = "auto" if p.auto else p.runs
    for key, value in (("runs", runs), ("warmup", p.warmup), ("maxsize", p.maxsize)):
        if key not in given:
            check(f"config {key}", cfg[key], value, suite_field.format(key))
    if "budget" not in given:
        check("config budget", cfg["budget"], estimate.budget_rounds(None, p.fig, p.suite),
              "quick_budget" if p.suite == "quick" else "auto_budget")
    if "precision" not in given:
        check("config precision", cfg["precision"], p.fig.auto_precision_bp, "auto_precision_bp")
    if "margin" not in given:  # the host's decisions read it (reports/decisions.py), the kernel reports it
        check("config margin", cfg["margin"], header.number("CR_DEF_MARGIN_BP"), "CR_DEF_MARGIN_BP")
    paper = p.suite == "paper"
    sweep = ("sweep_paper_reps",) if paper else ("sweep_quick_bytes", "sweep_quick_min_reps", "sweep_quick_max_reps")
    results = of_type(res, "result")
    for r in results:  # samples in every record of at most CR_DEF_SAMPLES_MAX runs (without raw=1)
        if cfg.get("raw") is False:
            check(f"{r['bench']} {r['case']}: samples with n={r['n']}", "samples" in r,
                  r["n"] <= header.number("CR_DEF_SAMPLES_MAX"), "CR_DEF_SAMPLES_MAX")
        if r.get("converged") is True and not hosted:  # icount: every set converges at the first decision
            check(f"{r['bench']} {r['case']}: runs=auto rounds", r["n"], p.runs, "auto_min_runs")
    for bench in p.benches:
        assert any(r["bench"] == bench for r in results), f"{cmdline!r}: no {bench} result"
    ws = {(r["params"]["size"], r["params"]["reps"]) for r in results if r["bench"] == "workset"}
    if ws and "sizes" not in given:
        check("workset sizes", sorted({s for s, _ in ws}), p.sizes,
              "the sweep's formula (estimate.default_sizes)" if "maxsize" in given else suite_field.format("maxsize"))
    for size, reps in sorted(ws):
        check(f"workset reps at size {size}", reps, p.workset_reps(size), *sweep)
    for r in results:
        case, params = r["case"], r["params"]
        if r["bench"] == "ctxsw" and params.get("shape") in ("symmetric", "asymmetric"):
            check(f"ctxsw {case} reps", params["reps"], p.ctxsw_reps(), "ctxsw_paper_reps" if paper else "ctxsw_reps")
        if r["bench"] == "locks" and "reps" in params and case != "contended":  # contended: a share of them
            check(f"locks {case} reps", params["reps"], p.locks_reps(), "locks_paper_reps" if paper else "locks_reps")
        if r["bench"] == "aspace" and case == "tlb_refill":  # a fixed count, not the estimate's
            check("aspace tlb_refill reps", params["reps"], header.number("CR_DEF_ASPACE_TLB_REPS"),
                  "CR_DEF_ASPACE_TLB_REPS")
        elif r["bench"] == "aspace" and case == "workset_threads":
            check(f"aspace workset_threads reps at size {params['size']}", params["reps"],
                  p.workset_reps(params["size"]), *sweep)
        elif r["bench"] == "aspace" and "reps" in params and case != "map_unmap":  # map_unmap: a tenth
            check(f"aspace {case} reps", params["reps"], p.aspace_reps(),
                  "aspace_paper_reps" if paper else "aspace_reps")
        if r["bench"] == "peers" and case.startswith("switch_") and "switches" in params:  # 2 per rep
            check(f"peers {case} switches", params["switches"], 2 * header.number("CR_DEF_PEERS_REPS"),
                  "CR_DEF_PEERS_REPS")
        if r["bench"] in SMP_BENCHES and "reps" in params:
            paper_field = f"{r['bench']}_paper_reps"
            field = paper_field if paper and hasattr(p.fig, paper_field) else f"{r['bench']}_reps"
            factor = ("falseshare_plain_factor",) if r["bench"] == "falseshare" and params.get("op") == "plain" else ()
            check(f"{r['bench']} {case} reps", params["reps"], p.smp_reps(r["bench"], params.get("op")), field,
                  *factor)
    check_smplocks(p.fig, [r for r in results if r["bench"] == "smplocks"], check)
    rr = sorted(r["params"]["n"] for r in results if r["bench"] == "ctxsw" and r["case"] == "rr")
    if rr:
        check("ctxsw rr fiber counts", rr, sorted(p.fig.ctxsw_rr_ns), "ctxsw_rr_ns")
    threads = sorted(r["params"]["size"] for r in results if r["case"] == "workset_threads")
    if threads:
        check("aspace workset_threads sizes", threads, p.aspace_sizes(), "aspace_quick_sizes")
    return out


def check_smplocks(fig: estimate.Figures, results: list[dict[str, Any]], check: Any) -> None:
    """The spin-then-block locks' loops and starve threshold in smplocks' records, through check()."""
    if not results:
        return
    rules = ("spinblock_handoff", "spinblock_barge")
    for r in results:
        p = r["params"]
        if r["case"] not in ("sweep", "litethreads") and p.get("lock", "").startswith("spinblock"):
            check(f"smplocks {r['case']} {p['lock']} lock_loops", p["lock_loops"], fig.smplocks_spin_loops,
                  "smplocks_spin_loops")
        if "starve_us" in p:
            check(f"smplocks {r['case']} starve_us", p["starve_us"], fig.smplocks_starve_us, "smplocks_starve_us")
        if p.get("lock", "").startswith("spinblock"):
            check(f"smplocks {r['case']} {p['lock']} backoff", p["backoff"], fig.smplocks_backoff_max,
                  "smplocks_backoff_max")
    swept = {(p["lock"], p["lock_loops"], p["unlock_loops"]) for r in results if r["case"] == "sweep"
             for p in [r["params"]] if p["lock"] in rules}
    want = {(rule, a, b) for rule in rules for a in fig.smplocks_sweep_lock_loops
            for b in fig.smplocks_sweep_unlock_loops}
    check("smplocks sweep settings", sorted(swept), sorted(want), "smplocks_sweep_lock_loops",
          "smplocks_sweep_unlock_loops")


def copy_with(tmp_path: Path, name: str, value: str) -> Path:
    """A copy of lib/defaults.h with `name` defined as `value`."""
    text, n = re.subn(rf"^#define {name} .*$", f"#define {name} {value}", HEADER.read_text(), flags=re.M)
    assert n == 1, name
    copy = tmp_path / "defaults.h"
    copy.write_text(text)
    return copy


# --- the parser --------------------------------------------------------------------------


def test_the_estimate_finds_every_default_it_needs() -> None:
    header = defaults.load()
    assert header.path == HEADER
    for hosted in (False, True):
        fig = estimate.figures(header, hosted)
        assert set(fig.names.values()) <= set(header.values)
        assert all(isinstance(v, int) and v > 0 for k, v in vars(fig).items() if k.endswith("reps"))
    kernel, hosted_fig = estimate.figures(header, False), estimate.figures(header, True)
    assert kernel.names["quick_runs"] == "CR_DEF_QUICK_RUNS_KERNEL"
    assert hosted_fig.names["quick_runs"] == "CR_DEF_QUICK_RUNS_HOSTED" and hosted_fig.names["runs"] == "CR_DEF_RUNS"
    assert isinstance(kernel.aspace_quick_sizes, tuple) and isinstance(kernel.ctxsw_rr_ns, tuple)


def test_the_parser_reads_the_header_as_the_c_compiler_does(tmp_path: Path) -> None:
    """Every value, printed by a C program that includes the header, is the parser's."""
    cc = installed("gcc")
    values = defaults.load().values
    lines = []
    for name, value in values.items():
        if isinstance(value, tuple):
            lines.append(f'{{ static const unsigned long long v[] = {name}; printf("{name}");'
                         f' for (unsigned i = 0; i < sizeof v / sizeof v[0]; i++) printf(" %llu", v[i]); puts(""); }}')
        else:
            lines.append(f'printf("{name} %llu\\n", (unsigned long long)({name}));')
    src = tmp_path / "print.c"
    src.write_text('#include <stdio.h>\n#include "lib/defaults.h"\nint main(void)\n{\n'
                   + "\n".join(lines) + "\nreturn 0;\n}\n")
    exe = tmp_path / "print"
    subprocess.run([cc, "-std=c11", "-Wall", "-Wextra", "-Werror", f"-I{REPO}", "-o", str(exe), str(src)],
                   check=True, timeout=60)
    printed = subprocess.run([str(exe)], capture_output=True, text=True, check=True, timeout=60).stdout
    parsed = {}
    for line in printed.splitlines():
        name, *numbers = line.split()
        parsed[name] = tuple(map(int, numbers)) if isinstance(values[name], tuple) else int(numbers[0])
    assert parsed == values


@pytest.mark.parametrize("bad, why", [
    ("#define CR_DEF_NEW 2 + 1", "'+' is not accepted"),
    ("#define CR_DEF_NEW 0x10", "'0x10' is not accepted"),
    ("#define CR_DEF_NEW 010", "'010' is not accepted"),  # octal in C
    ("#define CR_DEF_NEW 10ul", "'10ul' is not accepted"),
    ("#define CR_DEF_NEW (1u << 31)", "does not stay below 2^31"),
    ("#define CR_DEF_NEW 65536 * 65536", "is not below 2^31"),
    ("#define CR_DEF_NEW (4u << 20", "'(' is not closed"),
    ("#define CR_DEF_NEW { 1, 2, }", "expected a number"),
    ("#define CR_DEF_NEW { 1 2 }", "expected ',' or '}'"),
    ("#define CR_DEF_NEW CR_DEF_RUNS", "'CR_DEF_RUNS' is not accepted"),
    ("#define CR_DEF_RUNS 12", "CR_DEF_RUNS is defined twice"),
    ("#define QUICK_REPS 1000", "expected `#define CR_DEF_NAME VALUE`"),
    ("#ifdef CLEANROOM_HOSTED", "expected `#define CR_DEF_NAME VALUE`"),
    ("#include <stdint.h>", "expected `#define CR_DEF_NAME VALUE`"),
    ("#define CR_DEF_NEW 3 // three", "only block comments"),
])
def test_a_line_it_cannot_read_is_an_error_naming_it(tmp_path: Path, bad: str, why: str) -> None:
    lines = HEADER.read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("#define CR_DEF_PEERS_REPS")) + 1
    copy = tmp_path / "defaults.h"
    copy.write_text("\n".join([*lines[:at], bad, *lines[at:]]) + "\n")
    with pytest.raises(defaults.DefaultsError) as exc:
        defaults.load(copy)
    message = str(exc.value)
    assert message.startswith(f"{copy}:{at + 1}: cannot read ") and why in message
    assert bad.split("//")[0].strip() in message


def test_a_missing_default_is_named(tmp_path: Path) -> None:
    text = HEADER.read_text()
    for name, hosted in (("CR_DEF_CTXSW_PAPER_REPS", False), ("CR_DEF_QUICK_RUNS_HOSTED", True)):
        copy = tmp_path / f"{name}.h"
        copy.write_text(re.sub(rf"^#define {name} .*\n", "", text, flags=re.M))
        with pytest.raises(defaults.DefaultsError, match=f"{re.escape(str(copy))} has no {name}"):
            estimate.plan("suite=quick", hosted=hosted, header=defaults.load(copy))


def test_an_unreadable_header_stops_a_run_before_it_starts(tmp_path: Path) -> None:
    """The tool reads this repository's header: a broken one is named, and nothing boots."""
    repo = tmp_path / "repo"
    shutil.copytree(REPO / "tools", repo / "tools", ignore=shutil.ignore_patterns("__pycache__", "cachemodel"))
    (repo / "lib").mkdir()
    (repo / "lib" / "defaults.h").write_text(HEADER.read_text().replace("#define CR_DEF_RUNS 11",
                                                                        "#define CR_DEF_RUNS eleven"))
    tool = [sys.executable, str(repo / "tools" / "cleanroom")]
    proc = subprocess.run([*tool, "run", "--kernel", str(tmp_path / "none.elf"), "--out", str(tmp_path / "out")],
                          capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert proc.returncode == 5, proc.stderr
    assert "not started" in proc.stderr and "defaults.h:" in proc.stderr and "'eleven' is not accepted" in proc.stderr
    assert not (tmp_path / "out").exists()


# --- the builds use what the estimate predicts -----------------------------------------------


@pytest.mark.parametrize("hosted, cmdline", [
    *(pytest.param(False, c, id=f"kernel {c}") for c in KERNEL_BOOTS),
    *(pytest.param(True, c, id=f"hosted {c}") for c in HOSTED_BOOTS),
])
@pytest.mark.early
def test_the_builds_use_the_estimates_figures(boots_root: Path, hosted: bool, cmdline: str) -> None:
    rc, res = booted(boots_root, hosted, cmdline)
    assert rc == 0 and res["complete"]
    assert mismatches(defaults.load(), hosted, cmdline, res) == []


def _doubled(value: int | tuple[int, ...]) -> str:
    """Twice the value (0, which doubles to itself: 1)."""
    return f"{{ {', '.join(str(2 * v) for v in value)} }}" if isinstance(value, tuple) else str(2 * value or 1)


@pytest.mark.parametrize("name", sorted(set(defaults.parse(HEADER.read_text())) - NOT_BOOTED))
def test_a_default_changed_on_one_side_only_is_named(boots_root: Path, tmp_path: Path, name: str) -> None:
    """The header's value doubled (0: made 1), the builds not rebuilt: the check above names that default."""
    changed = defaults.load(copy_with(tmp_path, name, _doubled(defaults.load().values[name])))
    found = [m for hosted, cmdline, res in boots(boots_root) for m in mismatches(changed, hosted, cmdline, res)]
    assert found and all(name in m for m in found), found


@pytest.mark.usefixtures("kernel_elf")
def test_the_budget_limit_is_the_headers(tmp_path: Path) -> None:
    """runs=auto's most rounds (a budget in seconds stops there too) is budget='s upper limit."""
    most = defaults.load().number("CR_DEF_AUTO_MAX_RUNS")
    rc, res = boot(tmp_path, "qemu-icount", f"bench=tsc runs=auto budget={most + 1}")
    assert rc == 2
    err = next(r for r in of_type(res, "error") if r["code"] == "cmdline")
    assert err["token"] == f"budget={most + 1}" and f"from 1 to {most}, or Ns" in err["accepted"]


# --- no C file keeps a default of its own -------------------------------------------------------

C_DIRS = ("boot", "arch", "lib", "kernel", "runtime", "bench", "app", "hosted")
# What a copied default looks like: a numeric #define of a defaults-like name, a
# literal fallback of bench_reps(), a literal assigned to runs/warmup/maxsize, an
# array of sizes or fiber counts written out.
STRAY = [
    re.compile(r"#\s*define\s+\w*(REPS|RUNS|WARMUP|MAXSIZE|QUICK|PAPER)\w*\s+[0-9(]"),
    re.compile(r"bench_reps\(\s*ctx\s*,[^;]*\b[0-9]"),
    re.compile(r"(\.|->)(runs|warmup|maxsize)\s*=(?!=)[^;]*\b[0-9]"),
    re.compile(r"\w*(sizes|_ns)\w*\[\]\s*=\s*\{[^}]*[0-9]"),
]


DEFAULTS_INCLUDE = '#include "lib/defaults.h"'


def untuned(root: Path = REPO) -> set[Path]:
    """The files of the benchmarks that may keep their defaults in their own file until tuned (docs/LAYOUT.md,
    "Adding a benchmark"): one the duration estimate has no cost model for (estimate.MODELLED) and whose file
    does not include lib/defaults.h."""
    return {b.source for b in registry.load(root)
            if b.name not in estimate.MODELLED and DEFAULTS_INCLUDE not in b.source.read_text()}


def default_users() -> list[Path]:
    """The C files that pick defaults: every file of bench/ but an untuned benchmark's, and the config and
    suite defaults."""
    exempt = untuned()
    files = [p for p in sorted((REPO / "bench").glob("*.c")) if p not in exempt]
    for d in C_DIRS:
        files += [p for p in sorted((REPO / d).glob("*.c"))
                  if re.search(r"^void (config|suite)_defaults\(", p.read_text(), re.M)]
    return files


def stray_defaults(files: list[Path]) -> list[str]:
    return [f"{p.name}:{i}: {line.strip()}" for p in files for i, line in enumerate(p.read_text().splitlines(), 1)
            if any(rx.search(line) for rx in STRAY)]


def test_no_c_file_keeps_its_own_default() -> None:
    files = default_users()
    assert {p.name for p in files} >= {"config.c", "suite.c", "sweep.c", "ctxsw.c", "locks.c", "aspace.c", "peers.c",
                                       "workset.c", "tsc.c", "create.c", "coherence.c", "linuxvm.c"}
    assert stray_defaults(files) == []


UNTUNED = """/* bench xchg: a new benchmark whose reps are not tuned yet */
#include "bench/registry.h"

#define XCHG_REPS 1000

static void run(struct bench_ctx *ctx)
{
    (void)bench_reps(ctx, XCHG_REPS);
}

const struct bench bench_xchg = {
    .name = "xchg",
    .run = run,
};
"""


def test_an_untuned_benchmark_may_keep_its_default_until_it_includes_the_header(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A new benchmark's file (no cost model, no lib/defaults.h) may write its reps itself; once it includes
    the header, or the estimate models it, the check above reads it and names the line."""
    shutil.copytree(REPO / "bench", tmp_path / "bench", ignore=shutil.ignore_patterns("*.h"))
    registry_def = tmp_path / "bench" / "registry.def"
    registry_def.write_text(registry_def.read_text() + "BENCH(bench_xchg)\n")
    source = tmp_path / "bench" / "xchg.c"
    source.write_text(UNTUNED)
    assert source in untuned(tmp_path)
    assert {p.name for p in untuned(tmp_path)} - {"xchg.c"} == {p.name for p in untuned()}
    source.write_text(UNTUNED.replace('#include "bench/registry.h"', f'#include "bench/registry.h"\n{DEFAULTS_INCLUDE}'))
    assert source not in untuned(tmp_path)
    assert stray_defaults([source]) == ["xchg.c:5: #define XCHG_REPS 1000"]
    source.write_text(UNTUNED)
    monkeypatch.setattr(estimate, "MODELLED", estimate.MODELLED + ("xchg",))
    assert source not in untuned(tmp_path)


def test_every_default_in_the_header_is_used_by_the_c_code() -> None:
    code = "\n".join(p.read_text() for p in default_users())
    unused = [name for name in defaults.load().values if not re.search(rf"\b{name}\b", code)]
    assert unused == []


@pytest.mark.parametrize("used, literal", [
    ("CR_DEF_LOCKS_REPS", "10000"),
    ("CR_DEF_PAPER_RUNS", "3"),
    ("CR_DEF_RUNS", "11"),
    ("CR_DEF_ASPACE_QUICK_SIZES", "{ 0, 4096, 65536, 1u << 20 }"),
    ("#define QUICK_BYTES CR_DEF_SWEEP_QUICK_BYTES_KERNEL", "#define QUICK_BYTES (4u << 20)"),
])
def test_a_planted_literal_is_caught(tmp_path: Path, used: str, literal: str) -> None:
    """A C file that wrote the figure instead of the header's name fails the check, named."""
    source = next(p for p in default_users() if used in p.read_text())
    copy = tmp_path / source.name
    copy.write_text(source.read_text().replace(used, literal, 1))
    found = stray_defaults([copy])
    assert len(found) == 1 and found[0].startswith(f"{source.name}:") and literal in found[0]
