"""Results read back from QR codes (docs/QR.md): photos or screendumps -> the record log.

The kernel shows its record log L, compressed to a raw DEFLATE stream D and cut into
n chunks, one QR code per chunk. The text of code i is

    CR1/i/n/len(L)/CRC32(L)/CRC32(chunk_i)/BASE45(chunk_i)

Images are read by zxing-cpp, a real QR decoder that finds every code in an image (a
screen shows several) and undoes a photo's perspective, and base45 is decoded by the
base45 package, independent of the kernel's encoder; this module only checks the
headers, puts the chunks back in order and inflates them with zlib, no further than
the length the codes state and INFLATE_SPARE bytes. What precedes the first missing
chunk is still inflated: a raw DEFLATE stream can be decoded from its start, so the
records up to the gap survive.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

from .protocol import consecutive_runs
from .text import not_installed

QR_PREFIX = "CR1"
_FIELDS = 7  # prefix, i, n, len(L), CRC(L), CRC(chunk), data
UNREADABLE_NAMED = 10  # images without a code named one by one; the rest counted
# Images smaller than this (pixels on the longer side) are also read at twice their size: a phone
# photo of 1500 pixels leaves a module of a 640x480 screen ~5 pixels, too few after blur and JPEG
# for some codes, which the larger copy gives back (docs/QR.md).
UPSCALE_BELOW = 2000
# The codes say how long the log is: the stream is inflated no further than that and this many
# bytes, so that a set whose few kilobytes of stream inflate a thousandfold (a stream of another
# log, or one made to) is refused at a bounded cost. The bytes to spare let a log that is a little
# longer than stated be named as such ("inflates to ..., the codes say ...").
INFLATE_SPARE = 1024


class QrError(Exception):
    """A code's text is not one of ours, or is damaged; the message says how."""


class DecoderMissing(Exception):
    """zxing-cpp, Pillow or base45 is not installed; the message says how to get it."""


def crc32(data: bytes) -> int:
    return zlib.crc32(data) & 0xFFFFFFFF


def _base45() -> Any:
    """The base45 package (RFC 9285), an implementation independent of the kernel's encoder."""
    try:
        import base45
    except ImportError as exc:
        raise DecoderMissing(not_installed("base45")) from exc
    return base45


def base45_encode(data: bytes) -> str:
    """RFC 9285 encoding (tests and fakes: the kernel has its own encoder)."""
    return str(_base45().b45encode(data).decode("ascii"))


def base45_decode(text: str) -> bytes:
    """RFC 9285 decoding; QrError for a character outside the alphabet, a dangling
    single character, or a group whose value does not fit its bytes."""
    b45 = _base45()
    try:
        return bytes(b45.b45decode(text))
    except ValueError:
        raise QrError(base45_problem(text, b45)) from None


def base45_problem(text: str, b45: Any) -> str:
    """What is wrong with text that the package refused (it says only "Invalid base45 string")."""
    bad = next((c for c in text if c not in b45.BASE45_CHARSET), None)
    if bad is not None:
        return f"character {bad!r} is not in the base45 alphabet"
    if len(text) % 3 == 1:
        return f"base45 text of {len(text)} characters (a multiple of 3, or that plus 2, expected)"
    for k in range(0, len(text), 3):
        group = text[k:k + 3]
        try:
            b45.b45decode(group)
        except ValueError:
            holds = "two bytes hold" if len(group) == 3 else "one byte holds"
            return f"base45 group {group!r} stands for more than {holds}"
    return f"the base45 package refused {text[:40]!r}"


@dataclass(frozen=True)
class Chunk:
    """One code's content: chunk `index` (0-based) of `total`, and what the run's log must be."""

    index: int
    total: int
    log_len: int
    log_crc: int
    data: bytes

    def text(self) -> str:
        """The code's text, as the kernel makes it (tests and fakes use this)."""
        return (f"{QR_PREFIX}/{self.index}/{self.total}/{self.log_len}/{self.log_crc:08X}/"
                f"{crc32(self.data):08X}/{base45_encode(self.data)}")


