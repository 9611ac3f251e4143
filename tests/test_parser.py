"""The record parser (tools/cleanroom_host/records/protocol.py) against damaged logs.

Logs are built with the small encoder below, written from PROTOCOL.md and
independent of the parser's own encoder.
"""

from __future__ import annotations

import json
import random
import re
import zlib
from pathlib import Path
from typing import Any

import pytest

from cleanroom_host.records import protocol
from cleanroom_host.records.protocol import StreamScanner, format_ranges, parse_log
from cleanroom_host.records.results import csv_rows

PROTOCOL_EXAMPLE = (b'@cr1 {"t":"hello","seq":0,"proto":1,"kernel":"0.1.0",'
                    b'"cmdline":"suite=quick exit=qemu"} ~22317d96')


def frame(obj: dict[str, Any], eol: bytes = b"\r\n") -> bytes:
    js = json.dumps(obj, separators=(",", ":")).encode()
    return b"@cr1 " + js + b" ~" + format(zlib.crc32(js), "08x").encode() + eol


def sample_records(status: str = "ok") -> list[dict[str, Any]]:
    body: list[dict[str, Any]] = [
        {"t": "hello", "proto": 1, "kernel": "0.1.0", "cmdline": "suite=quick exit=qemu"},
        {"t": "cpu", "vendor": "GenuineIntel", "family": 6, "model": 6, "stepping": 3,
         "brand": "QEMU Virtual CPU", "features": ["tsc", "pse"], "hypervisor": None,
         "caches": [{"level": 1, "type": "data", "size": 32768, "ways": 8, "line": 64}]},
        {"t": "tsc", "hz": 2000000000, "method": "pit", "serialize": "cpuid", "overhead": 40},
        {"t": "mem", "usable": 133169152, "largest": 132120576},
        {"t": "config", "cfg": {"suite": "quick", "paging": "off"}},
        {"t": "progress", "bench": "nop", "done": 0, "total": 2},
        {"t": "result", "bench": "nop", "case": "empty", "params": {"size": 4096}, "unit": "cycles",
         "n": 100, "min": 1, "med": 2, "max": 9, "mean": 3},
        {"t": "progress", "bench": "nop", "done": 1, "total": 2},
        {"t": "result", "bench": "nop", "case": "empty", "params": {"size": 8192, "paging": "on"},
         "unit": "cycles", "n": 100, "min": 2, "med": 3, "max": 10, "mean": 4},
        {"t": "test", "name": "crc32", "ok": True, "detail": ""},
        {"t": "skip", "what": "rdtscp", "why": "cpu lacks rdtscp"},
    ]
    recs = [dict(r, seq=i) for i, r in enumerate(body)]
    recs.append({"t": "done", "seq": len(recs), "status": status, "records": len(recs),
                 "passed": 1, "failed": 0})
    return recs


def lines_of(recs: list[dict[str, Any]], eol: bytes = b"\r\n") -> list[bytes]:
    return [frame(r, eol) for r in recs]


def flip(data: bytes, pos: int, bit: int = 0x01) -> bytes:
    return data[:pos] + bytes([data[pos] ^ bit]) + data[pos + 1:]


RECS = sample_records()
N = len(RECS)
GOOD = b"".join(lines_of(RECS))


def seqs(res: protocol.ParseResult) -> list[int]:
    return [r["seq"] for r in res.records]


# --- the protocol's own example ------------------------------------------

def test_protocol_example_crc_verifies() -> None:
    payload, crc = PROTOCOL_EXAMPLE[len(b"@cr1 "):].rsplit(b" ~", 1)
    assert format(zlib.crc32(payload), "08x").encode() == crc == b"22317d96"
    res = parse_log(PROTOCOL_EXAMPLE + b"\r\n")
    assert res.corrupt == 0
    assert res.records == [{"t": "hello", "seq": 0, "proto": 1, "kernel": "0.1.0",
                            "cmdline": "suite=quick exit=qemu"}]


def test_docs_examples_verify(repo_root: Path) -> None:
    """Every example record in the protocol document (docs/PROTOCOL.md) carries a valid CRC."""
    shared = repo_root.parent / "shared" / "PROTOCOL.md"  # the team's copy, where one is beside the checkout
    for doc in [repo_root / "docs" / "PROTOCOL.md", *([shared] if shared.is_file() else [])]:
        examples = [m.group(0).encode() for m in re.finditer(r"@cr1 \{.*\} ~[0-9a-f]{8}", doc.read_text())]
        assert examples, f"{doc} has no example record"
        for ex in examples:
            res = parse_log(ex)
            assert res.corrupt == 0 and len(res.records) == 1, ex


