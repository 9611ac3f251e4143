"""The kernel's own encoders for the results' QR codes, checked by real
decoders on the host: its DEFLATE output inflated by zlib, its base45 against
the base45 package (an independent RFC 9285 implementation), its QR codes
read by zbar (zbarimg), at every version; and QR pages on a booted screen
(framebuffer under OVMF, VGA text half blocks under QEMU -kernel) carrying
the serial log's records. docs/QR.md describes the stream."""

from __future__ import annotations

import random
import re
import shutil
import subprocess
import zlib
from pathlib import Path

import base45
import pytest

from booting import TOOL, TOOL_SAFETY_NET_S

REPO = Path(__file__).resolve().parent.parent
UNITS = REPO / "build" / "units"
ALNUM = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ $%*+-./:"
CODE_TEXT = re.compile(r"CR1/(\d+)/(\d+)/(\d+)/([0-9A-F]{8})/([0-9A-F]{8})/(.*)$", re.S)

needs_zbar = pytest.mark.skipif(shutil.which("zbarimg") is None, reason="zbarimg (zbar-tools) not installed")


@pytest.fixture(scope="module", autouse=True)
def built_units() -> None:
    subprocess.run(["make", "-s", "units"], cwd=REPO, check=True)


def deflate(data: bytes) -> bytes:
    proc = subprocess.run([str(UNITS / "test_deflate"), "stdin"], input=data, capture_output=True,
                          check=True, timeout=TOOL_SAFETY_NET_S)
    return proc.stdout


def inflate(data: bytes) -> bytes:
    d = zlib.decompressobj(wbits=-15)
    out = d.decompress(data) + d.flush()
    assert d.eof and not d.unused_data, "the stream does not end where its final block does"
    return out


def base45_encode(data: bytes) -> str:
    """The kernel's base45 encoder (lib's base45_encode, run by the unit test binary)."""
    proc = subprocess.run([str(UNITS / "test_base45"), "stdin"], input=data, capture_output=True,
                          check=True, timeout=TOOL_SAFETY_NET_S)
    return proc.stdout.decode("ascii")


def test_base45_matches_an_independent_implementation() -> None:
    """Every byte value, odd and even lengths, random bytes and a real DEFLATE stream (what the
    codes carry): the kernel's text is the package's, character for character, and decodes back."""
    rng = random.Random(9285)
    samples = [b"", b"\x00", b"\xff", b"\xff\xff", bytes(range(256)), bytes(range(255, -1, -1)) + b"\x80",
               bytes(rng.getrandbits(8) for _ in range(40001)), deflate((REPO / "build" / "cleanroom.elf").read_bytes())]
    for data in samples:
        text = base45_encode(data)
        assert text == base45.b45encode(data).decode("ascii"), f"{len(data)} bytes encode differently"
        assert base45.b45decode(text) == data


def test_deflate_is_inflated_by_zlib() -> None:
    rng = random.Random(14)
    records = "".join(f'@cr1 {{"t":"result","seq":{i},"min":{rng.randrange(99999)}}} ~{rng.getrandbits(32):08x}\r\n'
                      for i in range(20000)).encode()
    samples = [b"", b"a", b"abcabcabcabc" * 3000, bytes(rng.getrandbits(8) for _ in range(50000)),
               (REPO / "build" / "cleanroom.elf").read_bytes(), records]
    for data in samples:
        packed = deflate(data)
        assert inflate(packed) == data
    assert len(deflate(records)) < len(records) / 3  # record lines repeat their keys: LZ77 finds them


@needs_zbar
def test_every_qr_version_at_full_capacity_is_read_by_zbar(tmp_path: Path) -> None:
    rng = random.Random(18004)
    for version in range(1, 41):
        capacity = int(subprocess.run([str(UNITS / "test_qr"), "capacity", str(version)], capture_output=True,
                                      text=True, check=True).stdout)
        text = "".join(rng.choice(ALNUM) for _ in range(capacity))
        image = tmp_path / f"v{version}.pbm"
        image.write_bytes(subprocess.run([str(UNITS / "test_qr"), "pbm", str(version), text],
                                         capture_output=True, check=True).stdout)
        got = subprocess.run(["zbarimg", "-q", "--raw", str(image)], capture_output=True, text=True).stdout
        assert got.rstrip("\n") == text, f"version {version} ({capacity} characters) not read back"


def first_page(tmp_path: Path, emulator: str) -> tuple[re.Match[str], bytes]:
    """Boots a short run with qr=on and a halting exit; the first QR page
    (the screen's final state) as decoded by zbar, and the serial log's
    record lines."""
    out, shot = tmp_path / emulator, tmp_path / f"{emulator}.ppm"
    subprocess.run([str(TOOL), "run", "--emulator", emulator, "--cmdline", "bench=tsc runs=2 qr=on exit=halt",
                    "--screendump", str(shot), "--out", str(out), "--quiet"],
                   capture_output=True, text=True, timeout=TOOL_SAFETY_NET_S, stdin=subprocess.DEVNULL, check=True)
    text = subprocess.run(["zbarimg", "-q", "--raw", str(shot)], capture_output=True, text=True).stdout.strip()
    m = CODE_TEXT.match(text)
    assert m, f"no results QR code on the {emulator} screen: {text[:80]!r}"
    records = b"".join(re.findall(rb"@cr1 [^\r\n]*\r\n", (out / "serial.log").read_bytes()))
    return m, records


@needs_zbar
@pytest.mark.parametrize("emulator", ["uefi", "qemu"])
def test_screen_shows_the_first_code_of_the_record_log(tmp_path: Path, emulator: str) -> None:
    m, records = first_page(tmp_path, emulator)
    index, count, log_len, log_crc, chunk_crc, body = m.groups()
    assert int(index) == 0 and int(count) >= 1
    assert int(log_len) == len(records) and log_crc == f"{zlib.crc32(records):08X}"
    chunk = base45.b45decode(body)
    assert chunk_crc == f"{zlib.crc32(chunk):08X}"
    # the first chunk starts the deflate stream of exactly those records
    d = zlib.decompressobj(wbits=-15)
    assert records.startswith(d.decompress(chunk)[:200])
    if int(count) == 1:
        assert inflate(chunk) == records
