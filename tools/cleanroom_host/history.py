"""`cleanroom history REV_RANGE --cmdline ...`: each commit of a range built in a worktree of its own and run with
one command line, then each case's figure over the commits and the commit where it changed (reports/timeline.py).

The store (--store, default results/history in the repository) keeps everything between calls:

    trees/<sha>/               a git worktree of the commit (`git worktree add --detach`), its build/ kept
    builds/<sha>-<targets>.json   how its build went (a commit's tree never changes: a failure is kept too)
    series/<id>/series.json    one emulator and command line (the series' id is their hash)
    series/<id>/runs/<sha>/    that commit's results (`cleanroom run --out`), with the run's own output
    series/<id>/history.*      the last call's answer (without --out)

A commit whose results the series has is not built or run again, so a second call over a longer range boots
only the new commits. A new worktree's build starts from the objects of a build already made (of the store's
worktrees and this checkout, the one whose sources differ from the commit's in the fewest files): each object
made after every file it was made from (its .d file names them) and from none of the files that differ, so
that make compiles only what the commit changed (a kernel so built is the bytes of one built from nothing);
where the Makefile or the linker script differs it builds from nothing.
"""

from __future__ import annotations

import argparse
import fcntl
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, TextIO

from .machines import emulators, runner
from .records import results
from .reports import timeline

DEFAULT_EMULATOR = "qemu-icount"
DEFAULT_STORE = Path("results") / "history"
# a range longer than this needs --last: each commit is a build and a run
MOST_COMMITS = 100
# files whose change makes another tree's objects useless: how everything is compiled
BUILD_RULES = ("Makefile", "linker.ld")
OBJECT_DIRS = ("build/obj", "build/obj-hosted")
BUILD_LOG = "history-build.log"
RUN_LOG = "history-run.log"
HELP = (__doc__ or "").split("\n\n", 1)[1].rstrip() + """

Under an exact clock (qemu-icount, the default; qemu-model; bochs) a count that differs from the commit before
changed at that commit: no step detection is needed. Under a real clock each commit is a run of its own time;
history names candidates only (docs/REPORT.md, History).

    cleanroom history v1.0..HEAD --cmdline "bench=ctxsw,locks"      # each commit since v1.0
    cleanroom history HEAD --last 20 --cmdline 'suite=quick runs=2 warmup=0'"""
EXIT_HELP = """exit status:
  0  every commit built and its run ended done ok; history.txt, .csv and .html written
  4  a commit did not build, or its run did not end done ok (named; the rest is shown)
  5  bad arguments: not a git repository, an empty or too long range, what `run` refuses"""

Run = Callable[[list[str], TextIO, TextIO], int]  # `cleanroom run ARGS` (cli.main's), as history calls it


class HistoryError(Exception):
    """history cannot start; the message says why."""


@dataclass(frozen=True)
class Commit:
    sha: str
    subject: str
    date: str


def git(repo: Path, *args: str) -> str:
    proc = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, stdin=subprocess.DEVNULL)
    if proc.returncode != 0:
        raise HistoryError(f"git {' '.join(args)}: {proc.stderr.strip() or f'exit {proc.returncode}'}")
    return proc.stdout


def commits(repo: Path, rev_range: str, last: int | None) -> list[Commit]:
    """The range's commits, oldest first, along first parents (a merge is one step of the line it joins)."""
    out = git(repo, "log", "--first-parent", "--reverse", "--format=%H%x00%cI%x00%s", rev_range, "--")
    found = [Commit(sha, subject, date) for sha, date, subject in (line.split("\0", 2) for line in out.splitlines())]
    if last is not None:
        found = found[-last:]
    if not found:
        raise HistoryError(f"{rev_range}: no commits in that range")
    if len(found) > MOST_COMMITS:
        raise HistoryError(f"{rev_range}: {len(found)} commits (each a build and a run); --last N takes the last N")
    return found


def targets(emu: emulators.Emulator) -> list[str]:
    """What a commit's run needs built (make's targets)."""
    if emu.hosted:
        return ["hosted"]
    return ["build/cleanroom.iso" if emu.needs_iso else "build/cleanroom.elf"]


def series_id(emulator: str, cmdline: str, boots: int | None) -> str:
    return hashlib.sha256(json.dumps([emulator, cmdline, boots]).encode()).hexdigest()[:12]


def _worktree(repo: Path, store: Path, sha: str) -> tuple[Path, bool]:
    """The commit's worktree (made now, or kept from before); whether it is new."""
    tree = store / "trees" / sha
    if tree.is_dir():
        try:
            if git(tree, "rev-parse", "HEAD").strip() == sha:
                return tree, False
        except HistoryError:
            pass
        shutil.rmtree(tree)
        git(repo, "worktree", "prune")
    tree.parent.mkdir(parents=True, exist_ok=True)
    git(repo, "worktree", "add", "--detach", "--quiet", str(tree), sha)
    return tree, True


