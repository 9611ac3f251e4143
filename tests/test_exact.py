"""Exact means exact: under qemu-icount a boot is a function of its kernel, its command line and its machine
(emulators.ICOUNT_ARGS: sleep=off, the RTC on virtual time; the kernel by a name of the run's own), so two boots
give the same bytes; `check` turns that into a gate, and `history` names the commit where a count changed.

The history runs over a repository made here: the sources as they are (base), a commit that changes only docs,
one that adds a `nop` to switch_jump (every ctxsw jump case one instruction more, nothing else), and the
worktree left at base with this checkout's objects, so that each commit's build compiles only what it
changed (history's seeding)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from booting import KERNEL, REPO, boot, built, made_once, tool_main
from cleanroom_host.reports import check

QUICK_SMALL = "suite=quick runs=2 warmup=0 sizes=0,4K reps=200"  # every quick benchmark, a second's boot
SMALL = "bench=ctxsw,locks runs=2 warmup=0 reps=1000"  # history's and the nop's command line: jump cases among others
# what the kernel's build reads (the Makefile's link runs tools/cleanroom_host/machines/relocs.py)
TREE = ("boot", "lib", "arch", "kernel", "runtime", "bench", "app", "tools/cleanroom_host", "tools/check_user_objects.sh",
        "Makefile", "linker.ld")
DOCS = "docs/NOTE.md"
NOP_OLD = "switch_jump:\n    SAVE_CALLEE\n"
NOP_NEW = "switch_jump:\n    nop\n    SAVE_CALLEE\n"
GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}
FIXTURES = REPO / "tests" / "fixtures"


def test_two_quick_suite_boots_are_the_same_bytes(tmp_path: Path) -> None:
    """The quick suite, every benchmark of make run's kernel step at small sizes, booted twice: one serial log,
    byte for byte (the TSC's calibration, where QEMU's default sleep=on let the host's clock in, included), and
    check finds nothing moved. (Ten boots of the whole quick suite gave one md5: docs/REPORT.md, Exactness.)"""
    logs = []
    for name in ("first", "again"):
        rc, _ = boot(tmp_path / name, "qemu-icount", QUICK_SMALL)
        assert rc == 0
        logs.append(tmp_path / name / "qemu-icount")
    text = (logs[0] / "serial.log").read_bytes()
    assert text == (logs[1] / "serial.log").read_bytes() and b'"t":"tsc"' in text and b'"bench":"aspace"' in text
    rc, out, err = tool_main("check", str(logs[0]), str(logs[1]))
    assert rc == 0 and "check: ok: nothing moved" in out, out + err


def unwrapped(text: str) -> list[str]:
    """The tool's lines before text.fit wrapped them (a continuation goes on 4 columns further in)."""
    out: list[tuple[int, str]] = []
    for line in text.splitlines():
        indent = len(line) - len(line.lstrip(" "))
        if out and line.strip() and indent == out[-1][0] + 4:
            out[-1] = (out[-1][0], out[-1][1] + " " + line.strip())
        else:
            out.append((indent, line))
    return [line for _indent, line in out]


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True,
                          env={**os.environ, **GIT_ENV}, stdin=subprocess.DEVNULL).stdout


def _make_repo(root: Path) -> dict[str, Any]:
    """The three commits (base, docs, nop), the worktree at base with this checkout's objects."""
    for name in TREE:
        src = REPO / name
        if src.is_dir():
            shutil.copytree(src, root / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, root / name)
    (root / DOCS).parent.mkdir()
    (root / DOCS).write_text("A note.\n")
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "base")
    (root / DOCS).write_text("A note, and a line more.\n")
    _git(root, "commit", "-q", "-am", "docs only")
    asm = root / "runtime" / "switches.asm"
    assert asm.read_text().count(NOP_OLD) == 1
    asm.write_text(asm.read_text().replace(NOP_OLD, NOP_NEW))
    _git(root, "commit", "-q", "-am", "switch_jump: one nop more")
    shas = _git(root, "log", "--reverse", "--format=%H").split()
    _git(root, "checkout", "-q", "--detach", shas[0])
    built(KERNEL, "all")
    shutil.copytree(REPO / "build" / "obj", root / "build" / "obj", copy_function=shutil.copy)
    return {"root": str(root), "store": str(root.parent / "store"), "base": shas[0], "docs": shas[1], "nop": shas[2]}


def _history(repo: dict[str, Any], *argv: str) -> tuple[int, str, str]:
    return tool_main("history", *argv, "--repo", repo["root"], "--store", repo["store"], "--cmdline", SMALL)


@pytest.fixture(scope="session")
def history(boots_root: Path) -> dict[str, Any]:
    """The repository, then history over docs..nop and over all three: (status, stdout, stderr) of each, and
    the series' runs. Made once a session for every xdist worker (the first makes it, the others wait)."""
    where = boots_root / "history"

    def make() -> dict[str, Any]:
        repo = _make_repo(where / "repo")
        first = _history(repo, "main~2..main", "--no-plots")  # the second call's page has the figure
        second = _history(repo, "main", "--last", "3")
        runs = next((Path(repo["store"]) / "series").iterdir()) / "runs"
        return {**repo, "first": first, "second": second, "runs": str(runs)}

    got = made_once(where, make)
    return {**got, "runs": Path(got["runs"]), "store": Path(got["store"])}


