"""The checks of the multi-CPU benchmarks, in one place for every test that reads their records.

Each benchmark counts what must never happen in a param of every result (bench/*.c writes it,
docs/PROTOCOL.md names it "check"): 0 when the check held. A test reads each by name: a record
without it is a failure, never a pass (a build that stops writing its count must not look like one
that found nothing)."""

from __future__ import annotations

from typing import Any, Iterable

# The params every result of a benchmark carries, each 0 when its check held.
CHECKS: dict[str, tuple[str, ...]] = {
    "coherence": ("gave_up",),        # ping-pongs abandoned (the other CPU stopped answering)
    "falseshare": ("unfinished",),    # workers whose count fell short of reps
    "isolation": ("lost",),           # words a commit did not merge into the shared page
    "smplocks": ("lost",),            # increments lost under a lock (two CPUs inside at once)
    "linuxvm": ("failed",),           # workers (forked, or a mapping) that never did their work
    "shootdown": ("stale", "unacked"),  # reads through the old translation; changes nobody acknowledged
    "aslock": ("missing",),           # demand faults that did not arrive as planned
}
# Cases with a check of their own besides: isolated spaces say whether each CPU's page was its own.
CASE_CHECKS: dict[tuple[str, str], tuple[str, ...]] = {("isolation", "isolated"): ("leaked",)}
# Cases that check nothing: smplocks' cost of one `pause`, timed on one CPU to read spin loops as time.
UNCHECKED = {("smplocks", "pause")}


def check_keys(bench: str, case: str) -> tuple[str, ...]:
    """The check params a result of this benchmark and case must carry (KeyError: not a multi-CPU one)."""
    if (bench, case) in UNCHECKED:
        return ()
    return CHECKS[bench] + CASE_CHECKS.get((bench, case), ())


def check_problems(records: Iterable[dict[str, Any]], benches: Iterable[str] | None = None) -> list[str]:
    """Every check of the multi-CPU results (of `benches`, else of every benchmark in CHECKS) that is
    missing from its record or is not 0, as "bench/case {params}: key missing" or "...: key = n"."""
    wanted = set(CHECKS if benches is None else benches)
    out = []
    for r in records:
        if r.get("t") != "result" or r.get("bench") not in wanted:
            continue
        p = r["params"]
        where = f"{r['bench']}/{r['case']} {p}"
        for key in check_keys(r["bench"], r["case"]):
            if key not in p:
                out.append(f"{where}: {key} missing")
            elif p[key] != 0:
                out.append(f"{where}: {key} = {p[key]}")
    return out



# --- where the workers' words are: params.addrs ---------------------------------------------------

LINE = 64  # bytes: the line size falseshare and isolation assume (params.line)
OBJECT_SUMS, SUM_GAP = 5, 8  # falseshare's object case: five 8-byte sums from the recorded address
PACKED = {("falseshare", "packed"), ("isolation", "shared")}  # an int per worker, 4 bytes apart
PADDED = {("falseshare", "padded"), ("isolation", "padded")}  # an int per worker, a line each


def worker_lines(bench: str, case: str, addr: int) -> set[int]:
    """The 64-byte lines holding a byte of one worker's words, its first at addr."""
    words = [addr + SUM_GAP * i for i in range(OBJECT_SUMS)] if (bench, case) == ("falseshare", "object") else [addr]
    return {b // LINE for a in words for b in (a, a + 3)}


def layout_problems(records: Iterable[dict[str, Any]]) -> list[str]:
    """What the recorded addresses (params.addrs: each worker's word as the workers used it) say against
    the layouts' claims: packed ints in as few lines as they fill (one up to 16 workers), padded ones
    each on a line no other worker touches, and params.lines the lines they span. Isolated spaces are
    left out: there each worker's int is in a page of its own."""
    out = []
    for r in records:
        if r.get("t") != "result" or r.get("bench") not in ("falseshare", "isolation") or r["case"] == "isolated":
            continue
        p, key = r["params"], (r["bench"], r["case"])
        where = f"{r['bench']}/{r['case']} k={p.get('cpus')}"
        if "addrs" not in p:
            out.append(f"{where}: addrs missing")
            continue
        addrs = [int(a, 16) for a in p["addrs"].split(",")]
        if len(addrs) != p["cpus"]:
            out.append(f"{where}: {len(addrs)} addresses for {p['cpus']} workers")
            continue
        each = [worker_lines(r["bench"], r["case"], a) for a in addrs]
        spanned = set().union(*each)
        if len(spanned) != p["lines"]:
            out.append(f"{where}: the words span {len(spanned)} lines, params.lines says {p['lines']}")
        if key in PACKED and len(spanned) != -(-4 * len(addrs) // LINE):
            out.append(f"{where}: packed ints span {len(spanned)} lines ({p['addrs']})")
        if key in PADDED and any(each[v] & each[w] for v in range(len(each)) for w in range(v)):
            out.append(f"{where}: padded ints share a line ({p['addrs']})")
    return out