def _decimal(text: str, what: str) -> int:
    if not text.isdigit() or not text.isascii():
        raise QrError(f"{what} {text!r} is not a decimal number")
    return int(text)


def _hex8(text: str, what: str) -> int:
    if len(text) != 8 or any(c not in "0123456789ABCDEF" for c in text):
        raise QrError(f"{what} {text!r} is not 8 uppercase hex digits")
    return int(text, 16)


def is_ours(text: str) -> bool:
    return text.startswith(QR_PREFIX + "/")


def parse_chunk(text: str) -> Chunk:
    """A code's text -> its chunk, every field and the chunk's CRC checked."""
    if not is_ours(text):
        raise QrError(f"not a cleanroom code (it does not start with {QR_PREFIX}/): {text[:40]!r}")
    # base45 has '/' in its alphabet: split off the six header fields only
    parts = text.split("/", _FIELDS - 1)
    if len(parts) != _FIELDS:
        raise QrError(f"{len(parts)} fields, {_FIELDS} expected: {text[:60]!r}")
    _, i, n, log_len, log_crc, chunk_crc, body = parts
    index, total = _decimal(i, "index"), _decimal(n, "total")
    if total == 0 or index >= total:
        raise QrError(f"index {index} of {total} codes")
    data = base45_decode(body)
    if crc32(data) != _hex8(chunk_crc, "chunk CRC"):
        raise QrError(f"code {index + 1} of {total}: its chunk's CRC does not match (damaged)")
    return Chunk(index, total, _decimal(log_len, "log length"), _hex8(log_crc, "log CRC"), data)


