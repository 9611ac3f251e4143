"""Every check of the multi-CPU benchmarks shown to fire: bugs planted in a copy of the sources.

A check that never fires proves nothing. Each PLANTS entry is one bug, a line of the real sources
changed as a careless edit would change it (a ticket lock that does not wait its turn, a commit that
skips a word, a shootdown without invlpg, a wake-up of one sleeper where several sleep on one word,
...). Mutants rather than provoke= modes: the measured code carries no hook for its own tests, and a
bug is planted where such a bug would be. They go into one copy of the tree (the bugs live in
different functions, and each test pins the check it reads to the cases its bug touches), built with
the project's own Makefile once per session (the kernel's and the hosted build's objects copied from
build/, so that only the changed files compile again: ~2 s of CPU in all, where one compiler run for the
whole hosted build took 8). Then the
kernel boots once and the hosted build runs three times, at test sizes, and each test asserts that its
check fired, where and only there, through the function the real tests call (smpchecks), or that the
run ended itself with the error that names the bug. The real sources are untouched.

The kernel boots under TCG with its two vCPUs in one host thread (-accel tcg,thread=single), where a
`pause` hands the host thread to the other vCPU: its checks fire the same way every time. The hosted
smplocks run (a lock that lets two CPUs in, on two of this machine's CPUs) counts lost updates only
where the two threads overlapped; its samples disturbed by the OS are run again, and every one of 40
runs beside a busy loop lost hundreds (2026-11-27). Once, beside the rest of make test, a run of one
sample a case lost none (2026-11-29): it runs alone, five samples a case."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from booting import REPO, TOOL_SAFETY_NET_S, done, errors, made_once, of_type, run_tool, shared_boot
from smpchecks import check_problems, layout_problems


@dataclass(frozen=True)
class Plant:
    name: str
    path: str   # the file, from the repository's root
    old: str    # text that occurs exactly once in it (the changed line, with context where it repeats)
    new: str
    what: str   # the bug, as docs/USAGE.md's "Planted bugs" names it


PLANTS = (
    Plant("ticket_no_wait", "runtime/smplock.c",
          "        while (l->owner != ticket)\n", "        while (0 && l->owner != ticket)\n",
          "a ticket lock without mutual exclusion: it takes a ticket and goes in without waiting its turn"),
    Plant("commit_skips_word", "bench/isolation.c",
          "        if (copy[i] != twin[i])\n", "        if (i > 0 && copy[i] != twin[i])\n",
          "an isolation commit that drops a word: the page's first word is never merged"),
    Plant("view_not_private", "bench/isolation.c",
          "pageview_enter(&wd->own[w], &before)", "pageview_enter(&wd->one, &before)",
          "isolated views that are not private: check_private's CPUs enter the one shared view"),
    Plant("worker_one_short", "bench/falseshare.c",
          "    update(p, s->reps - opens);\n", "    update(p, s->reps - opens - 1);\n",
          "a falseshare worker that stops one update short of reps"),
    Plant("words_off_their_line", "bench/falseshare.c",
          "(area + LINE + at->first + worker * at->step)", "(area + LINE + 60 + at->first + worker * at->step)",
          "falseshare's words 60 bytes into a line: packed ints no longer in one line"),
    Plant("deadline_in_seconds", "bench/coherence.c",
          "    uint64_t deadline = parallel_deadline();\n    struct parallel_budget b;\n",
          "    uint64_t deadline = rdtsc() + PARALLEL_PATIENCE_S;\n    struct parallel_budget b;\n",
          "a coherence ping whose deadline adds seconds to TSC ticks: it abandons its ping-pong at once"),
    Plant("wake_one_sleeper", "bench/linuxvm.c",
          "    park_wake_all(&ctl->release);\n", "    park_wake(&ctl->release);\n",
          "a lost wake-up: linuxvm wakes one of the CPUs sleeping on one word (the hang of 2026-11-27)"),
    Plant("child_never_finishes", "bench/linuxvm.c",
          "        __atomic_store_n(&ctl->finished[l->w], 1, __ATOMIC_RELEASE);\n", "",
          "a forked linuxvm worker that exits without saying it finished"),
    Plant("child_never_at_start_line", "bench/linuxvm.c",
          "        __atomic_store_n(&ctl->arrived[l->w], 1, __ATOMIC_RELEASE);\n",
          "        if (l->c->op < OP_SHOOT_MUNMAP)\n"
          "            __atomic_store_n(&ctl->arrived[l->w], 1, __ATOMIC_RELEASE);\n"
          "        else\n"
          "            while (!ctl->go)\n"
          "                usleep(1000);\n",
          # it sleeps while it keeps away: spinning, it took a CPU for the start line's 10 s (10 CPU-s)
          "a forked linuxvm worker of the shootdown cases that never says it waits at the start line"),
    Plant("shootdown_without_invlpg", "bench/shootdown.c",
          "    tlb_invalidate(s->va);\n    if (read_page(s->va) != s->expected)\n",
          "    if (read_page(s->va) != s->expected)\n",
          "a shootdown without invlpg: the receiver reads the page through its old translation"),
    Plant("ipi_handler_missing", "bench/shootdown.c",
          "    smp_ipi_handler(s->mode == MODE_IPI ? on_ipi : 0);\n",
          "    smp_ipi_handler(s->mode == MODE_MAILBOX ? on_ipi : 0);\n",
          "a shootdown IPI that nobody handles (its handler set for the other mode): no change acknowledged"),
    Plant("pages_left_mapped", "bench/aslock.c",
          "        memset(c->table[w], 0, PAGE_SIZE); /* every page unmapped again */\n", "",
          "aslock's pages left mapped from the sample before: their demand faults never come"),
)
PLANT_DIRS = ("boot", "lib", "arch", "kernel", "runtime", "bench", "app", "hosted", "tools")
PLANT_FILES = ("Makefile", "linker.ld")
TARGETS = ("build/cleanroom.elf", "build/hosted/cleanroom-hosted")
OBJECT_DIRS = ("build/obj", "build/obj-hosted")  # the kernel's and the hosted build's objects

SINGLE = ("--qemu-arg=-accel", "--qemu-arg=tcg,thread=single")
# The kernel: the self-tests and every benchmark with a check, two samples each (aslock's second finds
# the first one's pages), on two vCPUs taking turns.
KERNEL_RUNS, KERNEL_WARMUP = 2, 0
KERNEL_CMDLINE = (f"suite=selftest bench=coherence,falseshare,isolation,shootdown,aslock paging=on cpus=2 "
                  f"runs={KERNEL_RUNS} warmup={KERNEL_WARMUP} reps=10")
# The hosted build on two of this machine's CPUs (one sample a case; smplocks five), and linuxvm on four
# workers over them.
HOSTED_RUNS = 1
HOSTED_CMDLINE = f"bench=falseshare,isolation,linuxvm runs={HOSTED_RUNS} warmup=0 reps=3000"
LOCKS_CMDLINE = "bench=smplocks runs=5 warmup=0 reps=3000"
HANG_CMDLINE = "bench=linuxvm runs=1 warmup=0 reps=50"


def planted_tree(dest: Path, plants: tuple[Plant, ...]) -> Path:
    """A copy of what the Makefile builds from, with the kernel's and the hosted build's objects
    (timestamps kept, so make compiles only the files a plant changes) and every plant applied; each
    must match once."""
    for name in PLANT_DIRS:
        shutil.copytree(REPO / name, dest / name, ignore=shutil.ignore_patterns("__pycache__"))
    for name in PLANT_FILES:
        shutil.copy2(REPO / name, dest / name)
    for objects in OBJECT_DIRS:
        if (REPO / objects).is_dir():
            shutil.copytree(REPO / objects, dest / objects)
    for p in plants:
        path = dest / p.path
        text = path.read_text()
        assert text.count(p.old) == 1, f"{p.name}: {p.path} has {text.count(p.old)} of {p.old!r} (changed?)"
        path.write_text(text.replace(p.old, p.new))
    return dest


def make_tree(tree: Path) -> dict[str, Any]:
    """The kernel and the hosted build made in a copy of the tree by the project's own Makefile: its status and
    the end of what it said."""
    proc = subprocess.run(["make", "-C", str(tree), "-j2", f"PYTHON={sys.executable}", *TARGETS],
                          capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=TOOL_SAFETY_NET_S)
    return {"rc": proc.returncode, "log": (proc.stdout + proc.stderr)[-6000:]}


def planted_build(root: Path) -> Path:
    """The planted tree, built once per session for every xdist worker (the first builds, the others
    wait on the lock): its directory."""
    where = root / "planted"
    built = made_once(where, lambda: make_tree(planted_tree(where / "tree", PLANTS)))
    assert built["rc"] == 0, built["log"]
    return where / "tree"


@pytest.fixture(scope="module")
def tree(boots_root: Path) -> Path:
    return planted_build(boots_root)


@pytest.fixture(scope="module")
def kernel_run(tree: Path, boots_root: Path) -> tuple[int, dict[str, Any]]:
    return shared_boot(boots_root, "qemu", KERNEL_CMDLINE, "--kernel", str(tree / TARGETS[0]), "--cpus", "2", *SINGLE)


@pytest.fixture(scope="module")
def hosted_run(tree: Path, boots_root: Path) -> tuple[int, dict[str, Any]]:
    return shared_boot(boots_root, "hosted", HOSTED_CMDLINE, "--hosted", str(tree / TARGETS[1]), "--cpus", "2")


@pytest.fixture(scope="module")
def hosted_locks_run(tree: Path, boots_root: Path) -> tuple[int, dict[str, Any]]:
    return shared_boot(boots_root, "hosted", LOCKS_CMDLINE, "--hosted", str(tree / TARGETS[1]), "--cpus", "2")


def results(res: dict[str, Any], bench: str, case: str | None = None) -> list[dict[str, Any]]:
    rs = [r for r in of_type(res, "result") if r["bench"] == bench and (case is None or r["case"] == case)]
    assert rs, (bench, case)
    return rs


def fired(res: dict[str, Any], bench: str, key: str) -> list[str]:
    """What the real tests' check (smpchecks.check_problems) says of this benchmark's key: not nothing."""
    named = [p for p in check_problems(of_type(res, "result"), [bench]) if f": {key} " in p]
    assert named, f"{bench}: check_problems does not name {key}"
    return named


def test_every_plant_still_matches_the_sources() -> None:
    """A plant whose line was edited away would build an unplanted copy: each matches its file once."""
    for p in PLANTS:
        assert (REPO / p.path).read_text().count(p.old) == 1, (p.name, p.path)


# --- a lock without mutual exclusion --------------------------------------------------------------

@pytest.mark.early
def test_ticket_lock_without_exclusion_fails_the_lock_self_test(kernel_run: tuple[int, dict[str, Any]]) -> None:
    rc, res = kernel_run
    tests = {t["name"]: t for t in of_type(res, "test")}
    lock = tests["smplock_no_lost_increment"]
    assert not lock["ok"] and "ticket" in lock["detail"], lock
    assert done(res)["status"] == "fail" and rc == 1


def test_ticket_lock_without_exclusion_loses_smplocks_updates(
        hosted_locks_run: tuple[int, dict[str, Any]]) -> None:
    """On two CPUs of this machine, the plain increment under the lock loses updates where both threads
    ran at once: only the ticket locks' records count lost ones, and an error record names the lock."""
    _rc, res = hosted_locks_run
    lost = [r for r in results(res, "smplocks") if r["params"].get("lost", 0) != 0]
    assert lost, "no smplocks record counted a lost update"
    assert {r["params"]["lock"] for r in lost} <= {"ticket", "ticket_pause"}, [r["params"] for r in lost]
    assert fired(res, "smplocks", "lost")
    assert any("ticket" in e["msg"] for e in errors(res, "smplock_lost"))


