"""Results read back from QR codes (docs/QR.md): base45, the code headers, reassembly
and inflating up to the first gap, zxing-cpp on real images, `decode-photos`, and
`run --qr-pages` and `--screendump` (against a fake QEMU QMP socket here; against the kernel end to end).

The fixture codes tests/fixtures/qr/qemu-quick-K-of-3.png carry the record lines of
tests/fixtures/qemu-quick.log, compressed with zlib's raw DEFLATE and cut into 3
chunks by the contract's text format (qrdecode.Chunk.text); they were drawn once
by a QR generator that is not a dependency of the project. The end-to-end tests
read the kernel's own screens as a phone photographs them (tests/photosim.py):
suite=quick on the BIOS ISO (VGA graphics the kernel sets itself) and on UEFI
(GRUB's framebuffer), and a short run under QEMU -kernel whose pager turns the
screens with no key pressed.
"""

from __future__ import annotations

import json
import math
import re
import socket
import subprocess
import sys
import threading
import time
import tracemalloc
from dataclasses import replace
from pathlib import Path
from typing import Any, Iterator

import base45
import pytest

from booting import KERNEL, QUICK_ICOUNT, REPO, halted_cpus, human_monitor, shared_dir, tool_proc
from photosim import Shot, photograph_file, screen_corners_in_photo
from cleanroom_host.machines import emulators, runner
from cleanroom_host.records import qrdecode
from cleanroom_host.records.protocol import parse_log
from cleanroom_host.records.qrdecode import Chunk, QrError, assemble, base45_decode, base45_encode, parse_chunk

FIXTURES = Path(__file__).resolve().parent / "fixtures"
QUICK_LOG = FIXTURES / "qemu-quick.log"
CODES = sorted((FIXTURES / "qr").glob("qemu-quick-*-of-3.png"))
RECORD_LINE = re.compile(rb"@cr1 [^\r\n]*\r\n")


def record_lines(data: bytes) -> list[bytes]:
    """The record lines of a serial log, exactly as sent (banners and firmware output left out)."""
    return RECORD_LINE.findall(data)


def quick_log() -> bytes:
    return b"".join(record_lines(QUICK_LOG.read_bytes()))


def decode_photos(images: list[Path], out: Path) -> subprocess.CompletedProcess[str]:
    return tool_proc("decode-photos", *map(str, images), "--out", str(out))


# --- base45 (RFC 9285, section 4.3's examples) ---

@pytest.mark.parametrize("raw, text", [
    (b"AB", "BB8"),
    (b"Hello!!", "%69 VD92EX0"),
    (b"base-45", "UJCLQE7W581"),
    (b"ietf!", "QED8WEX0"),
    (b"", ""),
])
def test_base45_matches_the_rfc_examples(raw: bytes, text: str) -> None:
    assert base45_encode(raw) == text
    assert base45_decode(text) == raw


def test_base45_round_trips_every_byte_value() -> None:
    data = bytes(range(256)) + b"\xff"
    assert base45_decode(base45_encode(data)) == data


@pytest.mark.parametrize("bad, why", [
    ("GGW", "more than two bytes"),  # 65536: RFC 9285 says decoding must fail
    ("ABCD", "multiple of 3"),
    ("ab", "not in the base45 alphabet"),
    (":;", "not in the base45 alphabet"),
    ("::", "more than one byte"),
])
def test_base45_rejects_what_the_rfc_rejects(bad: str, why: str) -> None:
    with pytest.raises(QrError, match=why):
        base45_decode(bad)


# --- headers ---

def test_a_code_text_parses_back_to_its_chunk() -> None:
    chunk = Chunk(4, 31, 143442, 0xDEADBEEF, b"\x00\x01deflate\xff")
    text = chunk.text()
    assert text.startswith("CR1/4/31/143442/DEADBEEF/")
    assert all(c in base45.BASE45_CHARSET for c in text), "one alphanumeric-mode segment"
    assert parse_chunk(text) == chunk