def test_encoder_matches_parsers_encoder() -> None:
    for r in RECS:
        assert protocol.encode_record(r) == frame(r)


# --- good logs ------------------------------------------------------------

def test_good_log_is_complete() -> None:
    res = parse_log(GOOD)
    assert res.records == RECS
    assert (res.corrupt, res.missing, res.duplicates, res.reordered) == (0, [], 0, 0)
    assert res.complete and res.status == "ok" and not res.damaged
    assert res.summary_line() == f"records: {N} good, 0 corrupt, 0 missing, complete: yes"


@pytest.mark.parametrize("status", ["ok", "fail", "config", "fault"])
def test_status_comes_from_done(status: str) -> None:
    res = parse_log(b"".join(lines_of(sample_records(status))))
    assert res.complete and res.status == status


def test_lf_and_crlf_parse_alike() -> None:
    crlf = parse_log(b"".join(lines_of(RECS, b"\r\n")))
    lf = parse_log(b"".join(lines_of(RECS, b"\n")))
    assert crlf.records == lf.records == RECS
    assert crlf.complete and lf.complete


def test_empty_log() -> None:
    res = parse_log(b"")
    assert res.records == [] and res.corrupt == 0 and res.missing == []
    assert not res.complete and res.status is None
    assert res.summary_line() == "records: 0 good, 0 corrupt, 0 missing, complete: no"


def test_log_without_records() -> None:
    res = parse_log(b"SeaBIOS (version 1.16)\r\nBooting from ROM..\r\n\x1b[2J\x1b[01;01H")
    assert res.records == [] and res.corrupt == 0 and not res.complete


# --- flipped bytes ---------------------------------------------------------

def test_flipped_byte_in_json() -> None:
    lines = lines_of(RECS)
    i = 6  # a result record
    pos = lines[i].index(b'"min":') + 6
    lines[i] = flip(lines[i], pos)
    res = parse_log(b"".join(lines))
    assert res.corrupt == 1
    assert res.missing == [i]
    assert seqs(res) == [s for s in range(N) if s != i]
    assert not res.complete and res.damaged
    assert res.corrupt_lines == [i + 1]


def test_flipped_byte_in_crc() -> None:
    lines = lines_of(RECS)
    lines[3] = flip(lines[3], lines[3].rindex(b"~") + 3)
    res = parse_log(b"".join(lines))
    assert (res.corrupt, res.missing) == (1, [3])
    assert not res.complete


def test_every_single_bit_flip_is_caught() -> None:
    """No flip anywhere in a record line turns it into a different good record."""
    lines = lines_of(RECS)
    target = lines[6]
    for pos in range(len(target) - 2):  # the EOL bytes carry no data
        for bit in (0x01, 0x20, 0x80):
            damaged = lines[:6] + [flip(target, pos, bit)] + lines[7:]
            res = parse_log(b"".join(damaged))
            assert res.records == RECS[:6] + RECS[7:], (pos, bit)
            assert res.missing == [6] and not res.complete
            # Damage inside the frame is counted; a broken marker hides the line.
            assert res.corrupt == (0 if pos < len(b"@cr1 ") else 1), (pos, bit)


def test_crc_must_be_lowercase_hex() -> None:
    line = frame(RECS[0]).rstrip(b"\r\n")
    payload, crc = line.rsplit(b"~", 1)
    upper = payload + b"~" + crc.upper()
    assert upper != line, "this record's CRC is all digits: pick one with a hex letter"
    assert parse_log(upper).corrupt == 1


def test_valid_crc_over_bad_json_is_corrupt() -> None:
    bad = b'{"t":"hello","seq":0,'
    line = b"@cr1 " + bad + b" ~" + format(zlib.crc32(bad), "08x").encode() + b"\r\n"
    res = parse_log(line + b"".join(lines_of(RECS)[1:]))
    assert res.corrupt == 1 and res.missing == [0] and not res.complete


@pytest.mark.parametrize("obj", [[1, 2], {"t": "hello"}, {"seq": 0}, {"t": "x", "seq": -1},
                                 {"t": "x", "seq": "0"}, {"t": "x", "seq": True}])
