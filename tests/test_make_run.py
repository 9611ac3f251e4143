"""`make run`'s own path: the Makefile's run recipe is `tools/cleanroom make-run` with its three command
lines (CMDLINE, HOSTED_CMDLINE, HOSTED_SMP_CMDLINE); here the same command runs them with fewer runs and
repetitions, and the test checks what a user gets: three result sets (the kernel under qemu-icount, the
hosted build on one CPU, the hosted build on every CPU), results/latest pointing at them, and three
summaries that each answer for every benchmark their run measured. The full-size kernel step is the
quick suite under qemu-icount that the session boots once anyway (conftest.py's quick_icount): its
summary is checked from those results. Nothing here reads a time."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pytest

from booting import QUICK_ICOUNT, REPO, done, of_type, shared_dir, tool_main
from smpchecks import layout_problems

from cleanroom_host.records import results as results_files
from cleanroom_host import sweep
from cleanroom_host.cli import MAKE_RUN_STEPS

MAKEFILE = REPO / "Makefile"
# What each benchmark's answer in a summary begins with (the words of the report, docs/REPORT.md).
ANSWERS = {"ctxsw": "switch cost", "workset": "concurrency overhead", "locks": "locks,", "create": "create:",
           "aspace": "aspace,", "peers": "peers,", "coherence": "coherence,", "falseshare": "false sharing,"}
# Fewer runs and repetitions than make run's, the rest as the Makefile has it (a key may appear once).
SMALLER = {"kernel": {"runs": "2", "warmup": "0", "reps": "4", "maxsize": "4K"},
           "hosted": {"runs": "2", "warmup": "0", "reps": "16", "maxsize": "16K"},
           "smp": {"runs": "2", "warmup": "0", "reps": "500"}}
OPTION_VARIABLE = {"kernel_cmdline": "CMDLINE", "hosted_cmdline": "HOSTED_CMDLINE", "smp_cmdline": "HOSTED_SMP_CMDLINE"}


def make_variable(name: str) -> str:
    """A `NAME ?= value` of the Makefile."""
    found = re.search(rf"^{name} \?= (.*)$", MAKEFILE.read_text(), re.M)
    assert found, name
    return found.group(1).strip()


def smaller(cmdline: str, tokens: dict[str, str]) -> str:
    """The command line with these keys' values replaced, or added where it has none."""
    words = [w for w in cmdline.split() if w.split("=", 1)[0] not in tokens]
    return " ".join(words + [f"{k}={v}" for k, v in tokens.items()])


def summaries(stdout: str) -> list[str]:
    """The reports make-run printed, each from its `cleanroom report:` line."""
    return ["cleanroom report:" + part for part in stdout.split("cleanroom report:")[1:]]


def answer_problems(summary: str, res: dict[str, Any]) -> list[str]:
    """What a summary lacks: its answers heading (answers, not `no answers`), and an answer for each benchmark
    its run measured (the clock's tsc is in the machine lines)."""
    lines = summary.splitlines()
    heads = [line for line in lines if re.match(r"(no )?answers[;:]", line)]
    out = [] if len(heads) == 1 and heads[0].startswith("answers;") else [f"answers heading: {heads}"]
    benches = {r["bench"] for r in of_type(res, "result")} - {"tsc"}
    out += [f"no answer for {b}" for b in sorted(benches)
            if not any(line.strip().startswith(ANSWERS[b]) for line in lines)]
    return out + [f"other results: {line}" for line in lines if "other results" in line]


def test_make_runs_recipe_is_the_make_run_command() -> None:
    """What the test below runs is what `make run` runs: the recipe calls make-run with its three variables."""
    recipe = MAKEFILE.read_text().split("\nrun:\n", 1)[1].split("\n\n", 1)[0].replace("\\\n", " ")
    call = " ".join(line.strip() for line in recipe.splitlines() if "tools/cleanroom" in line)
    assert call.startswith("tools/cleanroom make-run --out $(RUN_DIR) "), recipe
    for option, variable in OPTION_VARIABLE.items():
        assert f"--{option.replace('_', '-')} \"$({variable})\"" in " ".join(call.split()), (option, call)
    assert [step.option for step in MAKE_RUN_STEPS] == list(OPTION_VARIABLE)


