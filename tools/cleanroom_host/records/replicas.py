"""The replicas of a run: several boots (hosted: processes) of one command line, merged into one set.

Where the clock is real, two processes of one binary differ by far more than the rounds inside one
(layout under ASLR, physical pages, the core and its state): an interval built from one process's
rounds is honest about that process only. So a run is several processes or boots (`run --boots N`,
which adds replicas=N to the command line; a capture or LAVA log of several boots of one command line
is the same), and this module merges them into one set whose every result carries each replica's
figures:

- `replicas`: one {n, min, med, max, mean} per replica, in the order they ran;
- `samples` (when every replica sent its samples): all of them, replica after replica, and `replica`
  beside them: the replica (1-based) each sample came from;
- `n`, `min`, `max`, `mean` over every sample, `med` the median of the replicas' medians;
- `level`: "process" (hosted) or "boot".

stats/interval.py builds every interval over the replicas' medians from these. Boots are merged only
when they are consecutive, share their command line, each ended `done ok` and complete, and measured
the same cases in the same order; anything else stays a set of its own, as before (a log of boots with
different command lines splits into boot-K sets).
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any, Iterator

from . import kinds
from .protocol import ParseResult, Record, parse_boots

LEVEL_PROCESS = "process"
LEVEL_BOOT = "boot"
# Record types whose copies from the second replica on are kept only where they differ from the first's
# (a skip or error each boot repeats is said once); the rest of a later replica's records (its platform,
# progress, done) are the first's again and are dropped.
KEPT_TYPES = ("error", "fault", "skip", "test")
# What a result record's replica entries hold.
REPLICA_STATS = ("n", "min", "med", "max", "mean")
# The result record's fields this module writes (results.csv leaves them out: lists, or host-made).
FIELDS = ("replicas", "replica", "level", "clock", "turns")
# `turns`, on every result of two sets run in turn (`cleanroom ab`, or compare --paired): one token for
# both, so that their values pair replica by replica (stats/interval.py, `replica pairs`)
TURNS = "turns"
# `clock`, on every result of a set: whether a TSC tick is an instruction (the run repeats to the tick)
# or time.
CLOCK_EXACT, CLOCK_REAL = "exact", "real"
# What one run on a real clock has not seen (the reports say it; stats/interval.py's ONE_RUN).
ONE_RUN_TEXT = "between-run variation not measured"


def level_of(records: list[Record]) -> str:
    """What one replica is: a process of the hosted build, else a boot."""
    hello = next((r for r in records if r.get("t") == "hello"), None)
    return LEVEL_PROCESS if hello is not None and hello.get("platform") == kinds.PLATFORM_HOSTED else LEVEL_BOOT


def _cmdline(res: ParseResult) -> str | None:
    hello = res.first("hello")
    cmdline = hello.get("cmdline") if hello else None
    return cmdline if isinstance(cmdline, str) else None


def _clean(res: ParseResult) -> bool:
    return res.complete and res.status == "ok" and not res.damaged


def _cases(res: ParseResult) -> list[tuple[Any, Any]]:
    return [(r.get("bench"), r.get("case")) for r in res.records if r.get("t") == "result"]


def _mergeable(a: ParseResult, b: ParseResult) -> bool:
    return (_clean(a) and _clean(b) and _cmdline(a) is not None and _cmdline(a) == _cmdline(b)
            and _cases(a) == _cases(b) and level_of(a.records) == level_of(b.records))


# The command-line keys in which a boot the host added (added=N) differs from the run it continues: it
# measures the sets still open only (machines/runner.py, sweep.py).
ADDED_KEY = "added"
ADDED_NARROWS = ("bench", "sizes", ADDED_KEY)
# Params that may differ between two replicas' records of one case: what the host gave (pages_got).
VOLATILE_PARAMS = ("pages_got",)


def _added(res: ParseResult) -> bool:
    """The boot is one the host added to decide open sets (config record's added= above 0)."""
    cfg = res.first("config")
    added = cfg.get("cfg", {}).get(ADDED_KEY) if cfg is not None and isinstance(cfg.get("cfg"), dict) else None
    return isinstance(added, int) and not isinstance(added, bool) and added > 0


def _base_cmdline(cmdline: str) -> list[str]:
    return [t for t in cmdline.split() if t.split("=", 1)[0] not in ADDED_NARROWS]


def case_key(r: Record) -> str:
    """What identifies a result's case across the replicas of a run: bench, case and params (but what
    the host gave, which a replica may get otherwise)."""
    params = r.get("params") if isinstance(r.get("params"), dict) else {}
    kept = {k: v for k, v in params.items() if k not in VOLATILE_PARAMS}  # type: ignore[union-attr]
    return json.dumps([r.get("bench"), r.get("case"), kept], sort_keys=True)


def _continues(run: list[ParseResult], b: ParseResult) -> bool:
    """b is a boot the host added to `run` (consecutive boots merged so far): added=, the run's command
    line but for what it narrows (bench=, sizes=), and cases the run measured, each once."""
    first = run[0]
    a_line, b_line = _cmdline(first), _cmdline(b)
    if not (_added(b) and _clean(b) and a_line is not None and b_line is not None
            and _base_cmdline(a_line) == _base_cmdline(b_line) and level_of(first.records) == level_of(b.records)):
        return False
    known = [case_key(r) for r in first.records if r.get("t") == "result"]
    mine = [case_key(r) for r in b.records if r.get("t") == "result"]
    return bool(mine) and len(set(mine)) == len(mine) and len(set(known)) == len(known) and set(mine) <= set(known)


def group(boots: list[ParseResult]) -> list[ParseResult]:
    """The boots of a log as its sets: each run of consecutive boots that can be merged (module
    docstring) as one set, with the boots the host added to it, every other boot as a set of its own;
    numbered 1..K again (boot-K/)."""
    out: list[ParseResult] = []
    i = 0
    while i < len(boots):
        j = i + 1
        while j < len(boots) and _mergeable(boots[i], boots[j]) and not _added(boots[j]):
            j += 1
        while j < len(boots) and _continues(boots[i:j], boots[j]):
            j += 1
        out.append(merge(boots[i:j]) if j - i > 1 else boots[i])
        i = j
    if len(out) == len(boots):
        return boots
    return [replace(res, boot=k, boots=len(out)) for k, res in enumerate(out, 1)]


def _num(v: Any) -> float | None:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def _median(values: list[float]) -> float:
    s = sorted(values)
    n = len(s)
    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2.0


def _whole(v: float) -> int | float:
    return int(v) if v == int(v) else v


def merge_results(recs: list[Record], level: str, ids: list[int] | None = None) -> Record:
    """One case's result records, one per replica, as one record (module docstring); `ids`: the replica
    (1-based) each came from, where some replicas did not measure the case (default 1, 2, ...)."""
    ids = ids if ids is not None else list(range(1, len(recs) + 1))
    out = dict(recs[0])
    out["replicas"] = [{k: r.get(k) for k in REPLICA_STATS} for r in recs]
    out["level"] = level
    samples = [r.get("samples") for r in recs]
    if all(isinstance(s, list) and s and len(s) == r.get("n") for s, r in zip(samples, recs)):
        out["samples"] = [v for s in samples for v in s]  # type: ignore[union-attr]
        out["replica"] = [k for k, s in zip(ids, samples) for _ in s]  # type: ignore[arg-type]
    else:
        out.pop("samples", None)
    ns = [r.get("n") for r in recs]
    if all(isinstance(n, int) and not isinstance(n, bool) for n in ns):
        out["n"] = sum(ns)  # type: ignore[arg-type]
        means = [_num(r.get("mean")) for r in recs]
        if all(m is not None for m in means) and out["n"]:
            out["mean"] = round(sum(m * n for m, n in zip(means, ns)) / out["n"])  # type: ignore[operator]
    for key, pick in (("min", min), ("max", max)):
        vals = [_num(r.get(key)) for r in recs]
        if all(v is not None for v in vals):
            out[key] = _whole(pick(vals))  # type: ignore[type-var]
    meds = [_num(r.get("med")) for r in recs]
    if all(m is not None for m in meds):
        out["med"] = _whole(_median(meds))  # type: ignore[arg-type]
    if "converged" in out:
        out["converged"] = all(r.get("converged") is True for r in recs)
    return out


def merge(boots: list[ParseResult]) -> ParseResult:
    """Boots of one command line (group() checked they can be) as one set: the run's own boots case by
    case in their order, each boot the host added beside the cases it measured."""
    level = level_of(boots[0].records)
    own = [b for b in boots if not _added(b)]
    results = [[r for r in b.records if r.get("t") == "result"] for b in own]
    cases = [(list(recs), list(range(1, len(own) + 1))) for recs in zip(*results)]
    where = {case_key(recs[0]): i for i, (recs, _ids) in enumerate(cases)}
    for k, b in enumerate(boots[len(own):], len(own) + 1):
        for r in b.records:
            if r.get("t") == "result":  # _continues: each of its cases is one of the run's
                recs, ids = cases[where[case_key(r)]]
                recs.append(r)
                ids.append(k)
    return _merged(boots, iter([merge_results(recs, level, ids) for recs, ids in cases]), level)


def _merged(boots: list[ParseResult], merged: Iterator[Record], level: str) -> ParseResult:
    """The first boot's records with its results replaced by the merged ones, every boot's own errors,
    faults, skips and tests kept once."""
    first = boots[0].records
    seen = [{k: v for k, v in r.items() if k != "seq"} for r in first if r.get("t") in KEPT_TYPES]
    extra: list[Record] = []
    for k, b in enumerate(boots[1:], 2):
        for r in b.records:
            bare = {key: v for key, v in r.items() if key != "seq"}
            if r.get("t") in KEPT_TYPES and bare not in seen:
                extra.append({**r, "replica": k})
    records: list[Record] = []
    for r in first:
        if r.get("t") == "done":
            records.extend(extra)
        records.append(next(merged) if r.get("t") == "result" else r)
    lines = (boots[0].lines[0], boots[-1].lines[1]) if boots[0].lines and boots[-1].lines else None
    return replace(boots[0], records=records, lines=lines, replicas=len(boots),
                   corrupt=sum(b.corrupt for b in boots), duplicates=sum(b.duplicates for b in boots),
                   reordered=sum(b.reordered for b in boots), done=boots[0].done)


def count(records: list[Record]) -> tuple[int, str]:
    """How many replicas a set's results come from (the most any result has), and what one is."""
    most = max((len(r["replicas"]) for r in records if r.get("t") == "result" and isinstance(r.get("replicas"), list)),
               default=1)
    return most, level_of(records)


def describe(records: list[Record]) -> str:
    """'5 processes x 1-2 rounds', '1 boot x 3 rounds': the replication a set measured (report, run)."""
    n, level = count(records)
    rounds: list[int] = []
    for r in records:
        if r.get("t") != "result":
            continue
        reps = r.get("replicas") if isinstance(r.get("replicas"), list) else [r]
        rounds += [x["n"] for x in reps if isinstance(x, dict) and isinstance(x.get("n"), int)]
    if not rounds:
        return f"{n} {level}{'es' if level == LEVEL_PROCESS and n != 1 else 's' if n != 1 else ''}"
    lo, hi = min(rounds), max(rounds)
    span = f"{lo}" if lo == hi else f"{lo}-{hi}"
    plural = ("es" if level == LEVEL_PROCESS else "s") if n != 1 else ""
    return f"{n} {level}{plural} x {span} round{'s' if hi != 1 else ''}"


def replication_text(records: list[Record]) -> str:
    """What the set's intervals are built over, for the report's run line: its replicas, or why one
    boot is all there is, or that one run on a real clock has not seen the variation between runs."""
    n, level = count(records)
    plural = "processes" if level == LEVEL_PROCESS else "boots"
    if n > 1:
        return f"{describe(records)}, intervals over the {plural}"
    if kinds.counts_instructions(records):
        return "one boot (instruction counts repeat)"
    return f"one {level}: {ONE_RUN_TEXT}"


def stamp_clock(records: list[Record]) -> list[Record]:
    """Every result record told its set's clock (`clock`), in place, as a set is read (results.ResultSet): a zero-width band is exact only
    where the TSC counts instructions, and one run on a real clock has not seen the variation between
    runs (stats/interval.py)."""
    clock = CLOCK_EXACT if kinds.counts_instructions(records) else CLOCK_REAL
    for r in records:
        if isinstance(r, dict) and r.get("t") == "result":
            r["clock"] = clock
    return records


def turns_token(doc: dict[str, Any]) -> str | None:
    """The token a results.json's run shares with the other side of an A/B run in turn (`run.turns`)."""
    run = doc.get("run")
    turns = run.get("turns") if isinstance(run, dict) else None
    token = turns.get("token") if isinstance(turns, dict) else None
    return token if isinstance(token, str) else None


def stamp_turns(records: list[Record], token: str) -> None:
    """Every result record told the token of the sets run in turn it belongs to, in place."""
    for r in records:
        if isinstance(r, dict) and r.get("t") == "result":
            r[TURNS] = token


def parse_sets(data: bytes) -> list[ParseResult]:
    """A whole serial log as its result sets: its boots (protocol.parse_boots), the replicas of one
    run merged (group)."""
    return group(parse_boots(data))