def _make(tree: Path, goals: list[str], log: Path) -> int:
    """make in the tree with the tool's own Python (relocs.py needs pyelftools), its output into log."""
    argv = ["make", "-C", str(tree), f"-j{os.cpu_count() or 1}", f"PYTHON={sys.executable}", *goals]
    with log.open("w") as fh:
        return subprocess.run(argv, stdout=fh, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL).returncode


def _changed(repo: Path, donor_rev: str | None, sha: str) -> set[str] | None:
    """The paths where a donor's sources and the commit's differ (donor_rev None: the checkout's working tree,
    untracked files included); None where its objects cannot serve (the build rules differ)."""
    if donor_rev is not None:
        names = git(repo, "diff", "--name-only", donor_rev, sha).split()
    else:
        names = git(repo, "diff", "--name-only", sha).split() + git(repo, "ls-files", "--others",
                                                                     "--exclude-standard").split()
    return None if any(n in BUILD_RULES for n in names) else set(names)


def _object_deps(dep: Path) -> tuple[str, list[str]]:
    """A compiler's .d file: the object it made and what that object was made from (paths from the tree's root)."""
    first = dep.read_text(errors="replace").replace("\\\n", " ").split("\n", 1)[0]
    target, _, prereqs = first.partition(":")
    return target.strip(), prereqs.split()


def _seed(tree: Path, changed: set[str], donor: Path) -> int:
    """The donor's objects that serve the new tree, newer than its sources (a fresh checkout): each one made
    after every file it was made from (make would not remake it in the donor) and made from none of the changed
    paths; make compiles the rest. How many it took."""
    taken = 0
    for rel in OBJECT_DIRS:
        for dep in sorted((donor / rel).rglob("*.d")) if (donor / rel).is_dir() else []:
            target, prereqs = _object_deps(dep)
            obj = donor / target
            try:
                made = obj.stat().st_mtime
                fresh = all((donor / p).stat().st_mtime <= made for p in prereqs)
            except OSError:
                continue  # no object, or a file it was made from is gone
            if not fresh or changed.intersection(prereqs):
                continue
            dest = tree / target
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(obj, dest)  # copy, not copy2: the time of now, after the checkout's
            shutil.copy(dep, dest.with_suffix(".d"))
            taken += 1
    return taken


def _built(store: Path) -> list[str]:
    """The commits whose worktrees hold a build that succeeded (the builds/ records)."""
    out = []
    for record in sorted((store / "builds").glob("*.json")):
        try:
            kept = json.loads(record.read_text())
        except (OSError, ValueError):
            continue
        if kept.get("ok") and isinstance(kept.get("sha"), str) and (store / "trees" / kept["sha"]).is_dir():
            out.append(kept["sha"])
    return list(dict.fromkeys(out))


def _donor(repo: Path, store: Path, sha: str) -> tuple[Path, str | None, set[str]] | None:
    """The build to start the commit's from: of the store's built worktrees and this checkout, the one whose
    sources differ from the commit's in the fewest paths (its parent's, usually); None where none serves."""
    best: tuple[Path, str | None, set[str]] | None = None
    for donor, rev in [(store / "trees" / s, s) for s in _built(store)] + [(repo, None)]:
        if not (donor / OBJECT_DIRS[0]).is_dir():
            continue
        changed = _changed(repo, rev, sha)
        if changed is not None and (best is None or len(changed) < len(best[2])):
            best = (donor, rev, changed)
    return best


def build(repo: Path, store: Path, c: Commit, goals: list[str]) -> tuple[bool, str]:
    """The commit's build (kept, or made now, seeded where a donor serves): (built, what happened)."""
    record = store / "builds" / f"{c.sha}-{'-'.join(g.replace('/', '_') for g in goals)}.json"
    if record.is_file():
        kept = json.loads(record.read_text())
        return kept["ok"], f"build kept ({kept['what']})"
    tree, new = _worktree(repo, store, c.sha)
    seeded = "built from nothing"
    donor = _donor(repo, store, c.sha) if new else None
    if donor is not None:
        taken = _seed(tree, donor[2], donor[0])
        if taken:
            seeded = f"{taken} objects from {donor[1][:timeline.SHORT] if donor[1] else 'this checkout'}'s build"
    start = time.monotonic()
    log = tree / "build" / BUILD_LOG
    log.parent.mkdir(parents=True, exist_ok=True)
    ok = _make(tree, goals, log=log) == 0
    text = log.read_text(errors="replace")
    compiled = sum(1 for line in text.splitlines() if line.lstrip().startswith(("CC ", "NASM ")))
    what = (f"{seeded}, {compiled} file{'s' if compiled != 1 else ''} compiled, {time.monotonic() - start:.1f} s"
            if ok else f"build failed: {' | '.join(text.strip().splitlines()[-3:])[:200]} (log: {log})")
    record.parent.mkdir(parents=True, exist_ok=True)
    record.write_text(json.dumps({"ok": ok, "what": what, "goals": goals, "sha": c.sha}))
    return ok, what