def test_record_needs_t_and_seq(obj: Any) -> None:
    js = json.dumps(obj).encode()
    res = parse_log(b"@cr1 " + js + b" ~" + format(zlib.crc32(js), "08x").encode() + b"\n")
    assert res.corrupt == 1 and res.records == []


# --- lost, repeated, reordered lines ------------------------------------

def test_deleted_line() -> None:
    lines = lines_of(RECS)
    del lines[4]
    res = parse_log(b"".join(lines))
    assert res.corrupt == 0 and res.missing == [4]
    assert not res.complete and res.status == "ok"
    assert seqs(res) == [s for s in range(N) if s != 4]


def test_deleted_lines_listed_as_ranges() -> None:
    lines = lines_of(RECS)
    res = parse_log(b"".join(lines[:2] + lines[5:]))
    assert res.missing == [2, 3, 4]
    assert "missing seq: 2-4" in res.detail_lines()


def test_missing_done() -> None:
    res = parse_log(b"".join(lines_of(RECS)[:-1]))
    assert res.records == RECS[:-1] and res.missing == []
    assert not res.complete and res.status is None
    assert any("no done record" in line for line in res.detail_lines())


def test_done_with_wrong_record_count() -> None:
    recs = [dict(r) for r in RECS]
    recs[-1]["records"] = N + 3
    res = parse_log(b"".join(lines_of(recs)))
    assert res.corrupt == 0 and res.missing == []
    assert not res.complete and res.status == "ok"
    assert any("records=" in p for p in res.problems)


def test_duplicated_lines_are_dropped() -> None:
    lines = lines_of(RECS)
    dup = lines[:5] + [lines[4], lines[4]] + lines[5:] + [lines[2]]
    res = parse_log(b"".join(dup))
    assert res.records == RECS
    assert res.duplicates == 3
    assert res.complete and not res.damaged


def test_reordered_lines_are_put_back() -> None:
    lines = lines_of(RECS)
    lines[3], lines[7] = lines[7], lines[3]
    lines[-1], lines[-2] = lines[-2], lines[-1]
    res = parse_log(b"".join(lines))
    assert res.records == RECS
    # Moved records: 3 and 7 (swapped far apart), and one of the last two.
    assert res.reordered == 3
    assert res.complete


def test_shuffled_log_parses_whole() -> None:
    # a hello begins a boot: everything after it is shuffled
    lines = lines_of(RECS)
    rest = lines[1:]
    random.Random(7).shuffle(rest)
    res = parse_log(b"".join(lines[:1] + rest))
    assert res.records == RECS and res.complete


def test_conflicting_records_keep_the_first() -> None:
    other = dict(RECS[6], min=12345)
    lines = lines_of(RECS)
    lines.insert(8, frame(other))
    res = parse_log(b"".join(lines))
    assert res.records == RECS
    assert res.conflicts == [other]
    assert not res.complete and res.damaged


# --- noise ------------------------------------------------------------------

def test_garbage_and_ansi_between_records() -> None:
    noise = [b"\x1b[2J\x1b[01;01H\x1b[=3h\x1b[2J", b"BdsDxe: loading Boot0001 \"UEFI QEMU DVD-ROM\"",
             b"\xff\xfe\x00\x80 binary \xc3\x28", b"", b"   ", b"@cr0 not ours", b"~deadbeef",
             b"GRUB loading.", b"Welcome to GRUB!\r\r"]
    out = b""
    for i, line in enumerate(lines_of(RECS)):
        out += noise[i % len(noise)] + b"\r\n" + line
    res = parse_log(out + b"\x1b[0m")
    assert res.records == RECS and res.corrupt == 0 and res.complete


def test_record_after_garbage_on_the_same_line() -> None:
    lines = lines_of(RECS)
    lines[0] = b"\x1b[0m\x1b[37m\x1b[40m\x1b[2J\x1b[01;01H" + lines[0]
    lines[5] = b"\xff\xfegarbage @cr1@cr" + lines[5]
    res = parse_log(b"".join(lines))
    assert res.records == RECS and res.corrupt == 0 and res.complete


def test_text_after_crc_on_the_same_line_is_ignored() -> None:
    lines = lines_of(RECS)
    lines[2] = lines[2].rstrip(b"\r\n") + b"\x1b[0m\r\n"
    res = parse_log(b"".join(lines))
    assert res.records == RECS and res.complete


