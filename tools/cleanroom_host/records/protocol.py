"""Protocol v1 records: framing, CRC-32 check and log parsing.

A record line is ``@cr1 <json> ~<crc>`` (see docs/PROTOCOL.md). The log is
read as bytes; any other text around records is ignored. A frame whose CRC
or JSON is bad is counted as corrupt and never guessed at; every good record
is kept, duplicates are dropped, reordered records are put back in seq order.
A log may hold several boots (a capture left running across a reset, logs
joined): each begins at the kernel's banner line or its `hello`, and each
is parsed on its own (parse_boots); parse_log wants a log of one.
"""

from __future__ import annotations

import bisect
import json
import re
import zlib
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator

PROTO_VERSION = 1
MARKER = b"@cr1 "
CRC_SEP = b" ~"
EOL = b"\r\n"
# The end of the line the kernel prints before its first record,
# "cleanroom <version>: records follow (protocol v1)" (WIRE_BANNER_TAIL).
BANNER_TAIL = b": records follow (protocol v1)"

REC_ERROR = "error"  # lib/wire.h's REC_ERROR
RECORD_TYPES = (
    "hello", "cpu", "tsc", "mem", "config", "progress", "result", "test",
    "skip", REC_ERROR, "fault", "thread_fault", "done",
)
STATUSES = ("ok", "fail", "config", "fault")
# An error record's fields (docs/PROTOCOL.md's `error` row): every one has a code and its message; a rejected
# command-line token (code `cmdline`, app/startup.c) also the token and what would have been accepted.
ERROR_CODE, ERROR_MSG, ERROR_TOKEN, ERROR_ACCEPTED = "code", "msg", "token", "accepted"

# " ~" followed by exactly 8 lowercase hex digits (not part of a longer run).
_CRC_RE = re.compile(rb" ~([0-9a-f]{8})(?![0-9a-f])")

Record = dict[str, Any]

MAX_MISSING_LISTED = 1_000_000


def crc32(data: bytes) -> int:
    """CRC-32 (IEEE 802.3) as zlib computes it."""
    return zlib.crc32(data) & 0xFFFFFFFF


def encode_record(obj: Record, eol: bytes = EOL) -> bytes:
    """Frame one record exactly as the kernel does (used by tests and fakes)."""
    payload = json.dumps(obj, separators=(",", ":"), ensure_ascii=True).encode("ascii")
    return MARKER + payload + CRC_SEP + b"%08x" % crc32(payload) + eol


def _reject_constant(name: str) -> Any:
    raise ValueError(f"non-standard JSON constant {name}")


@dataclass
class Frame:
    """One marker occurrence in the log and what became of it."""

    line: int  # 1-based line number in the log
    record: Record | None  # the decoded record, or None when corrupt
    raw: bytes  # the JSON bytes (good) or the frame text (corrupt), capped
    reason: str = ""  # why it is corrupt
    banner: bool = False  # not a record: the kernel's banner line, where a boot begins


def decode_frame(segment: bytes) -> tuple[Record | None, bytes, str]:
    """Decode the text that follows a marker, up to the end of its line.

    Returns (record, json_bytes, "") or (None, segment, reason). Text after
    the CRC on the same line is ignored; the CRC covers only the JSON.
    """
    matches = list(_CRC_RE.finditer(segment))
    if not matches:
        return None, segment, "no CRC"
    # Prefer the last candidate: JSON strings may themselves contain " ~".
    for m in reversed(matches):
        payload = segment[: m.start()]
        if crc32(payload) == int(m.group(1), 16):
            break
    else:
        return None, segment, "CRC mismatch"
    try:
        obj = json.loads(payload.decode("ascii"), parse_constant=_reject_constant)
    except (UnicodeDecodeError, ValueError) as exc:
        return None, payload, f"bad JSON: {exc}"
    if not isinstance(obj, dict):
        return None, payload, "JSON is not an object"
    seq = obj.get("seq")
    if not isinstance(obj.get("t"), str) or not isinstance(seq, int) or isinstance(seq, bool) or seq < 0:
        return None, payload, "missing or bad t/seq"
    return obj, payload, ""


