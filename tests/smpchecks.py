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