def test_two_records_on_one_line() -> None:
    lines = lines_of(RECS)
    joined = lines[:3] + [lines[3].rstrip(b"\r\n") + lines[4]] + lines[5:]
    res = parse_log(b"".join(joined))
    assert res.records == RECS and res.corrupt == 0


def test_truncated_last_line() -> None:
    lines = lines_of(RECS)
    cut = lines[:-1] + [lines[-1][:30]]
    res = parse_log(b"".join(cut))
    assert res.corrupt == 1
    assert res.records == RECS[:-1]
    assert not res.complete and res.status is None


def test_last_line_without_eol_is_still_read() -> None:
    res = parse_log(GOOD.rstrip(b"\r\n"))
    assert res.records == RECS and res.complete


def test_megabyte_line_of_garbage() -> None:
    rng = random.Random(1)
    junk = bytes(rng.randrange(256) for _ in range(4096)).replace(b"\n", b".") * 256
    assert len(junk) >= 1 << 20
    lines = lines_of(RECS)
    res = parse_log(b"".join(lines[:4] + [junk + b"\r\n"] + lines[4:]))
    assert res.records == RECS and res.complete
    # A marker followed by a megabyte of junk is one corrupt record, no more.
    res = parse_log(b"".join(lines[:4] + [b"@cr1 " + junk + b"\r\n"] + lines[4:]))
    assert res.records == RECS and res.corrupt == 1


def test_non_utf8_inside_a_record_is_corrupt() -> None:
    payload = b'{"t":"skip","seq":0,"what":"\xff","why":""}'
    line = b"@cr1 " + payload + b" ~" + format(zlib.crc32(payload), "08x").encode() + b"\n"
    assert parse_log(line).corrupt == 1


# --- streaming --------------------------------------------------------------

def test_stream_scanner_matches_whole_parse() -> None:
    data = b"\x1b[2Jnoise\r\n" + GOOD
    rng = random.Random(3)
    scanner = StreamScanner()
    records = []
    pos = 0
    while pos < len(data):
        step = rng.randrange(1, 40)
        records += [f.record for f in scanner.feed(data[pos:pos + step]) if f.record]
        pos += step
    assert records == RECS


def test_stream_scanner_bounds_a_line_without_end() -> None:
    scanner = StreamScanner()
    for _ in range(40):
        assert scanner.feed(b"x" * 65536) == []
    assert len(scanner._pending) <= StreamScanner.MAX_PENDING
    frames = scanner.feed(b"\n" + frame(RECS[0]))
    assert [f.record for f in frames] == [RECS[0]]


# --- helpers --------------------------------------------------------------

def test_format_ranges() -> None:
    assert format_ranges([1, 2, 3, 7, 9, 10]) == "1-3, 7, 9-10"
    assert format_ranges([]) == ""


def test_csv_rows_flatten_params() -> None:
    header, rows = csv_rows(RECS)
    assert header == ["bench", "case", "param_size", "param_paging", "unit", "n", "min", "med", "max", "mean"]
    assert rows == [["nop", "empty", "4096", "", "cycles", "100", "1", "2", "9", "3"],
                    ["nop", "empty", "8192", "on", "cycles", "100", "2", "3", "10", "4"]]


# --- several boots in one log (issue 19) ---------------------------------------

REPO = Path(__file__).resolve().parent.parent
TSC_BOOT = (REPO / "tests" / "fixtures" / "qemu-quick.log").read_bytes()  # bench tsc, then done
CTXSW_BOOT = (REPO / "docs" / "data" / "qemu-icount-ctxsw.log").read_bytes()
HOSTED_BOOT = (REPO / "tests" / "fixtures" / "hosted-workset.log").read_bytes()  # no banner line


def without_done(log: bytes) -> bytes:
    """The log as a reset before its end leaves it: every line up to its done record."""
    return log[:log.index(b'@cr1 {"t":"done"')]


def test_two_logs_joined_are_two_boots_never_merged() -> None:
    boots = protocol.parse_boots(TSC_BOOT + CTXSW_BOOT)
    assert len(boots) == 2
    for res, alone in zip(boots, (TSC_BOOT, CTXSW_BOOT)):
        whole = parse_log(alone)
        assert res.records == whole.records and res.complete and not res.damaged and not res.problems
    assert [b.first("hello")["cmdline"].split()[1:] for b in boots] == [["suite=quick", "exit=auto"],
                                                                       ["bench=ctxsw", "paging=off", "runs=3",
                                                                        "exit=auto"]]
    assert [(b.boot, b.boots) for b in boots] == [(1, 2), (2, 2)]
    first, second = TSC_BOOT.count(b"\n"), CTXSW_BOOT.count(b"\n")
    assert boots[0].lines == (1, first) and boots[1].lines == (first + 1, first + second)
    assert boots[1].boot_text() == f"boot 2 of 2 (log lines {first + 1}-{first + second})"