def scan_line(line: bytes, lineno: int) -> Iterator[Frame]:
    """Yield a Frame for each marker found anywhere in one line."""
    start = line.find(MARKER)
    while start >= 0:
        body = start + len(MARKER)
        nxt = line.find(MARKER, body)
        segment = line[body: nxt if nxt >= 0 else len(line)].rstrip(b"\r\n\t ")
        record, raw, reason = decode_frame(segment)
        # Good frames keep their whole JSON (duplicates are compared on it).
        yield Frame(lineno, record, raw if record is not None else raw[:200], reason)
        start = nxt


def split_lines(data: bytes) -> Iterator[tuple[int, bytes]]:
    """Yield (line number, line) for each line; the last may lack its EOL."""
    lineno = 0
    pos = 0
    n = len(data)
    while pos < n:
        end = data.find(b"\n", pos)
        if end < 0:
            end = n
        lineno += 1
        yield lineno, data[pos:end]
        pos = end + 1


def scan(data: bytes) -> Iterator[Frame]:
    """Yield every frame of a whole log, in arrival order, and a banner
    Frame where the kernel's banner line is."""
    for lineno, line in split_lines(data):
        at = line.find(BANNER_TAIL)
        if at < 0:
            yield from scan_line(line, lineno)
            continue
        yield from scan_line(line[:at], lineno)  # a record cut off by a reset, say
        yield Frame(lineno, None, b"", banner=True)
        yield from scan_line(line[at:], lineno)


@dataclass
class ParseResult:
    """What a log held: good records in seq order plus the damage found."""

    records: list[Record] = field(default_factory=list)
    corrupt: int = 0
    corrupt_lines: list[int] = field(default_factory=list)
    missing: list[int] = field(default_factory=list)
    duplicates: int = 0
    reordered: int = 0
    conflicts: list[Record] = field(default_factory=list)
    done: Record | None = None
    complete: bool = False
    problems: list[str] = field(default_factory=list)
    boot: int = 1  # which boot of the log this is (1-based)
    boots: int = 1  # how many the log holds
    lines: tuple[int, int] | None = None  # the log lines its frames came from (None: no frame)
    replicas: int = 1  # how many boots (processes) of one command line it merges (replicas.py)

    @property
    def status(self) -> str | None:
        if self.done is None:
            return None
        status = self.done.get("status")
        return status if isinstance(status, str) else None

    @property
    def damaged(self) -> bool:
        return bool(self.corrupt or self.missing or self.conflicts)

    def of_type(self, t: str) -> list[Record]:
        return [r for r in self.records if r.get("t") == t]

    def first(self, t: str) -> Record | None:
        for r in self.records:
            if r.get("t") == t:
                return r
        return None

    def boot_text(self) -> str:
        """'boot 2 of 3 (log lines 41-80)'; 'set 1 of 2, 5 boots (...)' for merged replicas."""
        where = f" (log lines {self.lines[0]}-{self.lines[1]})" if self.lines else ""
        if self.replicas > 1:
            return f"set {self.boot} of {self.boots}, {self.replicas} boots of one command line{where}"
        return f"boot {self.boot} of {self.boots}{where}"

    def summary_line(self) -> str:
        return (f"records: {len(self.records)} good, {self.corrupt} corrupt, "
                f"{len(self.missing)} missing, complete: {'yes' if self.complete else 'no'}")

    def detail_lines(self) -> list[str]:
        """Lines that explain the summary; empty for a clean, complete log."""
        out: list[str] = []
        if self.corrupt:
            lines = ", ".join(str(n) for n in self.corrupt_lines[:20])
            more = " ..." if len(self.corrupt_lines) > 20 else ""
            out.append(f"corrupt records on lines: {lines}{more}")
        if self.missing:
            out.append(f"missing seq: {format_ranges(self.missing)}")
        if self.duplicates:
            out.append(f"duplicates dropped: {self.duplicates}")
        if self.reordered:
            out.append(f"reordered: {self.reordered} records put back in seq order")
        if self.conflicts:
            seqs = ", ".join(str(r.get("seq")) for r in self.conflicts[:20])
            out.append(f"conflicting records (same seq, different content) not kept: seq {seqs}")
        out.extend(self.problems)
        if self.done is not None:
            d = self.done
            out.append(f"done: status {d.get('status')}, passed {d.get('passed')}, "
                       f"failed {d.get('failed')}, records {d.get('records')}")
        return out


