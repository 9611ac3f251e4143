"""A screen on every boot: VGA text on a BIOS, the framebuffer console on
UEFI. The UEFI test reads the final screen back from a QEMU screendump by
matching the kernel's own glyphs (parsed from kernel/font.c) cell by cell,
and finds the summary the serial records agree with."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from booting import boot, boot_iso, done, grub_iso, of_type, tool_proc, uefi_selftest

REPO = Path(__file__).resolve().parent.parent
FONT_C = REPO / "kernel" / "font.c"
FONT_H = REPO / "kernel" / "font.h"
FBCON_H = REPO / "kernel" / "fbcon.h"
COLUMNS, ROWS = 80, 25

# A cheap run whose every screen line still fits on the 24 text rows.
CHEAP = "bench=tsc runs=2"


def define(path: Path, name: str) -> int:
    m = re.search(rf"#define {name} (\w+)", path.read_text())
    assert m, f"{name} not in {path.name}"
    return int(m.group(1), 0)


def font() -> dict[tuple[str, ...], str]:
    """kernel/font.c's art: bitmap (rows of '.'/'#') -> character."""
    width, height = define(FONT_H, "FONT_WIDTH"), define(FONT_H, "FONT_HEIGHT")
    glyphs: dict[tuple[str, ...], str] = {}
    blocks = re.findall(r"\[0x([0-9a-f]{2}) - FONT_FIRST\] = \{[^\n]*\n(.*?)\n    \},", FONT_C.read_text(), re.S)
    for code, body in blocks:
        rows = tuple(re.findall(r'"([.#]*)"', body))
        assert len(rows) == height and all(len(r) == width for r in rows), f"glyph 0x{code}"
        assert rows not in glyphs, f"{chr(int(code, 16))!r} looks like {glyphs.get(rows)!r}"
        glyphs[rows] = chr(int(code, 16))
    return glyphs


def test_the_font_covers_printable_ascii_with_distinct_glyphs() -> None:
    glyphs = font()
    assert sorted(glyphs.values()) == [chr(c) for c in range(0x20, 0x7f)]
    assert glyphs[tuple("....." for _ in range(define(FONT_H, "FONT_HEIGHT")))] == " "


def read_ppm(path: Path) -> tuple[int, int, bytes]:
    data = path.read_bytes()
    m = re.match(rb"P6\s+(\d+)\s+(\d+)\s+255\s", data)
    assert m, f"{path} is not an 8-bit binary PPM"
    width, height = int(m.group(1)), int(m.group(2))
    pixels = data[m.end():m.end() + width * height * 3]
    assert len(pixels) == width * height * 3
    return width, height, pixels