def test_a_log_of_several_boots_is_refused_where_one_is_asked_for() -> None:
    with pytest.raises(protocol.SeveralBoots, match=r"holds 2 boots \(1: log lines 1-18, ok; 2: log lines 19-.*, ok\)"
                       r".*--boot K"):
        parse_log(TSC_BOOT + CTXSW_BOOT)
    boots = protocol.parse_boots(TSC_BOOT + CTXSW_BOOT)
    assert protocol.pick_boot(boots, 2, "x") is boots[1]
    with pytest.raises(ValueError, match="--boot 3: x holds 2 boots; choose 1 to 2"):
        protocol.pick_boot(boots, 3, "x")


def test_the_same_boot_twice_is_two_boots() -> None:
    """The second hello is byte for byte the first's: a boot, not a duplicate."""
    boots = protocol.parse_boots(TSC_BOOT + TSC_BOOT)
    assert len(boots) == 2 and boots[0].records == boots[1].records
    assert all(b.complete and b.duplicates == 0 and not b.conflicts for b in boots)


def test_a_reset_before_done_keeps_every_record_of_both_boots() -> None:
    first = without_done(TSC_BOOT)
    boots = protocol.parse_boots(first + b"\x1b[2JSeaBIOS (version 1.16.2)\r\n" + CTXSW_BOOT)
    assert len(boots) == 2
    assert boots[0].records == parse_log(first).records and len(boots[0].records) == 16
    assert boots[0].done is None and not boots[0].complete and not boots[0].conflicts
    assert boots[1].records == parse_log(CTXSW_BOOT).records and boots[1].complete


def test_a_reset_in_the_middle_of_a_record_line() -> None:
    """The reset cuts a record; the next boot's banner follows on the same line."""
    first = without_done(TSC_BOOT)
    cut = first[:-40]  # the last record loses its end (and its line's)
    boots = protocol.parse_boots(cut + CTXSW_BOOT)
    assert len(boots) == 2
    assert boots[0].corrupt == 1 and len(boots[0].records) == 15
    assert boots[1].corrupt == 0 and boots[1].records == parse_log(CTXSW_BOOT).records


def test_a_boot_whose_hello_is_damaged_begins_at_its_banner() -> None:
    second = bytearray(CTXSW_BOOT)
    at = second.index(b'"t":"hello"') + 20
    second[at] ^= 0x01
    boots = protocol.parse_boots(TSC_BOOT + bytes(second))
    assert len(boots) == 2 and boots[0].records == parse_log(TSC_BOOT).records and not boots[0].damaged
    assert boots[1].corrupt == 1 and boots[1].missing == [0] and not boots[1].conflicts
    assert boots[1].records == parse_log(CTXSW_BOOT).records[1:]


def test_boots_without_a_banner_begin_at_hello() -> None:
    """The hosted build prints no banner; a capture may also start after it."""
    assert b"records follow" not in HOSTED_BOOT
    boots = protocol.parse_boots(HOSTED_BOOT + HOSTED_BOOT)
    assert len(boots) == 2 and all(b.complete for b in boots)
    # the capture began after the banner and the hello of a boot that then reset
    tail = without_done(TSC_BOOT)
    tail = tail[tail.index(b'@cr1 {"t":"result"'):]
    boots = protocol.parse_boots(tail + CTXSW_BOOT)
    assert len(boots) == 2 and boots[0].first("hello") is None and boots[1].complete


def test_a_repeated_hello_line_is_a_duplicate_not_a_boot() -> None:
    lines = lines_of(RECS)
    res = parse_log(b"".join(lines[:1] + lines[:1] + lines[1:]))
    assert res.records == RECS and res.duplicates == 1 and res.complete


def test_the_banner_the_parser_looks_for_is_the_kernels() -> None:
    wire = (REPO / "lib" / "wire.h").read_text()
    assert f'#define WIRE_BANNER_TAIL "{protocol.BANNER_TAIL.decode()}"' in wire
    assert TSC_BOOT.startswith(b"cleanroom 0.1.0" + protocol.BANNER_TAIL + b"\r\n")