def make_chunks(log: bytes, deflated: bytes, total: int) -> list[Chunk]:
    """D cut into `total` chunks in order (all as long as the first but the last), as the contract
    allows the kernel to: for tests and fakes, never for decoding."""
    size = -(-len(deflated) // total) if deflated else 0
    return [Chunk(i, total, len(log), crc32(log), deflated[i * size:(i + 1) * size]) for i in range(total)]


def deflate_raw(log: bytes) -> bytes:
    """A raw DEFLATE stream of log (zlib's encoder; the kernel has its own): for tests and fakes."""
    enc = zlib.compressobj(9, zlib.DEFLATED, -15)
    return enc.compress(log) + enc.flush()


def screen_numbers(indices: Iterable[int]) -> list[int]:
    """Code indices as the screen shows them ("results QR i+1 of n")."""
    return [i + 1 for i in indices]


def name_numbers(numbers: list[int]) -> str:
    """[7] -> '7'; [7, 12] -> '7 and 12'; runs of three or more as ranges: '3-9, 12 and 20'."""
    parts: list[str] = []
    for a, b in consecutive_runs(numbers):
        parts += [f"{a}-{b}"] if b - a >= 2 else [str(v) for v in range(a, b + 1)]
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def missing_text(missing: list[int], total: int) -> str:
    """'missing QR codes 8 and 13 of 31 (...)': numbered as on the screen, indices too."""
    word = "code" if len(missing) == 1 else "codes"
    return (f"missing QR {word} {name_numbers(screen_numbers(missing))} of {total} "
            f"(as the screen numbers them: \"results QR {missing[0] + 1} of {total}\"; "
            f"header index {name_numbers(missing)})")


@dataclass
class Assembly:
    """The log as far as the codes give it."""

    log: bytes = b""  # L, or the records before the first gap (whole lines only)
    complete: bool = False  # every code read, inflated whole, length and CRC(L) right
    total: int | None = None  # n, from the codes
    have: list[int] = field(default_factory=list)  # indices read
    missing: list[int] = field(default_factory=list)
    log_len: int | None = None
    log_crc: int | None = None
    deflated_bytes: int = 0  # bytes of D used
    problems: list[str] = field(default_factory=list)


def assemble(chunks: Iterable[Chunk]) -> Assembly:
    """Put the chunks of one run back together and inflate them.

    The header most codes agree on (n, len(L), CRC(L)) names the run; a code of another
    run is left out and named. Chunks are deduplicated by index (two different chunks
    with one index: the first is kept, the conflict named). What precedes the first
    missing chunk is inflated; only whole lines of it are kept. A stream that inflates past
    len(L) and INFLATE_SPARE bytes is refused whole, none of it kept.
    """
    asm = Assembly()
    chunks = list(chunks)
    if not chunks:
        asm.problems.append("no cleanroom QR code was read")
        return asm
    runs: dict[tuple[int, int, int], int] = {}
    for c in chunks:
        key = (c.total, c.log_len, c.log_crc)
        runs[key] = runs.get(key, 0) + 1
    run = max(runs, key=lambda k: runs[k])
    asm.total, asm.log_len, asm.log_crc = run
    by_index: dict[int, Chunk] = {}
    for c in chunks:
        if (c.total, c.log_len, c.log_crc) != run:
            asm.problems.append(f"code {c.index + 1} of {c.total} belongs to another run (log of {c.log_len} "
                                f"bytes, CRC {c.log_crc:08X}; this run's: {asm.log_len} bytes, {asm.log_crc:08X}); "
                                f"left out")
            continue
        kept = by_index.setdefault(c.index, c)
        if kept.data != c.data:
            asm.problems.append(f"code {c.index + 1} of {c.total} read twice with different contents; "
                                f"the first kept")
    asm.have = sorted(by_index)
    asm.missing = [i for i in range(asm.total) if i not in by_index]
    first_gap = asm.missing[0] if asm.missing else asm.total
    inflater = zlib.decompressobj(wbits=-15)
    out = bytearray()
    broken = False
    limit = asm.log_len + INFLATE_SPARE
    # chunk by chunk: an error in the stream keeps what came before it
    for i in range(first_gap):
        data = by_index[i].data
        try:
            # one byte past the limit at most: enough to know the stream goes past it
            out += inflater.decompress(data, limit + 1 - len(out))
        except zlib.error as exc:
            asm.problems.append(f"the compressed stream is damaged in code {i + 1} of {asm.total}: {exc}")
            broken = True
            break
        if len(out) > limit:
            asm.problems.append(f"the codes say the log is {asm.log_len} bytes, but their compressed stream "
                                f"inflates past {limit} (that and {INFLATE_SPARE} to spare) by code {i + 1} "
                                f"of {asm.total}: refused, nothing kept")
            return asm
        asm.deflated_bytes += len(data)
    whole = not asm.missing and not broken
    if whole and not inflater.eof:
        asm.problems.append("the compressed stream ends early (every code read)")
        whole = False
    elif whole and inflater.unused_data:
        asm.problems.append(f"{len(inflater.unused_data)} bytes after the end of the compressed stream")
    if whole and len(out) != asm.log_len:
        asm.problems.append(f"the log inflates to {len(out)} bytes, the codes say {asm.log_len}")
        whole = False
    elif whole and crc32(bytes(out)) != asm.log_crc:
        asm.problems.append(f"the log's CRC is {crc32(bytes(out)):08X}, the codes say {asm.log_crc:08X}")
        whole = False
    if whole:
        asm.log, asm.complete = bytes(out), True
    else:
        # a cut record would only show up as corrupt: keep whole lines
        end = bytes(out).rfind(b"\n")
        asm.log = bytes(out[:end + 1])
    return asm


@dataclass
class ImageRead:
    """What the decoder found in one image."""

    path: Path
    chunks: list[Chunk] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # unreadable, not ours, damaged


def _decoder() -> tuple[Any, Callable[[Any], list[str]]]:
    """Pillow's Image and a function giving the texts of every QR code in a greyscale image
    (zxing-cpp); DecoderMissing if either is absent."""
    try:
        from PIL import Image
    except ImportError as exc:
        raise DecoderMissing(not_installed("Pillow")) from exc
    try:
        import zxingcpp
    except ImportError as exc:
        raise DecoderMissing(not_installed("zxing-cpp")) from exc

    def texts(image: Any) -> list[str]:
        return [b.text for b in zxingcpp.read_barcodes(image, formats=zxingcpp.BarcodeFormat.QRCode)]
    return Image, texts


def read_image(path: Path) -> ImageRead:
    """Every cleanroom code in one image (PPM, PNG, JPEG: what Pillow opens); a screen shows
    several."""
    Image, texts = _decoder()
    found = ImageRead(path)
    try:
        with Image.open(path) as img:
            gray = img.convert("L")
    except (OSError, ValueError) as exc:
        found.problems.append(f"{path}: cannot read the image: {exc}")
        return found
    read = texts(gray)
    if max(gray.size) < UPSCALE_BELOW:  # small modules read better at twice the size
        read += texts(gray.resize((gray.width * 2, gray.height * 2), Image.Resampling.BICUBIC))
    read = list(dict.fromkeys(read))  # a code read twice counts once
    foreign = [t for t in read if not is_ours(t)]
    for t in read:
        if is_ours(t):
            try:
                found.chunks.append(parse_chunk(t))
            except QrError as exc:
                found.problems.append(f"{path}: {exc}")
    if not found.chunks and not found.problems:
        what = (f"only codes that are not cleanroom's ({foreign[0][:40]!r})" if foreign
                else "no readable QR code")
        found.problems.append(f"{path}: {what}")
    return found


def read_images(paths: Iterable[Path]) -> list[ImageRead]:
    return [read_image(p) for p in paths]


def describe(reads: list[ImageRead], asm: Assembly) -> list[str]:
    """Lines for the user: unreadable images, missing codes, other problems."""
    lines = [p for r in reads if r.chunks for p in r.problems]
    # frames cut from a video: most show no code; name a few, count the rest
    unreadable = [p for r in reads if not r.chunks for p in r.problems]
    lines += unreadable[:UNREADABLE_NAMED]
    if len(unreadable) > UNREADABLE_NAMED:
        lines.append(f"... and {len(unreadable) - UNREADABLE_NAMED} more images without a readable cleanroom code "
                     f"(results.json's run.qr.unreadable lists them all)")
    if asm.total is not None and asm.missing:
        lines.append(missing_text(asm.missing, asm.total)
                     + ("; the records before the first of them are kept" if asm.missing[0] > 0 else ""))
    lines += asm.problems
    return lines


def run_info(reads: list[ImageRead], asm: Assembly) -> dict[str, Any]:
    """What results.json's run records about a decode-photos."""
    return {
        "emulator": "qr-photos",
        "images": [str(r.path) for r in reads],
        "qr": {
            "codes": asm.total,
            "read": asm.have,
            "missing": asm.missing,
            "unreadable": [str(r.path) for r in reads if not r.chunks],
            "log_bytes": asm.log_len,
            "log_crc": f"{asm.log_crc:08X}" if asm.log_crc is not None else None,
            "deflated_bytes": asm.deflated_bytes,
            "complete": asm.complete,
        },
    }


@dataclass
class Decoded:
    """What decode-photos produced."""

    reads: list[ImageRead]
    assembly: Assembly
    result: Any  # protocol.ParseResult of the log written
    messages: list[str]


def decode_photos(paths: list[Path], out_dir: Path) -> Decoded:
    """Read every image, reassemble, then write serial.log (= L, or the records up to the first
    gap) and results.json/csv through the same parse path as `capture`."""
    from .protocol import parse_log
    from .results import SERIAL_LOG, write_results

    reads = read_images(paths)
    asm = assemble(c for r in reads for c in r.chunks)
    messages = describe(reads, asm)
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / SERIAL_LOG).write_bytes(asm.log)
    result = parse_log((out_dir / SERIAL_LOG).read_bytes())
    result.problems.extend(messages)
    write_results(out_dir, result, SERIAL_LOG, run_info(reads, asm))
    return Decoded(reads, asm, result, messages)