def screen_text(path: Path) -> list[str]:
    """The 80x25 grid as kernel/fbcon.c lays it out, each cell read back by
    exact match against the font ('\\ufffd' where no glyph matches)."""
    glyphs = font()
    fw, fh = define(FONT_H, "FONT_WIDTH"), define(FONT_H, "FONT_HEIGHT")
    cw, ch, top = (define(FBCON_H, n) for n in ("FBCON_CELL_WIDTH", "FBCON_CELL_HEIGHT", "FBCON_GLYPH_TOP"))
    width, height, px = read_ppm(path)
    scale = min(width // (COLUMNS * cw), height // (ROWS * ch))
    assert scale >= 1, f"{width}x{height} is too small for the grid"
    ox, oy = (width - COLUMNS * cw * scale) // 2, (height - ROWS * ch * scale) // 2

    def pixel(x: int, y: int) -> bytes:
        i = (y * width + x) * 3
        return px[i:i + 3]

    lines = []
    for r in range(ROWS):
        text = []
        for c in range(COLUMNS):
            x0, y0 = ox + c * cw * scale, oy + r * ch * scale
            background = pixel(x0, y0)  # a cell's top row is always background
            rows = tuple("".join("#" if pixel(x0 + gx * scale, y0 + (top + gy) * scale) != background else "."
                                 for gx in range(fw)) for gy in range(fh))
            text.append(glyphs.get(rows, "\ufffd"))
        lines.append("".join(text).rstrip())
    return lines


pytestmark = pytest.mark.usefixtures("kernel_elf")


# direct: the framebuffer at its address with paging off; pse36 (provoke=fbwindow):
# through the window of PSE-36 4 MiB pages a framebuffer above 4 GiB is drawn
# through, which no emulator puts there (tests/unit/test_pse36.c and the
# paging_pse36 self-test check the high address bits)
#
# direct: the session's UEFI self-test boot (test_boot reads its records), whose lines scroll the
# command line off the screen; pse36: a cheap run, whose every line fits, the command line's too.
@pytest.mark.early
@pytest.mark.parametrize("access", ["direct", "pse36"])
def test_uefi_screen_shows_the_summary(tmp_path: Path, boots_root: Path, access: str) -> None:
    if access == "direct":
        rc, res, dump = uefi_selftest(boots_root)
    else:
        dump = tmp_path / "screen.ppm"
        rc, res = boot(tmp_path, "uefi", CHEAP + " provoke=fbwindow", "--screendump", str(dump))
    assert rc == 0 and res["complete"]
    assert res["run"]["screendump"] == str(dump) and dump.is_file()
    hello = of_type(res, "hello")[0]
    assert hello["screen"] == "framebuffer" and hello["vga"] is False and "screen_why" not in hello
    assert hello["fb_access"] == access
    w, h, bpp = (int(v) for v in hello["fb"].split("x"))
    assert (w, h) == read_ppm(dump)[:2] and bpp in (15, 16, 24, 32)

    lines = screen_text(dump)
    d = done(res)
    summary = (f"done: status ok, {len(res['records'])} records, {d['passed']} tests passed, "
               f"{d['failed']} failed")
    assert d["records"] + 1 == len(res["records"])
    assert summary in lines, "\n".join(lines)
    if access == "pse36":
        assert f"cmdline: {hello['cmdline']}"[:COLUMNS] in lines, "\n".join(lines)
    else:  # the self-tests' lines fill the screen to its last rows
        assert sum(line.startswith("  PASS ") for line in lines) >= ROWS // 2, "\n".join(lines)
    assert lines[-1] == " cleanroom: done, status ok", "the status line"
    assert not any("\ufffd" in line for line in lines), "every cell is a glyph of the font:\n" + "\n".join(lines)


@pytest.mark.parametrize("emulator", ["iso", "qemu"])
def test_bios_boots_keep_vga_text(tmp_path: Path, emulator: str) -> None:
    """GRUB on a BIOS (and QEMU's own multiboot loader) leave text mode:
    the header's video request must not switch them to graphics."""
    rc, res = boot(tmp_path, emulator, CHEAP)
    assert rc == 0 and res["complete"]
    hello = of_type(res, "hello")[0]
    assert hello["screen"] == "vga-text" and hello["vga"] is True and hello["fb"] is None


def test_a_framebuffer_a_cpu_without_pse36_cannot_reach_is_named(tmp_path: Path) -> None:
    """GRUB's multiboot2 on a BIOS without gfxpayload=text sets a VBE
    framebuffer; drawn as one above 4 GiB is (provoke=fbwindow) on QEMU's
    default 32-bit CPU, which has no PSE-36: no screen, and the reason in
    hello, the run unharmed."""
    iso = grub_iso(tmp_path, f"    multiboot2 /boot/cleanroom.elf {CHEAP} provoke=fbwindow exit=auto")
    rc, res = boot_iso(tmp_path, "iso", iso)
    assert rc == 0 and done(res)["status"] == "ok"
    hello = of_type(res, "hello")[0]
    assert "pse36" not in of_type(res, "cpu")[0]["features"]
    assert hello["screen"] == "none" and hello["fb"] and "fb_access" not in hello
    assert "no PSE-36" in hello["screen_why"], hello["screen_why"]


@pytest.mark.parametrize("args, why", [
    (["--emulator", "bochs", "--cmdline", CHEAP], "needs QEMU"),
    (["--emulator", "uefi"], "give --cmdline"),
])
def test_screendump_is_refused_where_it_cannot_work(tmp_path: Path, args: list[str], why: str) -> None:
    proc = tool_proc("run", *args, "--screendump", str(tmp_path / "s.ppm"), "--out", str(tmp_path / "out"), "--quiet")
    assert proc.returncode == 5 and why in proc.stderr, proc.stderr