# --- isolation: a commit that drops a word, views that are not private ----------------------------

@pytest.mark.parametrize("where", ["kernel", "hosted"])
def test_a_commit_that_drops_a_word_is_lost(where: str, request: pytest.FixtureRequest) -> None:
    """Worker 0's word never reaches the shared page: every isolated sample loses exactly it; the shared
    and padded cases, which commit nothing, lose nothing."""
    _rc, res = request.getfixturevalue(f"{where}_run")
    samples = KERNEL_RUNS + KERNEL_WARMUP if where == "kernel" else HOSTED_RUNS
    for r in results(res, "isolation"):
        assert r["params"]["lost"] == (samples if r["case"] == "isolated" else 0), (r["case"], r["params"])
    assert fired(res, "isolation", "lost")


@pytest.mark.parametrize("where", ["kernel", "hosted"])
def test_a_view_that_is_not_private_leaks(where: str, request: pytest.FixtureRequest) -> None:
    """Each of the k CPUs marks the shared frame, not its own: none finds its mark in its private frame."""
    _rc, res = request.getfixturevalue(f"{where}_run")
    for r in results(res, "isolation", "isolated"):
        assert r["params"]["leaked"] == r["params"]["cpus"], r["params"]
    assert fired(res, "isolation", "leaked")