@pytest.mark.early
def test_history_names_the_commit_that_moved_the_jump_cases(history: dict[str, Any]) -> None:
    repo = history
    rc, out, err = history["second"]
    assert rc == 0, out + err
    short = {k: repo[k][:10] for k in ("base", "docs", "nop")}
    text = (history["runs"].parent / "history.txt").read_text()
    assert out.startswith(text)  # what it prints is history.txt
    assert f"nothing changed at {short['docs']}" in text, text
    changes = "\n".join(unwrapped(text.split("\nchanges:", 1)[1].split("\nthe cases that moved", 1)[0]))
    at = re.findall(r"^(\w{10}) .*\(against (\w{10})\)", changes, re.M)
    assert at == [(short["nop"], short["docs"])], changes
    moved = [line.strip() for line in changes.splitlines() if line.startswith("  ")]
    assert moved and all("jump" in line and "(+1 instructions" in line for line in moved), moved
    assert sum(line.startswith("ctxsw jump") for line in moved) == 4  # both shapes, paging off and on
    csv_head = (history["runs"].parent / "history.csv").read_text().splitlines()[0]
    assert csv_head == ",".join(["case", repo["base"], repo["docs"], repo["nop"]])
    page = (history["runs"].parent / "history.html").read_text()
    assert "switch_jump: one nop more" in page and "data:image/png;base64," in page


def test_a_second_history_boots_only_the_new_commits(history: dict[str, Any]) -> None:
    repo = history
    rc, _out, err = history["first"]
    assert rc == 0, err
    first = [line for line in err.splitlines() if line.startswith("history: [")]
    assert len(first) == 2 and all("ran in" in line for line in first), err
    second = [line for line in history["second"][2].splitlines() if line.startswith("history: [")]
    assert len(second) == 3, history["second"][2]
    assert repo["base"][:10] in second[0] and "ran in" in second[0], second
    assert all("kept (results of an earlier call)" in line for line in second[1:]), second
    # each build compiled what its commit changed, from another build's objects: the docs commit nothing, the
    # nop's one file (switches.asm), the base nothing
    assert re.search(r"objects from .*, 0 files compiled", first[0]) and ", 1 file compiled" in first[1], first
    assert ", 0 files compiled" in second[0], second


def test_check_fails_on_the_nop_naming_only_the_jump_cases(history: dict[str, Any]) -> None:
    repo = history
    runs = history["runs"]
    rc, out, err = tool_main("check", str(runs / repo["base"]), str(runs / repo["nop"]))
    assert rc == check.EXIT_MOVED, out + err
    named = [line for line in unwrapped(out) if line.startswith("  ") and ":" in line]
    assert len([n for n in named if n.startswith("  ctxsw jump")]) == 4, out
    assert all("jump" in n for n in named), out  # the cases and the derived switch costs of jump, nothing else
    assert "check: FAIL: 4 cases and 4 derived quantities moved" in out
    rc, out, err = tool_main("check", str(runs / repo["base"]), str(runs / repo["docs"]))
    assert rc == 0 and "nothing moved" in out, out + err


def test_a_kernel_anywhere_boots_the_same_bytes(history: dict[str, Any], tmp_path: Path) -> None:
    """This checkout's kernel and the base commit's, built in history's worktree (another path, objects seeded):
    the same bytes, so the boots are too (the kernel goes in by the run's own name, emulators.KERNEL_LINK)."""
    tree = history["store"] / "trees" / history["base"]
    assert (tree / "build" / "cleanroom.elf").read_bytes() == built(KERNEL, "all").read_bytes()
    rc, _ = boot(tmp_path, "qemu-icount", SMALL)
    assert rc == 0
    assert (tmp_path / "qemu-icount" / "serial.log").read_bytes() == \
        (history["runs"] / history["base"] / "serial.log").read_bytes()


def test_check_refuses_what_it_cannot_judge(tmp_path: Path) -> None:
    hosted, icount = FIXTURES / "hosted-workset.log", FIXTURES / "qemu-icount-quick-locks.log"
    rc, _out, err = tool_main("check", str(hosted), str(hosted))
    assert rc == 5 and "paired A/B only" in err and "cleanroom ab" in err, err
    rc, _out, err = tool_main("check", str(icount), str(hosted))
    assert rc == 5 and "one kind of clock" in err, err
    rc, _out, err = tool_main("check", str(tmp_path))
    assert rc == 5 and "a/ and b/" in err, err
    # a set that did not end done ok: its own status, nothing judged
    lines = icount.read_bytes().splitlines(keepends=True)
    cut = tmp_path / "cut.log"
    cut.write_bytes(b"".join(lines[:len(lines) // 2]))
    rc, out, _err = tool_main("check", str(icount), str(cut))
    assert rc == 4 and "RUN" in out and "did not end whole" in out, out