def consecutive_runs(numbers: list[int]) -> list[tuple[int, int]]:
    """Sorted numbers as runs of consecutive values: [1,2,3,7] -> [(1, 3), (7, 7)]."""
    runs: list[tuple[int, int]] = []
    for n in numbers:
        if runs and n == runs[-1][1] + 1:
            runs[-1] = (runs[-1][0], n)
        else:
            runs.append((n, n))
    return runs


def format_ranges(numbers: list[int]) -> str:
    """[1,2,3,7,9,10] -> '1-3, 7, 9-10'."""
    return ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in consecutive_runs(numbers))


def _longest_increasing(values: list[int]) -> int:
    """Length of the longest increasing subsequence: the records that arrived
    in order; the rest are the ones that were moved."""
    tails: list[int] = []
    for v in values:
        i = bisect.bisect_left(tails, v)
        if i == len(tails):
            tails.append(v)
        else:
            tails[i] = v
    return len(tails)


SUMS = "sums"  # lib/wire.h's WIRE_SUMS: a result's samples and statistics are totals over `per` operations
DIVIDED = "divided"  # what the host writes in its place once it has divided them


def divided(rec: Record) -> Record:
    """A result the kernel sent as sums (bench asm's: a copy's cost is a fraction of a whole tick or
    instruction), its samples and min, med, max, mean divided by `per` into one operation's floats, and
    `divided: "host"` where `sums` was; any other record as it is."""
    per = rec.get("per")
    if rec.get("t") != "result" or rec.get(SUMS) is not True or not isinstance(per, int) or per < 1:
        return rec
    out: Record = {}
    for key, value in rec.items():
        if key == SUMS:
            out[DIVIDED] = "host"
        elif key in ("min", "med", "max", "mean") and isinstance(value, int) and not isinstance(value, bool):
            out[key] = value / per
        elif key == "samples" and isinstance(value, list):
            out[key] = [v / per if isinstance(v, int) and not isinstance(v, bool) else v for v in value]
        else:
            out[key] = value
    return out


def assemble(frames: Iterator[Frame]) -> ParseResult:
    """Turn frames in arrival order into a ParseResult."""
    res = ParseResult()
    by_seq: dict[int, tuple[Record, bytes]] = {}
    arrival: list[int] = []
    max_seen = -1
    for fr in frames:
        if fr.banner:
            continue
        if fr.record is None:
            res.corrupt += 1
            res.corrupt_lines.append(fr.line)
            continue
        seq = fr.record["seq"]
        if seq in by_seq:
            if by_seq[seq][1] == fr.raw:
                res.duplicates += 1
            else:
                res.conflicts.append(fr.record)
            continue
        arrival.append(seq)
        max_seen = max(max_seen, seq)
        by_seq[seq] = (fr.record, fr.raw)
    res.reordered = len(arrival) - _longest_increasing(arrival)

    res.records = [divided(by_seq[s][0]) for s in sorted(by_seq)]
    dones = [r for r in res.records if r.get("t") == "done"]
    res.done = dones[-1] if dones else None
    last = max_seen
    limit = min(last + 1, len(by_seq) + MAX_MISSING_LISTED)
    res.missing = [s for s in range(limit) if s not in by_seq]
    if limit <= last:
        res.problems.append(f"seq jumps to {last}: missing list cut at {limit}")

    if res.done is None:
        res.problems.append("no done record: the run did not finish (or its end was lost)")
        return res
    done_seq = res.done["seq"]
    before = sum(1 for s in by_seq if s < done_seq)
    claimed = res.done.get("records")
    if len(dones) > 1:
        res.problems.append(f"{len(dones)} done records; using the last (seq {done_seq})")
    if claimed != done_seq:
        res.problems.append(f"done says records={claimed} but it has seq {done_seq}")
    if before != done_seq:
        res.problems.append(f"done at seq {done_seq} but only {before} records before it arrived")
    if last > done_seq:
        res.problems.append(f"records after done (up to seq {last})")
    res.complete = (claimed == done_seq and before == done_seq
                    and res.status in STATUSES and not res.conflicts)
    return res


