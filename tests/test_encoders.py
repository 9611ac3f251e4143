"""The kernel's own encoders for the results' QR codes, checked by real
decoders on the host: its DEFLATE output inflated by zlib, its base45 against
the base45 package (an independent RFC 9285 implementation), its QR codes
read by zxing-cpp at every version. The codes on a booted screen are read
end to end in tests/test_qr.py. docs/QR.md describes the stream."""

from __future__ import annotations

import random
import subprocess
import zlib
from pathlib import Path

import base45
import pytest

from booting import TOOL_SAFETY_NET_S

REPO = Path(__file__).resolve().parent.parent
UNITS = REPO / "build" / "units"
ALNUM = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ $%*+-./:"


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


def test_every_qr_version_at_full_capacity_is_read_by_zxing(tmp_path: Path) -> None:
    import zxingcpp
    from PIL import Image
    rng = random.Random(18004)
    for version in range(1, 41):
        capacity = int(subprocess.run([str(UNITS / "test_qr"), "capacity", str(version)], capture_output=True,
                                      text=True, check=True).stdout)
        text = "".join(rng.choice(ALNUM) for _ in range(capacity))
        image = tmp_path / f"v{version}.pbm"
        image.write_bytes(subprocess.run([str(UNITS / "test_qr"), "pbm", str(version), text],
                                         capture_output=True, check=True).stdout)
        with Image.open(image) as code:
            got = [b.text for b in zxingcpp.read_barcodes(code.convert("L"), formats=zxingcpp.BarcodeFormat.QRCode)]
        assert got == [text], f"version {version} ({capacity} characters) not read back"