@pytest.mark.parametrize("mangle, why", [
    (lambda t: "CR2" + t[3:], "not a cleanroom code"),
    (lambda t: t.replace("/4/31/", "/31/31/"), "index 31 of 31"),
    (lambda t: t.replace("/4/31/", "/4/0/"), "index 4 of 0"),
    (lambda t: t.replace("DEADBEEF", "deadbeef"), "uppercase hex"),
    (lambda t: t.replace("/143442/", "/14x442/"), "not a decimal"),
    (lambda t: t[:-3] + ("0" if t[-3] != "0" else "1") + t[-2:], "CRC does not match"),
    (lambda t: "/".join(t.split("/")[:5]), "fields"),
])
def test_a_damaged_or_foreign_header_is_refused(mangle, why: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(QrError, match=why):
        parse_chunk(mangle(Chunk(4, 31, 143442, 0xDEADBEEF, b"\x00\x01deflate\xff").text()))


# --- reassembly below the image layer ---

def chunks_of(log: bytes, total: int) -> list[Chunk]:
    return qrdecode.make_chunks(log, qrdecode.deflate_raw(log), total)


@pytest.fixture(scope="module")
def long_log() -> bytes:
    """A real recorded quick-suite log: enough records that a gap lands in the middle."""
    return b"".join(record_lines((FIXTURES / "qemu-quick-workset.log").read_bytes()))


def test_every_chunk_in_any_order_gives_the_log_exactly(long_log: bytes) -> None:
    chunks = chunks_of(long_log, 40)
    asm = assemble(list(reversed(chunks)) + chunks[:5])  # repeats are fine
    assert asm.complete and asm.log == long_log and not asm.missing and not asm.problems


def test_a_missing_chunk_is_named_and_the_records_before_it_are_kept(long_log: bytes) -> None:
    chunks = chunks_of(long_log, 40)
    asm = assemble(c for c in chunks if c.index not in (17, 30))
    assert not asm.complete and asm.missing == [17, 30] and asm.total == 40
    assert "missing QR codes 18 and 31 of 40" in qrdecode.missing_text(asm.missing, 40)
    assert "header index 17 and 30" in qrdecode.missing_text(asm.missing, 40)
    # whole record lines only, all before the gap, in order: the stream's start inflates alone
    kept = record_lines(asm.log)
    assert asm.log == b"".join(kept) and kept == record_lines(long_log)[:len(kept)]
    assert len(long_log) * 0.3 < len(asm.log) < len(long_log) * 17 / 40
    res = parse_log(asm.log)
    assert res.corrupt == 0 and not res.complete and res.done is None and len(res.records) == len(kept)


def test_a_code_of_another_run_is_left_out_and_named(long_log: bytes) -> None:
    other = chunks_of(quick_log(), 3)[1]
    asm = assemble(chunks_of(long_log, 5) + [other])
    assert asm.complete and asm.log == long_log
    assert any("belongs to another run" in p for p in asm.problems)


def test_a_wrong_log_crc_makes_the_log_incomplete(long_log: bytes) -> None:
    chunks = [Chunk(c.index, c.total, c.log_len, c.log_crc ^ 1, c.data) for c in chunks_of(long_log, 4)]
    asm = assemble(chunks)
    assert not asm.complete and any("CRC" in p for p in asm.problems)


def test_a_set_that_inflates_a_thousandfold_past_its_stated_length_is_refused_at_bounded_memory() -> None:
    """Codes whose few kilobytes of stream inflate to a thousand times the log they state (a
    stream made to, or another log's) are refused as soon as the stream passes the stated length
    and the bytes to spare, never inflated whole; a set of the same log's own stream decodes."""
    log = quick_log()
    bomb = bytes(1000 * len(log))
    chunks = qrdecode.make_chunks(log, qrdecode.deflate_raw(bomb), 3)
    tracemalloc.start()
    try:
        asm = assemble(chunks)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    limit = len(log) + qrdecode.INFLATE_SPARE
    assert asm.problems == [f"the codes say the log is {len(log)} bytes, but their compressed stream inflates "
                            f"past {limit} (that and {qrdecode.INFLATE_SPARE} to spare) by code 1 of 3: "
                            f"refused, nothing kept"]
    assert not asm.complete and asm.log == b""
    assert peak < len(bomb) / 10  # zlib's window and state and the limit's bytes, not the bomb's
    assert f"and {qrdecode.INFLATE_SPARE} bytes (`INFLATE_SPARE`)" in (REPO / "docs" / "QR.md").read_text()
    normal = assemble(chunks_of(log, 3))
    assert normal.complete and normal.log == log and not normal.problems


def test_a_log_a_little_longer_than_stated_is_named_not_refused() -> None:
    """Within the bytes to spare the whole stream inflates, and the lengths are named."""
    log = quick_log()
    asm = assemble(replace(c, log_len=len(log) - 100) for c in chunks_of(log, 3))
    assert not asm.complete
    assert asm.problems == [f"the log inflates to {len(log)} bytes, the codes say {len(log) - 100}"]


@pytest.mark.parametrize("numbers, text", [
    ([7], "7"), ([7, 12], "7 and 12"), ([3, 4], "3 and 4"), ([3, 4, 5, 9, 12], "3-5, 9 and 12")])
def test_missing_codes_read_as_a_sentence(numbers: list[int], text: str) -> None:
    assert qrdecode.name_numbers(numbers) == text


# --- the decoder on images, and decode-photos ---

def test_the_fixture_codes_are_three() -> None:
    assert [p.name for p in CODES] == [f"qemu-quick-{k}-of-3.png" for k in range(3)]


def test_the_decoder_reads_each_fixture_code() -> None:
    for k, path in enumerate(CODES):
        read = qrdecode.read_image(path)
        assert [c.index for c in read.chunks] == [k] and not read.problems


def test_decode_photos_writes_the_log_and_results_as_capture_does(tmp_path: Path) -> None:
    proc = decode_photos(CODES, tmp_path / "out")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (tmp_path / "out" / "serial.log").read_bytes() == quick_log()
    doc = json.loads((tmp_path / "out" / "results.json").read_text())
    assert doc["complete"] and doc["status"] == "ok" and doc["source"] == "serial.log"
    assert doc["records"] == parse_log(quick_log()).records
    assert doc["run"]["qr"]["codes"] == 3 and doc["run"]["qr"]["missing"] == []
    assert (tmp_path / "out" / "results.csv").is_file()
    assert "3 of 3 codes" in proc.stdout and "complete: yes" in proc.stdout


def test_decode_photos_names_a_missing_code_and_an_unreadable_image(tmp_path: Path) -> None:
    from PIL import Image
    blank = tmp_path / "blank.png"
    Image.new("L", (200, 200), 255).save(blank)
    proc = decode_photos([CODES[0], blank, CODES[2]], tmp_path / "out")
    assert proc.returncode == 4, proc.stdout + proc.stderr
    assert "missing QR code 2 of 3" in proc.stdout and "header index 1" in proc.stdout
    assert f"{blank}: no readable QR code" in proc.stdout
    log = (tmp_path / "out" / "serial.log").read_bytes()
    assert log and record_lines(quick_log())[:len(record_lines(log))] == record_lines(log)
    assert json.loads((tmp_path / "out" / "results.json").read_text())["complete"] is False


def test_many_images_without_a_code_are_counted_not_all_listed(tmp_path: Path) -> None:
    """Frames cut from a video of the screen: most show no code."""
    from PIL import Image
    blanks = [tmp_path / f"frame-{k:02d}.png" for k in range(qrdecode.UNREADABLE_NAMED + 2)]
    for b in blanks:
        Image.new("L", (40, 40), 255).save(b)
    proc = decode_photos(blanks + CODES, tmp_path / "out")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.count("no readable QR code") == qrdecode.UNREADABLE_NAMED
    assert "and 2 more images without a readable cleanroom code" in proc.stdout
    doc = json.loads((tmp_path / "out" / "results.json").read_text())
    assert len(doc["run"]["qr"]["unreadable"]) == len(blanks)


def on_a_screen(code: Path, dest: Path) -> Path:
    """The fixture code twice its size in the middle of an 800x600 screen."""
    from PIL import Image
    screen = Image.new("L", (800, 600), 255)
    with Image.open(code) as img:
        big = img.convert("L").resize((img.width * 2, img.height * 2), Image.Resampling.NEAREST)
    screen.paste(big, ((800 - big.width) // 2, (600 - big.height) // 2))
    screen.save(dest)
    return dest


@pytest.mark.parametrize("angle", [0, 15, 25, 45])
def test_the_simulated_photo_keeps_the_whole_screen_in_perspective(angle: float) -> None:
    """The photo's geometry is what docs/QR.md says: the whole screen in the picture, its near
    edge the taller by the perspective of a phone held close (a third at 15 degrees)."""
    shot = Shot(angle=angle, width=1500)
    corners = screen_corners_in_photo((800, 600), shot)
    assert (corners >= 0).all() and (corners[:, 0] < 1500).all() and (corners[:, 1] < 1125).all()
    near, far = corners[3][1] - corners[0][1], corners[2][1] - corners[1][1]
    assert abs(near / far - 1) < 0.02 if angle == 0 else near / far > 1 + angle / 50


def test_a_phone_photo_of_a_code_decodes(tmp_path: Path) -> None:
    photo = tmp_path / "photo.jpg"
    photograph_file(on_a_screen(CODES[1], tmp_path / "screen.png"), photo, Shot(width=1500))
    assert [c.index for c in qrdecode.read_image(photo).chunks] == [1]


def test_a_photo_from_too_far_aside_does_not(tmp_path: Path) -> None:
    """The simulated photo is no copy of the screen: far enough off-axis, nothing reads."""
    photo = tmp_path / "photo.jpg"
    photograph_file(on_a_screen(CODES[1], tmp_path / "screen.png"), photo, Shot(angle=80, width=1500))
    assert qrdecode.read_image(photo).chunks == []


# --- run --qr-pages against a fake QEMU QMP socket ---

QMP_GREETING = {"QMP": {"version": {"qemu": {"micro": 0, "minor": 2, "major": 7}, "package": "fake"},
                        "capabilities": []}}


class FakeQmp:
    """QEMU's QMP socket as --qr-pages uses it: the greeting, `qmp_capabilities` (anything
    before it is refused, as QEMU does), `screendump` (a blank screen first, as while the
    kernel compresses, then the current code), `send-key` spc (the next code, after the last
    the first; the first key press is lost) and `quit`. Replies carry the command's id.
    greet=False: a QEMU that accepts the connection and never says a word. torn: the first dump of
    each new screen is taken while the kernel copies it to the framebuffer: its top (TORN_AT) over
    the old screen's bottom, its code cut and still readable."""

    TORN_AT = 0.85

    def __init__(self, path: Path, pages: list[Path], blank_dumps: int = 2, greet: bool = True,
                 fail: dict[str, str] | None = None, torn: bool = False) -> None:
        from PIL import Image
        self.images = [Image.open(p).convert("RGB") for p in pages]
        self.torn = torn
        self.shown = 0  # the page on the screen at the last dump
        self.blank = Image.new("RGB", self.images[0].size, (255, 255, 255)) if pages else None
        self.blank_dumps = blank_dumps
        self.greet = greet
        self.fail = fail or {}  # command -> the error description QEMU answers it with
        self.page = 0
        self.keys = 0
        self.commands: list[str] = []
        self.server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.server.bind(str(path))
        self.server.listen(1)
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self) -> None:
        with self.server:
            conn, _ = self.server.accept()
        with conn:
            if not self.greet:
                conn.recv(4096)  # until the client hangs up
                return
            send = lambda msg: conn.sendall(json.dumps(msg).encode() + b"\r\n")  # noqa: E731
            send(QMP_GREETING)
            for msg in self.messages(conn):
                cmd, args = msg["execute"], msg.get("arguments", {})
                self.commands.append(cmd)
                reply: dict[str, object] = {"return": {}}
                if cmd != "qmp_capabilities" and self.commands[0] != "qmp_capabilities":
                    reply = {"error": {"class": "CommandNotFound", "desc": "Expecting capabilities negotiation"}}
                elif cmd in self.fail:
                    reply = {"error": {"class": "GenericError", "desc": self.fail[cmd]}}
                elif cmd == "screendump":
                    screen = self.blank if self.blank_dumps > 0 else self.images[self.page]
                    if self.blank_dumps <= 0:
                        if self.torn and self.page != self.shown:  # caught mid-copy: new top, old bottom
                            old, cut = self.images[self.shown], int(screen.height * self.TORN_AT)
                            screen = screen.copy()
                            screen.paste(old.crop((0, cut, old.width, old.height)), (0, cut))
                        self.shown = self.page
                    self.blank_dumps -= 1
                    screen.save(args["filename"], format="PPM")
                elif cmd == "send-key":
                    assert args == {"keys": [{"type": "qcode", "data": "spc"}]}
                    self.keys += 1
                    if self.keys != 1:
                        self.page = (self.page + 1) % len(self.images)
                if "id" in msg:
                    reply["id"] = msg["id"]
                send(reply)
                if cmd == "quit":
                    return

    @staticmethod
    def messages(conn: socket.socket) -> Iterator[dict[str, Any]]:
        """JSON objects as they arrive: QMP needs no separator between them (qemu.qmp sends none)."""
        decoder, buf = json.JSONDecoder(), ""
        while data := conn.recv(4096):
            buf += data.decode()
            while True:
                try:
                    msg, end = decoder.raw_decode(buf.lstrip())
                except json.JSONDecodeError:
                    break  # not whole yet
                buf = buf.lstrip()[end:]
                yield msg


def test_qr_pages_saves_every_code_once_named_by_its_index(tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runner, "QR_KEY_AGAIN_S", 0.3)
    sock = tmp_path / "qmp.sock"
    fake = FakeQmp(sock, CODES)
    pages = runner.collect_qr_pages(sock, tmp_path / "pages")
    fake.thread.join(timeout=10)
    assert pages.error is None and pages.total == 3 and pages.saved == [0, 1, 2]
    assert sorted(p.name for p in (tmp_path / "pages").iterdir()) == ["qr-000.ppm", "qr-001.ppm", "qr-002.ppm"]
    assert fake.keys == 3, "two pages forward, and once more for the lost key press"
    assert fake.commands[0] == "qmp_capabilities" and fake.commands[-1] == "quit"
    assert decode_photos(sorted((tmp_path / "pages").iterdir()), tmp_path / "out").returncode == 0
    assert (tmp_path / "out" / "serial.log").read_bytes() == quick_log()


def test_qr_pages_saves_a_screen_only_once_it_stands_still(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A dump taken while the kernel copied the next screen (its code cut, still readable) is never saved:
    each page is the screen as it stood."""
    from PIL import Image

    monkeypatch.setattr(runner, "QR_KEY_AGAIN_S", 0.3)
    sock = tmp_path / "qmp.sock"
    fake = FakeQmp(sock, CODES, torn=True)
    pages = runner.collect_qr_pages(sock, tmp_path / "pages")
    fake.thread.join(timeout=10)
    assert pages.error is None and pages.saved == [0, 1, 2] and pages.screens == 3
    for k in range(len(CODES)):
        with Image.open(tmp_path / "pages" / runner.qr_page_name(k)) as saved:
            assert saved.convert("RGB").tobytes() == fake.images[k].tobytes(), f"page {k}: a torn dump was saved"


def test_screendump_saves_the_screen_then_quits(tmp_path: Path) -> None:
    sock, dest = tmp_path / "qmp.sock", tmp_path / "screen.ppm"
    fake = FakeQmp(sock, CODES[:1], blank_dumps=0)
    assert runner.take_screendump(sock, dest, wait=10) is None
    fake.thread.join(timeout=10)
    assert fake.commands == ["qmp_capabilities", "screendump", "quit"] and runner.ppm_complete(dest)
    assert [c.index for c in qrdecode.read_image(dest).chunks] == [0]


def test_qmp_problems_name_the_socket_and_what_went_wrong(tmp_path: Path) -> None:
    """No socket, a QEMU that never greets (bounded, not a hang), and an error QEMU answers with."""
    sock, dest = tmp_path / "qmp.sock", tmp_path / "screen.ppm"
    err = runner.take_screendump(sock, dest, wait=5)
    assert err is not None and err.startswith(f"QEMU's QMP socket ({sock}): connect: ")
    assert "No such file or directory" in err
    FakeQmp(sock, [], greet=False)
    assert runner.take_screendump(sock, dest, wait=0.5) == \
        f"QEMU's QMP socket ({sock}): connect: no answer within 0.5 s"
    sock.unlink()
    FakeQmp(sock, CODES[:1], fail={"screendump": "Could not open 'x.ppm': Permission denied"})
    assert runner.take_screendump(sock, dest, wait=5) == \
        f"QEMU's QMP socket ({sock}): screendump: Could not open 'x.ppm': Permission denied"
    sock.unlink()
    pages = runner.collect_qr_pages(sock, tmp_path / "pages")
    assert pages.error is not None and pages.error.startswith(f"--qr-pages: QEMU's QMP socket ({sock}): connect")


def test_a_missing_qmp_client_is_named_before_qemu_starts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "qemu.qmp", None)  # what `import qemu.qmp` does when it is not installed
    spec = emulators.RunSpec("qemu", KERNEL, tmp_path / "none.iso", screendump=tmp_path / "s.ppm")
    with pytest.raises(emulators.SetupError, match=r"^qemu\.qmp is not installed: run tools/setup\.sh"):
        emulators.prepare(spec, tmp_path)


@pytest.mark.parametrize("args, why", [
    (["--emulator", "bochs", "--cmdline", "suite=selftest"], "needs QEMU"),
    (["--emulator", "hosted", "--cmdline", "suite=selftest"], "needs QEMU"),
    (["--emulator", "uefi"], "give --cmdline"),
    (["--emulator", "qemu", "--screendump", "s.ppm"], "choose one"),
])
def test_qr_pages_is_refused_where_it_cannot_work(tmp_path: Path, args: list[str], why: str) -> None:
    proc = tool_proc("run", *args, "--qr-pages", str(tmp_path / "pages"), "--out", str(tmp_path / "out"), "--quiet",
                     cwd=tmp_path)
    assert proc.returncode == 5 and why in proc.stderr, proc.stderr


# --- end to end: the kernel's own codes, photographed as a phone would ---

# suite=quick must fit in tens of screens, not hundreds (issue 19: 362 VGA text pages)
QUICK_SCREENS_MAX = 40
SHORT_QR = "bench=tsc,ctxsw,create qr=on"
PHONE = Shot(angle=15, tilt=4)  # the photo: 15 degrees off-axis, 4 of tilt, blur, noise, light, JPEG 60


def photograph_screens(pages: list[Path], where: Path, shot: Shot,
                       widths: tuple[int, ...] = (1500, 3000)) -> dict[int, list[Path]]:
    """Every screen photographed at each width (the turn and tilt alternating left and right):
    {width: photos}."""
    where.mkdir(parents=True, exist_ok=True)
    photos: dict[int, list[Path]] = {width: [] for width in widths}
    for k, page in enumerate(pages):
        sign = 1 if k % 2 else -1
        for width in photos:
            if width > min(widths) and k >= 2:  # past the first two screens, the narrowest (hardest) photo alone
                continue
            photo = where / f"{page.stem}-{width}.jpg"
            photograph_file(page, photo, replace(shot, angle=sign * shot.angle, tilt=sign * shot.tilt, width=width,
                                                 seed=k))
            photos[width].append(photo)
    return photos


def assert_photos_give_back(photos: dict[int, list[Path]], serial: list[bytes], where: Path,
                            pages: list[Path]) -> None:
    """The narrowest photos of every screen: every code read, the log the serial port's record
    lines; a wider photo of a screen: every code that screen shows read."""
    def codes(image: Path) -> set[int]:
        return {c.index for c in qrdecode.read_image(image).chunks}

    narrow = min(photos)
    proc = decode_photos(photos[narrow], where / f"decoded-{narrow}")
    assert proc.returncode == 0, f"{narrow} px photos: " + proc.stdout + proc.stderr
    assert record_lines((where / f"decoded-{narrow}" / "serial.log").read_bytes()) == serial, narrow
    for width in set(photos) - {narrow}:
        for image, page in zip(photos[width], pages):
            assert codes(image) == codes(page), f"{image.name}: a code of the screen not read"


# A short run on both: the same kernel code in its two graphics modes. The quick suite's screens
# (26 measured on UEFI, 20 on a BIOS) follow from its log's size and the bytes a screen carries
# here; photographing all of them took 30 s of CPU more.
@pytest.mark.early
@pytest.mark.parametrize("emulator", ["iso", "uefi"])
def test_phone_photos_of_every_screen_give_back_the_serial_log(emulator: str, tmp_path: Path, boots_root: Path,
                                                                 quick_icount: tuple[int, dict[str, Any]]) -> None:
    """qr=on on a BIOS (the ISO through GRUB: VGA text, so the kernel sets 640x480 graphics) and
    on UEFI (OVMF's 800x600 framebuffer), every screen saved by --qr-pages, each photographed
    from 15 degrees aside at 1500 and at 3000 pixels (past the first two screens at 1500 alone:
    the harder of the two), and every code read back into the serial log's record lines byte for
    byte; suite=quick's log fits in tens of screens at the bytes a screen carries; a missing
    screen is named and the records before it are kept."""
    cmdline = SHORT_QR
    where = tmp_path
    proc = tool_proc("run", "--emulator", emulator, "--cmdline", cmdline, "--qr-pages", str(where / "pages"),
                     "--out", str(where / "run"), "--quiet")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    pages = sorted((where / "pages").glob("qr-*.ppm"))
    info = json.loads((where / "run" / "results.json").read_text())["run"]["qr_pages"]
    assert info["saved"] == info["codes"] and pages
    serial = record_lines((where / "run" / "serial.log").read_bytes())
    assert serial

    # the kernel's text of each code, character for character, is what the host makes of its
    # chunk with the base45 package: its base45 encoder agrees with an independent one
    import zxingcpp
    from PIL import Image
    with Image.open(pages[-1]) as img:
        # QR codes only, as the tool reads them: among all formats zxing once read a screen's module
        # rows as a Codabar 'A38B'
        texts = [b.text for b in zxingcpp.read_barcodes(img.convert("L"), formats=zxingcpp.BarcodeFormat.QRCode)]
    assert texts and all(parse_chunk(t).text() == t for t in texts)

    photos = photograph_screens(pages, where / "photos", PHONE)
    assert_photos_give_back(photos, serial, where, pages)
    # several codes on each screen; the quick suite's log (the qemu-icount quick boot's, two runs a case:
    # 3 % smaller than at the suite's own 3 runs and a warm-up) at the bytes of log a screen carries here:
    # tens of screens
    assert info["codes"] > len(pages) == info["screens"]
    per_screen = len(b"".join(serial)) / len(pages)
    quick = record_lines((shared_dir(boots_root, *QUICK_ICOUNT) / QUICK_ICOUNT[0] / "serial.log").read_bytes())
    assert quick_icount[0] == 0 and quick
    screens = math.ceil(len(b"".join(quick)) / per_screen)
    assert screens <= QUICK_SCREENS_MAX, f"suite=quick: {screens} screens at {per_screen:.0f} bytes a screen"
    if emulator == "uefi":
        return  # the BIOS run checks a lost screen: decoding every photo again takes long

    # a screen's photo left out: the codes no other screen showed are named (a screendump caught
    # while the kernel drew the next screen shows codes of both)
    shown = [{c.index for c in qrdecode.read_image(p).chunks} for p in pages]
    gone = next(k for k in range(len(pages) // 2, len(pages)) if shown[k] - set().union(*shown[:k], *shown[k + 1:]))
    lost = sorted(shown[gone] - set().union(*shown[:gone], *shown[gone + 1:]))
    shots = photos[1500]
    proc = decode_photos(shots[:gone] + shots[gone + 1:], where / "gap")
    assert proc.returncode == 4
    assert qrdecode.missing_text(lost, info["codes"]) in proc.stdout, proc.stdout
    kept = record_lines((where / "gap" / "serial.log").read_bytes())
    assert 0 < len(kept) < len(serial) and kept == serial[:len(kept)]


def page_seconds() -> int:
    """QRSHOW_PAGE_SECONDS, from the kernel's header."""
    text = (REPO / "kernel" / "qrshow.h").read_text()
    return int(re.search(r"#define QRSHOW_PAGE_SECONDS (\d+)", text).group(1))  # type: ignore[union-attr]


def screendump(monitor: subprocess.Popen[str], dest: Path, wait: float = 30) -> None:
    """`screendump` through QEMU's monitor on its stdin; returns once the file is whole."""
    from PIL import Image
    dest.unlink(missing_ok=True)
    assert monitor.stdin is not None
    monitor.stdin.write(f"screendump {dest}\n")
    monitor.stdin.flush()
    deadline = time.monotonic() + wait
    while True:
        try:
            with Image.open(dest) as img:
                img.load()
            return
        except (OSError, SyntaxError):
            assert time.monotonic() < deadline, f"QEMU wrote no screendump {dest} in {wait} s"
            time.sleep(0.2)


@pytest.mark.early
def test_the_pager_turns_the_screens_with_no_key_and_photos_at_25_degrees_read(tmp_path: Path) -> None:
    """Issue 23: QEMU's i8042 answers but no key comes (a USB keyboard without legacy support);
    the screens still turn. Under QEMU -kernel (VGA text, so the kernel's 640x480 graphics), no
    key pressed: screendumps taken while nothing else happens show different codes, until every
    code has been on the screen; then each screen photographed from 25 degrees aside with more
    noise and JPEG quality 50, 3000 pixels wide, still gives back the serial log (issue 19: 3
    of 33 VGA text pages did; at 1500 pixels this is past the limit docs/QR.md measured). Between
    its polls of the keyboard the CPU is halted (the APIC timer ends each halt), not spinning."""
    serial_log, seconds, sock = tmp_path / "serial.log", page_seconds(), tmp_path / "monitor.sock"
    qemu = subprocess.Popen(["qemu-system-i386", "-m", "128", "-no-reboot", "-display", "none", "-monitor", "stdio",
                             "-monitor", f"unix:{sock},server=on,wait=off",
                             "-serial", f"file:{serial_log}", "-kernel", str(KERNEL),
                             "-append", "bench=tsc runs=2 exit=halt qr=on"],
                            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, text=True)
    looks: list[bool] = []
    monitor = None
    try:
        size, quiet_since = -1, time.monotonic()
        while b'"t":"done"' not in (serial_log.read_bytes() if serial_log.exists() else b""):
            assert qemu.poll() is None, "QEMU ended before the done record"
            if serial_log.exists() and serial_log.stat().st_size != size:
                size, quiet_since = serial_log.stat().st_size, time.monotonic()
            assert time.monotonic() - quiet_since < 120, "no record for 120 s"
            time.sleep(0.2)
        screens: dict[frozenset[int], Path] = {}
        total, last_new = None, time.monotonic()
        monitor = human_monitor(sock, qemu, 30)
        while total is None or set().union(*screens) != set(range(total)):
            dump = tmp_path / f"screen-{len(screens)}.ppm"
            screendump(qemu, dump)
            chunks = qrdecode.read_image(dump).chunks
            shown = frozenset(c.index for c in chunks)
            if chunks and shown not in screens:
                screens[shown], total, last_new = dump, chunks[0].total, time.monotonic()
            # the screen must change by itself within a few of the kernel's page times
            assert time.monotonic() - last_new < 3 * seconds + 30, \
                f"the screen showed no new codes for {3 * seconds + 30} s with no key pressed: {sorted(map(sorted, screens))}"
            looks += [halted_cpus(monitor)[0] for _ in range(3)]  # halted between polls: nearly all the time
            time.sleep(1)
        qemu.stdin.write("quit\n")  # type: ignore[union-attr]
        qemu.stdin.flush()  # type: ignore[union-attr]
        qemu.wait(timeout=30)
    finally:
        if monitor is not None:
            monitor.close()
        if qemu.poll() is None:
            qemu.kill()
            qemu.wait()
    assert len(screens) >= 2
    assert any(looks), f"the CPU was running at each of {len(looks)} looks while the pager waited"
    serial = record_lines(serial_log.read_bytes())
    pages = sorted(screens.values())
    photos = photograph_screens(pages, tmp_path / "photos", Shot(angle=25, noise=10, quality=50), widths=(3000,))
    assert_photos_give_back(photos, serial, tmp_path, pages)