def split_boots(frames: Iterable[Frame]) -> list[list[Frame]]:
    """Frames in arrival order, one list per boot. A boot begins at the
    kernel's banner or at a good `hello`, once the boot before holds a good
    record (a hello repeated before anything else of its boot arrived is a
    duplicated line, not a boot). Frames before the first go with it."""
    boots: list[list[Frame]] = [[]]
    hello: bytes | None = None  # the boot's hello, while nothing else of it has arrived
    other = False  # the boot holds a good record besides that hello
    for fr in frames:
        rec = fr.record
        is_hello = rec is not None and rec.get("t") == "hello"
        repeat = is_hello and not other and fr.raw == hello
        if (fr.banner or is_hello and not repeat) and (other or hello is not None):
            boots.append([])
            hello, other = None, False
        if is_hello and not other:
            hello = fr.raw
        elif rec is not None and not repeat:
            other = True
        boots[-1].append(fr)
    return boots


def parse_boots(data: bytes) -> list[ParseResult]:
    """Parse a whole serial log (bytes exactly as received): one ParseResult
    per boot, in the order they ran; records of two boots are never merged."""
    boots = split_boots(scan(data))
    results = []
    for k, frames in enumerate(boots, 1):
        res = assemble(iter(frames))
        res.boot, res.boots = k, len(boots)
        res.lines = (frames[0].line, frames[-1].line) if frames else None
        results.append(res)
    return results


class SeveralBoots(ValueError):
    """A log of several boots where one results set was asked for."""

    def __init__(self, what: str, boots: list[ParseResult]) -> None:
        self.boots = boots
        listed = "; ".join(f"{b.boot}: log lines {b.lines[0]}-{b.lines[1]}, {b.status or 'no done'}"
                           if b.lines else f"{b.boot}: empty" for b in boots)
        super().__init__(f"{what} holds {len(boots)} boots ({listed}), and a results set is one boot: "
                         f"pick one with --boot K, or run `cleanroom parse` on the log, which writes each "
                         f"boot's set into boot-1/ ... boot-{len(boots)}/ beside it")


def pick_boot(boots: list[ParseResult], boot: int | None, what: str) -> ParseResult:
    """The log's only boot, or boot number `boot` (1-based) of several."""
    if boot is None:
        if len(boots) > 1:
            raise SeveralBoots(what, boots)
        return boots[0]
    if not 1 <= boot <= len(boots):
        raise ValueError(f"--boot {boot}: {what} holds {len(boots)} boot{'s' if len(boots) > 1 else ''}; "
                         f"choose 1 to {len(boots)}")
    return boots[boot - 1]


def parse_log(data: bytes) -> ParseResult:
    """Parse a serial log of one boot; SeveralBoots when it holds more."""
    return pick_boot(parse_boots(data), None, "the log")


class StreamScanner:
    """Incremental scanner for live capture: feed bytes, get complete frames.

    Only whole lines are scanned; the unfinished tail is kept (bounded, so a
    endless line of garbage cannot grow memory without limit).
    """

    MAX_PENDING = 1 << 20

    def __init__(self) -> None:
        self._pending = b""
        self._lineno = 0

    def feed(self, data: bytes) -> list[Frame]:
        buf = self._pending + data
        frames: list[Frame] = []
        start = 0
        while True:
            end = buf.find(b"\n", start)
            if end < 0:
                break
            self._lineno += 1
            frames.extend(scan_line(buf[start:end], self._lineno))
            start = end + 1
        self._pending = buf[start:]
        if len(self._pending) > self.MAX_PENDING:
            # Keep only a tail that may still hold a marker's beginning.
            cut = self._pending.rfind(MARKER)
            self._pending = self._pending[cut:] if cut >= 0 else self._pending[-len(MARKER):]
            if len(self._pending) > self.MAX_PENDING:
                self._pending = b""
        return frames
