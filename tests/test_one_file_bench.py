"""A benchmark in one file and one line, as docs/LAYOUT.md promises ("Adding a benchmark"): a user's `xchg`
(an xchg with memory against the mov pair that swaps the same word, and an xchg between registers; a movbe
pair where the CPU has it) planted as bench/xchg.c and one line BENCH(bench_xchg) in bench/registry.def of a
copy of the tree, and nothing else: no report module, no default in lib/defaults.h, no docs. The copy is
built once per session (the kernel's and the hosted build's objects copied from build/, so that only the new
file and the registry's includer compile again), booted once under qemu-icount, and reported: its summary
line, its table and its figure are in report.txt, report.html and plots/ (the generic report,
docs/REPORT.md), its suites are read from its file (machines/registry.py) and the duration estimate names it
as a benchmark it has no cost model for."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from booting import made_once, of_type, shared_boot, tool_main
from test_planted_bugs import TARGETS, make_tree, planted_tree
from cleanroom_host.machines import estimate, registry
from cleanroom_host.reports import generic

# The user's benchmark, whole: bench/harness.h's bench_plan, bench_measure and bench_skip; its reps in its
# own file until tuned (tests/test_defaults.py allows that to a benchmark the estimate has no model for).
XCHG_C = """/* bench xchg: an xchg with memory (locked, with or without the prefix) against the
 * two movs that swap the same word unlocked, and an xchg between registers; the
 * movbe pair where the CPU has it. A sample is `reps` swaps; the harness divides. */
#include "arch/cpu.h"
#include "arch/tsc.h"
#include "bench/registry.h"

#define XCHG_REPS 1000 /* until tuned: then lib/defaults.h (docs/LAYOUT.md) */

static volatile uint32_t word;

static int64_t xchg_mem(void *arg)
{
    uint32_t reps = *(const uint32_t *)arg, r = 1;
    uint64_t a = tsc_begin();
    for (uint32_t i = 0; i < reps; i++)
        __asm__ volatile("xchg %0, %1" : "+r"(r), "+m"(word));
    uint64_t b = tsc_end();
    return (int64_t)(b - a);
}

static int64_t mov_pair(void *arg)
{
    uint32_t reps = *(const uint32_t *)arg, r = 1, t;
    uint64_t a = tsc_begin();
    for (uint32_t i = 0; i < reps; i++)
        __asm__ volatile("mov %1, %2\\n\\tmov %0, %1\\n\\tmov %2, %0" : "+r"(r), "+m"(word), "=&r"(t));
    uint64_t b = tsc_end();
    return (int64_t)(b - a);
}

static int64_t xchg_reg(void *arg)
{
    uint32_t reps = *(const uint32_t *)arg, r = 1, s = 2;
    uint64_t a = tsc_begin();
    for (uint32_t i = 0; i < reps; i++)
        __asm__ volatile("xchg %0, %1" : "+r"(r), "+r"(s));
    uint64_t b = tsc_end();
    return (int64_t)(b - a);
}

static int64_t movbe_pair(void *arg)
{
    uint32_t reps = *(const uint32_t *)arg, r = 1, t;
    uint64_t a = tsc_begin();
    for (uint32_t i = 0; i < reps; i++)
        __asm__ volatile("movbe %1, %2\\n\\tmovbe %0, %1\\n\\tmov %2, %0" : "+r"(r), "+m"(word), "=&r"(t));
    uint64_t b = tsc_end();
    return (int64_t)(b - a);
}

static const struct {
    const char *name;
    bench_run_fn fn;
    enum cpu_feature needs;
    const char *why;
} cases[] = {
    { "xchg_mem", xchg_mem, FEAT_TSC, "" },
    { "mov_pair", mov_pair, FEAT_TSC, "" },
    { "xchg_reg", xchg_reg, FEAT_TSC, "" },
    { "movbe_pair", movbe_pair, FEAT_MOVBE, "the CPU lacks movbe" },
};

static void run(struct bench_ctx *ctx)
{
    uint32_t reps = bench_reps(ctx, XCHG_REPS);
    const uint32_t n = sizeof cases / sizeof cases[0];
    bench_plan(ctx, n);
    for (uint32_t i = 0; i < n; i++) {
        if (!cpu_has(cases[i].needs)) {
            bench_skip(ctx, cases[i].name, cases[i].why);
            continue;
        }
        struct bench_case c = { .name = cases[i].name, .nparams = 1, .per = reps };
        c.params[0] = (struct bench_param)PARAM_NUM("reps", reps);
        bench_measure(ctx, &c, cases[i].fn, &reps);
    }
}