# --- falseshare, coherence ------------------------------------------------------------------------

@pytest.mark.parametrize("where", ["kernel", "hosted"])
def test_a_worker_short_of_its_count_is_unfinished(where: str, request: pytest.FixtureRequest) -> None:
    _rc, res = request.getfixturevalue(f"{where}_run")
    samples = KERNEL_RUNS + KERNEL_WARMUP if where == "kernel" else HOSTED_RUNS
    for r in results(res, "falseshare"):
        assert r["params"]["unfinished"] == r["params"]["cpus"] * samples, r["params"]
    assert fired(res, "falseshare", "unfinished")


@pytest.mark.parametrize("where", ["kernel", "hosted"])
def test_words_off_their_line_are_named(where: str, request: pytest.FixtureRequest) -> None:
    """The addresses the workers used (params.addrs), not the layout's intent: two packed ints at bytes
    60 and 64 of a line are in two lines, which the record's `lines` (from the layout) does not say."""
    _rc, res = request.getfixturevalue(f"{where}_run")
    named = layout_problems(of_type(res, "result"))
    assert "falseshare/packed k=2: packed ints span 2 lines" in " ".join(named), named
    assert not [n for n in named if n.startswith(("isolation", "falseshare/padded", "falseshare/packed k=1"))], named


def test_an_abandoned_ping_pong_gives_up(kernel_run: tuple[int, dict[str, Any]]) -> None:
    _rc, res = kernel_run
    assert all(r["params"]["gave_up"] > 0 for r in results(res, "coherence"))
    assert fired(res, "coherence", "gave_up")