def _run_argv(args: argparse.Namespace, tree: Path, out: Path) -> list[str]:
    argv = ["--emulator", args.emulator, "--cmdline", args.cmdline, "--out", str(out), "--quiet",
            "--kernel", str(tree / "build" / "cleanroom.elf"), "--iso", str(tree / "build" / "cleanroom.iso"),
            "--hosted", str(tree / "build" / "hosted" / "cleanroom-hosted")]
    return argv + (["--boots", str(args.boots)] if args.boots else [])


def _point(c: Commit, run_dir: Path, what: str, ok: bool) -> timeline.Point:
    try:
        rs = results.load(run_dir) if (run_dir / results.RESULTS_JSON).is_file() else None
    except (OSError, ValueError):
        rs = None
    if rs is not None and ok:
        status = results.doc_exit_status(rs.doc)
        if status != results.EXIT_OK:
            what, ok = f"{what}; the run ended with status {status} ({rs.doc.get('status')})", False
    return timeline.Point(c.sha, c.subject, c.date, rs, what, ok)


def one_commit(args: argparse.Namespace, repo: Path, store: Path, series: Path, c: Commit, run: Run) -> timeline.Point:
    """A commit's results: kept from an earlier call, or built and run now."""
    run_dir = series / "runs" / c.sha
    if (run_dir / results.RESULTS_JSON).is_file():
        return _point(c, run_dir, "kept (results of an earlier call)", True)
    emu = emulators.get(args.emulator)
    ok, what = build(repo, store, c, targets(emu))
    if not ok:
        return timeline.Point(c.sha, c.subject, c.date, None, what, False)
    start = time.monotonic()
    out, err = io.StringIO(), io.StringIO()
    status = run(_run_argv(args, store / "trees" / c.sha, run_dir), out, err)
    if run_dir.is_dir():
        (run_dir / RUN_LOG).write_text(out.getvalue() + err.getvalue(), encoding="utf-8")
    if status == results.EXIT_SETUP and not (run_dir / results.RESULTS_JSON).is_file():
        raise HistoryError(f"run refused: {err.getvalue().strip()}")
    return _point(c, run_dir, f"{what}; ran in {time.monotonic() - start:.1f} s", status == results.EXIT_OK)


def main(args: argparse.Namespace, out: TextIO, err: TextIO, run: Run) -> int:
    repo = (args.repo or runner.repo_root()).resolve()
    store = (args.store or repo / DEFAULT_STORE).resolve()
    try:
        top = Path(git(repo, "rev-parse", "--show-toplevel").strip())
        found = commits(top, args.range, args.last)
        store.mkdir(parents=True, exist_ok=True)
        series = store / "series" / series_id(args.emulator, args.cmdline, args.boots)
        series.mkdir(parents=True, exist_ok=True)
        (series / "series.json").write_text(json.dumps({"emulator": args.emulator, "cmdline": args.cmdline,
                                                        "boots": args.boots}) + "\n")
        points: list[timeline.Point] = []
        with (store / "lock").open("w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # one call at a time builds and runs in a store
            for i, c in enumerate(found, 1):
                p = one_commit(args, top, store, series, c, run)
                points.append(p)
                if not args.quiet:
                    err.write(f"history: [{i}/{len(found)}] {p.short} {c.subject[:50]}: {p.what}\n")
                    err.flush()
    except HistoryError as exc:
        err.write(f"cleanroom history: {exc}\n")
        return results.EXIT_SETUP
    out_dir = args.out if args.out is not None else series
    head = [f"{args.emulator}, --cmdline {args.cmdline!r}, {args.range} ({len(points)} commits)",
            f"store {store}; results of each commit in {series / 'runs'}"]
    try:
        lines, written = timeline.write_all(points, head, out_dir, plots=not args.no_plots)
    except OSError as exc:
        err.write(f"cleanroom history: cannot write into {out_dir}: {exc.strerror or exc}\n")
        return results.EXIT_SETUP
    for line in lines:
        out.write(line + "\n")
    out.write(f"wrote {', '.join(str(p) for p in written)}\n")
    return results.EXIT_OK if all(p.ok for p in points) else results.EXIT_DAMAGED