const struct bench bench_xchg = {
    .name = "xchg",
    .what = "an xchg with memory against a mov pair and a register xchg",
    .run = run,
};
"""
REGISTRY_LINE = "BENCH(bench_xchg)\n"
REPS = 100
# Both paging modes (the default suite's paging=both), three samples a case: one boot of about 0.3 s
CMDLINE = f"bench=xchg runs=3 warmup=0 reps={REPS}"
MEASURED = ("xchg_mem", "mov_pair", "xchg_reg")  # movbe_pair: QEMU's default CPU lacks movbe


def one_file_tree(root: Path) -> Path:
    """The copy of the tree with the benchmark planted, built once per session for every xdist worker: its
    directory."""
    where = root / "one-file-bench"

    def build() -> dict[str, Any]:
        tree = planted_tree(where / "tree", ())
        (tree / "bench" / "xchg.c").write_text(XCHG_C)
        with (tree / "bench" / "registry.def").open("a") as f:
            f.write(REGISTRY_LINE)
        return make_tree(tree)

    built = made_once(where, build)
    assert built["rc"] == 0, built["log"]
    return where / "tree"


@pytest.fixture(scope="module")
def tree(boots_root: Path) -> Path:
    return one_file_tree(boots_root)


@pytest.fixture(scope="module")
def reported(tree: Path, boots_root: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The planted kernel's boot (once per session) and its report, with figures: results.json and the
    report's directory."""
    rc, res = shared_boot(boots_root, "qemu-icount", CMDLINE, "--kernel", str(tree / TARGETS[0]))
    assert rc == 0 and res["complete"], rc
    results = tmp_path_factory.mktemp("xchg-results")
    (results / "results.json").write_text(json.dumps(res))
    out = tmp_path_factory.mktemp("xchg-report")
    code, stdout, stderr = tool_main("report", str(results), "--out", str(out))
    assert code == 0, stderr
    return {"res": res, "out": out, "stdout": stdout}


@pytest.mark.early  # the planted tree is built first (several seconds beside the rest)
def test_it_builds_from_one_file_and_one_line(tree: Path) -> None:
    """Only the new file and the registry's includer were compiled again: the rest came from build/."""
    for objects in ("build/obj", "build/obj-hosted"):
        newer = {p.relative_to(tree / objects) for p in (tree / objects).rglob("*.o")
                 if p.stat().st_mtime > (tree / "bench" / "xchg.c").stat().st_mtime}
        assert newer == {Path("bench/xchg.o"), Path("bench/registry.o")}, (objects, newer)
    assert all((tree / t).is_file() for t in TARGETS)


def test_it_runs_its_cases(reported: dict[str, Any]) -> None:
    results = [r for r in of_type(reported["res"], "result") if r["bench"] == "xchg"]
    assert sorted({r["case"] for r in results}) == sorted(MEASURED)
    assert {r["params"]["paging"] for r in results} == {"off", "on"} and {r["per"] for r in results} == {REPS}
    skips = [s for s in of_type(reported["res"], "skip") if s.get("bench") == "xchg"]
    assert [(s["what"], s["why"]) for s in skips] == [("movbe_pair", "the CPU lacks movbe")] * 2


def summary_line(text: str) -> str:
    """The summary's line of the benchmark, its wrapped lines joined."""
    lines = text.splitlines()
    i = next(i for i, line in enumerate(lines) if line.startswith("  xchg, "))
    out = lines[i]
    for line in lines[i + 1:]:
        if not line.startswith("      "):
            break
        out += " " + line.strip()
    return out


def test_its_summary_line_names_every_case_in_instructions(reported: dict[str, Any]) -> None:
    """Under qemu-icount each case is instructions per swap, exact: the loop around each is the same, so the
    mov pair is the xchg with memory and two instructions more, and an xchg between registers is one as well."""
    text = (reported["out"] / "report.txt").read_text()
    assert reported["stdout"] in text  # report.txt begins with the summary
    line = summary_line(text)
    m = re.fullmatch(r"  xchg, instructions per operation, paging off and on/4k: "
                     r"xchg_mem (\d+), mov_pair (\d+), xchg_reg (\d+)", line)
    assert m, line
    xchg_mem, mov_pair, xchg_reg = map(int, m.groups())
    assert mov_pair == xchg_mem + 2 and xchg_reg == xchg_mem, line
    assert "skipped: 1 (movbe_pair: the CPU lacks movbe)" in text.splitlines()


def test_its_table_is_in_report_txt(reported: dict[str, Any]) -> None:
    text = (reported["out"] / "report.txt").read_text().splitlines()
    head = next(i for i, line in enumerate(text)
                if line.startswith("xchg: instructions per operation, median (lo..hi), per paging mode"))
    assert text[head + 1].split() == ["case", "per", "n", "paging", "off", "paging", "on/4k"]
    rows = [line.split() for line in text[head + 3:head + 3 + len(MEASURED)]]
    assert [r[:3] for r in rows] == [[case, str(REPS), "3"] for case in MEASURED]
    assert all(r[3] == r[4] and r[3].isdigit() for r in rows), rows  # exact, and the same in both modes


def test_its_figure_is_in_plots_and_in_report_html(reported: dict[str, Any]) -> None:
    png = reported["out"] / "plots" / f"{generic.FILE_PREFIX}xchg.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    page = (reported["out"] / "report.html").read_text()
    assert f'alt="{png.name}"' in page or png.name in page
    assert generic.CAPTIONS[generic.FILE_PREFIX].split(":")[0] in page.replace("&#39;", "'")
    assert "benchmarks without a report module" in page
    for case in MEASURED:
        assert f">{case}<" in page  # a row of the answers' table for each case


def test_its_suites_come_from_its_file_and_the_estimate_names_it(tree: Path) -> None:
    """No in_quick, no in_smp: in suite=paper and suite=all of both builds, not in quick or smp; the estimate
    counts it as 0 s and says so."""
    benches = registry.load(tree)
    for hosted in (False, True):
        assert registry.suite(benches, "paper", hosted)[-1] == "xchg"
        assert "xchg" not in registry.suite(benches, "quick", hosted) + registry.suite(benches, "smp", hosted)
    p = estimate.plan("suite=paper", benches=benches)
    assert p.unmodelled()[-1] == "xchg"
    est = estimate.estimate(p, "qemu-icount", 128)
    assert est is not None and "xchg" in est.text("qemu-icount")