# --- shootdown, aslock (the kernel's) --------------------------------------------------------------

@pytest.mark.parametrize("key,mode,code", [("stale", "mailbox", "stale_translation"),
                                            ("unacked", "ipi", "shootdown_unacked")],
                         ids=["without_invlpg", "ipi_unhandled"])
def test_a_broken_shootdown_is_named(key: str, mode: str, code: str, kernel_run: tuple[int, dict[str, Any]]) -> None:
    """Without invlpg the mailbox receiver reads through its old translation (QEMU's per-vCPU TLB keeps it
    until an invlpg): `stale`. An IPI nobody handles acknowledges no change: `unacked`. Each at k=2 in its
    own mode only, and an error record names the mode and the CPUs."""
    _rc, res = kernel_run
    for r in results(res, "shootdown"):
        p = r["params"]
        assert (p[key] > 0) == (p["mode"] == mode and p["cpus"] == 2), p
    assert fired(res, "shootdown", key)
    assert any(f"{mode}, 2 CPUs" in e["msg"] for e in errors(res, code))


def test_pages_left_mapped_miss_their_demand_faults(kernel_run: tuple[int, dict[str, Any]]) -> None:
    """The second sample finds the first one's pages mapped: each of its k x pages faults is missing."""
    _rc, res = kernel_run
    for r in results(res, "aslock"):
        p = r["params"]
        want = (KERNEL_RUNS + KERNEL_WARMUP - 1) * p["cpus"] * p["pages"] if r["case"] == "demand_fault" else 0
        assert p["missing"] == want, (r["case"], p)
    assert fired(res, "aslock", "missing")
    assert errors(res, "aslock_faults")