@pytest.mark.early
def test_make_run_on_small_command_lines(tmp_path: Path) -> None:
    lines = {step.out: smaller(make_variable(OPTION_VARIABLE[step.option]), SMALLER[step.out])
             for step in MAKE_RUN_STEPS}
    out_dir = tmp_path / "results" / "20261127-000000-make-run"
    rc, stdout, stderr = tool_main("make-run", "--out", str(out_dir), "--quiet",
                                   *(arg for step in MAKE_RUN_STEPS
                                     for arg in (f"--{step.option.replace('_', '-')}", lines[step.out])))
    assert rc == 0, stderr
    # results/latest points at the three
    latest = tmp_path / "results" / "latest"
    assert latest.is_symlink() and os.readlink(latest) == out_dir.name
    sets = {}
    for step in MAKE_RUN_STEPS:
        name = step.out
        res = results_files.load(latest / name).doc
        assert res["run"]["emulator"] == step.emulator and res["complete"] and not res["missing"], name
        assert done(res)["status"] == "ok", name
        # on a real clock the host keeps budget=Ns for itself: the run's seconds (sweep.py)
        kept = lines[name] if step.emulator == "qemu-icount" else sweep.take_budget(lines[name])[0]
        assert kept in res["run"]["command_line"], (name, res["run"]["command_line"])
        sets[name] = res
    # the multi-CPU run: every CPU this machine gives it (cpus=all), and where its words were
    smp = of_type(sets["smp"], "smp")[0]
    assert smp["used"] == len(os.sched_getaffinity(0)) >= 2
    share = [r for r in of_type(sets["smp"], "result") if r["bench"] == "falseshare"]
    assert {r["case"] for r in share if r["params"]["cpus"] == 2} >= {"packed", "padded"}
    assert layout_problems(share) == []
    # its last line: index.html, linking each run's report.html (each written beside its report.txt), under
    # the run's machine and headline answers (tests/test_html.py reads them)
    *before, last = stdout.rstrip("\n").split("\n")
    index = out_dir.resolve() / "index.html"
    assert last == f"pages: {index}", last
    hrefs = re.findall(r'href="([^"]+)"', index.read_text())
    assert list(dict.fromkeys(hrefs)) == [f"{step.out}/report.html" for step in MAKE_RUN_STEPS]
    assert index.read_text().count('<table class="answers headlines">') == len(MAKE_RUN_STEPS)
    assert all((index.parent / h).is_file() for h in hrefs)
    # three summaries in the order of the runs, each with its answers; report.txt beside each set
    printed = summaries("\n".join(before) + "\n")
    assert len(printed) == 3, stdout
    for step, summary in zip(MAKE_RUN_STEPS, printed):
        head = "".join(summary.split("full tables:", 1)[0].split())  # its first line, wrapped where long
        assert head == f"cleanroomreport:{out_dir / step.out / results_files.RESULTS_JSON}", summary
        assert answer_problems(summary, sets[step.out]) == [], (step.out, summary)
        assert (out_dir / step.out / "report.txt").is_file()


def test_make_run_stops_at_a_run_that_fails(tmp_path: Path) -> None:
    """As make stops at a failing command: a rejected command line ends it with that run's status,
    before results/latest moves and before any summary."""
    out_dir = tmp_path / "results" / "bad-make-run"
    rc, stdout, stderr = tool_main("make-run", "--out", str(out_dir), "--quiet", "--kernel-cmdline", "suite=nope",
                                   "--hosted-cmdline", "bench=tsc", "--smp-cmdline", "bench=tsc")
    assert rc == results_files.EXIT_CONFIG and "the kernel run ended with status 2" in stderr
    assert not (out_dir / "hosted").exists() and not (tmp_path / "results" / "latest").exists()
    assert "cleanroom report:" not in stdout


def test_make_runs_kernel_summary_at_full_size(quick_icount: tuple[int, dict[str, Any]], boots_root: Path,
                                               tmp_path: Path) -> None:
    """make run's kernel step is the session's shared quick_icount boot (the same emulator and command
    line): its summary answers for every benchmark of the quick suite."""
    assert (MAKE_RUN_STEPS[0].emulator, make_variable("CMDLINE")) == QUICK_ICOUNT
    rc, res = quick_icount
    assert rc == 0
    rc, stdout, stderr = tool_main("report", str(shared_dir(boots_root, *QUICK_ICOUNT) / QUICK_ICOUNT[0]),
                                   "--out", str(tmp_path), "--no-plots")
    assert rc == 0, stderr
    assert answer_problems(stdout, res) == [], stdout
    assert {r["bench"] for r in of_type(res, "result")} >= {"ctxsw", "workset", "locks", "create", "aspace"}