# --- linuxvm: a worker that never finishes, a lost wake-up, a worker missing at the start line ------

def test_a_forked_worker_that_never_finishes_is_failed(hosted_run: tuple[int, dict[str, Any]]) -> None:
    _rc, res = hosted_run
    for r in results(res, "linuxvm"):
        p = r["params"]
        forked = p.get("workers") == "processes" or p.get("siblings") == "processes"
        assert (p["failed"] > 0) == (forked and p["cpus"] == 2), (r["case"], p)
    assert fired(res, "linuxvm", "failed")


@pytest.mark.early
def test_a_lost_wake_up_ends_the_run_by_name(tree: Path, tmp_path: Path) -> None:
    """Four linuxvm workers over this machine's CPUs: the first case leaves three CPUs asleep on one
    word; woken one at a time, two stay asleep, and the run ends itself with `cpu_silent` naming one
    of them and linuxvm (a bound of 10 s), not by the tool's silence limit: every record arrived."""
    rc, res = run_tool(tmp_path / "hosted", "--emulator", "hosted", "--cmdline", HANG_CMDLINE,
                       "--hosted", str(tree / TARGETS[1]), "--cpus", "4", "--oversubscribe")
    assert res["complete"] and not res["run"].get("hung"), res["run"]
    assert done(res)["status"] == "fail" and rc == 1
    silent = errors(res, "cpu_silent")
    assert len(silent) == 1 and "running linuxvm" in silent[0]["msg"], silent
    assert re.search(r"^CPU [1-3] \(OS CPU \d+\) did not finish", silent[0]["msg"]), silent  # hosted: OS numbers


def still_running(binary: Path, arg: str) -> list[int]:
    """The processes of `binary` whose arguments include `arg` (from /proc: a forked child keeps both)."""
    pids = []
    for d in Path("/proc").iterdir():
        try:
            argv = (d / "cmdline").read_bytes().split(b"\0") if d.name.isdigit() else []
        except OSError:  # gone meanwhile
            continue
        if argv and argv[0] == bytes(binary) and arg.encode() in argv:
            pids.append(int(d.name))
    return pids


@pytest.mark.early
def test_a_forked_worker_missing_at_the_start_line_ends_the_run_by_name(
        hosted_run: tuple[int, dict[str, Any]], tree: Path) -> None:
    """The hosted run's last benchmark, linuxvm, forks a worker in its shootdown cases that never waits at
    the start line: the first such case (munmap, k=2) ends the run within the start line's bound (10 s)
    with a `start_line` error naming the worker's CPU, after the records of every set before it (the
    k=2 set, threads and processes sampled in turn, ends unfinished); nothing is timed without the
    worker, and no forked worker outlives the run (one of the shootdown cases, let go, spun for ever once).
    Before it was named, linuxvm went on without it after 10 s, status ok."""
    rc, res = hosted_run
    assert done(res)["status"] == "fail" and rc == 1
    late = errors(res, "start_line")
    assert [e["msg"] for e in late] == ["1 of 2 workers did not reach the start line within 10 s (CPU 1): the run "
                                        "ends rather than measure with fewer workers than asked"], late
    measured = {(r["case"], r["params"]["cpus"]) for r in results(res, "linuxvm")}
    assert measured == {("fault", 1), ("fault", 2), ("mmap", 1), ("mmap", 2), ("mprotect", 1), ("mprotect", 2),
                        ("tlb_shootdown", 1)}, measured
    deadline = time.monotonic() + 5  # SIGKILL on the parent's exit: delivered at once, reaped by init
    while still_running(tree / TARGETS[1], HOSTED_CMDLINE.split()[0]) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert still_running(tree / TARGETS[1], HOSTED_CMDLINE.split()[0]) == []
