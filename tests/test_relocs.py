"""The kernel's relocation table (tools/cleanroom_host/machines/relocs.py, boot/boot.asm):
GRUB's multiboot2 may load the image elsewhere than its link address, and the
entry fixes up every absolute address from this table. The test that matters:
the built image, fixed up by its own table as boot/boot.asm does, is byte for
byte the same objects linked at another address."""

from __future__ import annotations

import shutil
import struct
import subprocess
from pathlib import Path

import pytest
from elftools.elf.elffile import ELFFile

from booting import built
from cleanroom_host.machines import relocs

REPO = Path(__file__).resolve().parent.parent
KERNEL = REPO / "build" / "cleanroom.elf"
LINKED = REPO / "build" / "cleanroom.relocs.elf"
MIB = 1 << 20


def test_steps_round_trip_with_long_gaps() -> None:
    start = 2 * MIB
    sites = [start + 4, start + 0x20, start + 0x20 + relocs.SKIP, start + 0x40000, start + 0x40000 + 2 * relocs.SKIP]
    table = relocs.encode(reversed(sites), start)
    assert relocs.decode(table, start) == sites
    count = struct.unpack_from("<I", table)[0]
    assert len(table) == 4 + 2 * count and count > len(sites), "gaps over 64 KiB take skip steps"


@pytest.mark.parametrize("sites, words", [([2 * MIB - 4], "before the image's start"),
                                          ([2 * MIB + 8, 2 * MIB + 8], "overlap"),
                                          ([2 * MIB], "first byte")])
def test_impossible_tables_are_refused(sites: list[int], words: str) -> None:
    with pytest.raises(relocs.RelocError, match=words):
        relocs.encode(sites, 2 * MIB)


def loaded(path: Path) -> dict[str, tuple[int, bytearray]]:
    """Every loaded section with contents: name -> (address, bytes)."""
    with path.open("rb") as fh:
        elf = ELFFile(fh)
        return {s.name: (s["sh_addr"], bytearray(s.data())) for s in elf.iter_sections()
                if s["sh_flags"] & relocs.SHF_ALLOC and s["sh_type"] != "SHT_NOBITS" and s["sh_size"]}


def make_variable(name: str) -> list[str]:
    """A Makefile variable's words (OBJS in its link order, which the layout depends on; LD)."""
    proc = subprocess.run(["make", "-s", "--no-print-directory", "-f", "Makefile", "-f", "-", "show"],
                          input=f"show:\n\t@echo $({name})\n", cwd=REPO, capture_output=True, text=True,
                          check=True)
    return proc.stdout.split()


def test_the_fixed_up_image_is_the_image_linked_there(tmp_path: Path) -> None:
    built(LINKED, "all")  # the kernel's objects linked with their relocations: make builds it beside the kernel
    script = tmp_path / "linker.ld"
    text = (REPO / "linker.ld").read_text()
    assert "KERNEL_LOAD = 2M;" in text
    script.write_text(text.replace("KERNEL_LOAD = 2M;", "KERNEL_LOAD = 1M;"))
    at_1m = tmp_path / "at1m.elf"
    subprocess.run([*make_variable("LD"), "-m", "elf_i386", "-T", str(script), "-nostdlib", "-z", "noexecstack",
                    "--no-warn-rwx-segments", "-o", str(at_1m), *make_variable("OBJS")], cwd=REPO, check=True)
    image, moved = loaded(KERNEL), loaded(at_1m)
    places = relocs.decode(bytes(image[relocs.SECTION][1]), min(a for a, _ in image.values()))
    assert len(places) > 1000, "every global the kernel's C reads is an absolute address"
    delta = -MIB
    for place in places:  # what boot/boot.asm does: add the distance at each place
        name, (addr, data) = next((n, s) for n, s in image.items() if s[0] <= place < s[0] + len(s[1]))
        value = struct.unpack_from("<I", data, place - addr)[0]
        struct.pack_into("<I", data, place - addr, (value + delta) & 0xFFFFFFFF)
    assert image.keys() == moved.keys()
    for name in image:
        if name == relocs.SECTION:
            continue  # the table itself is written into the built image only
        assert image[name][0] + delta == moved[name][0], name
        assert image[name][1] == moved[name][1], f"{name} differs after the fix-up: an absolute address is missing"


def test_a_16_bit_absolute_address_stops_the_build(tmp_path: Path) -> None:
    """A reference the entry cannot fix up (a 16-bit absolute address) is named, never left wrong."""
    (tmp_path / "t.asm").write_text("section .text\nglobal _start\n_start:\n    dd here\nhere:\n    dw here\n"
                                    "section .reloc progbits alloc noexec nowrite align=4\n    times 64 db 0\n")
    subprocess.run(["nasm", "-f", "elf32", "-o", str(tmp_path / "t.o"), str(tmp_path / "t.asm")], check=True)
    (tmp_path / "t.ld").write_text("SECTIONS { . = 0x8000; .text : { *(.text) } .reloc : { *(.reloc) } }\n")
    linked, out = tmp_path / "t.relocs.elf", tmp_path / "t.elf"
    subprocess.run([*make_variable("LD"), "-m", "elf_i386", "-T", str(tmp_path / "t.ld"), "--emit-relocs",
                    "-o", str(linked), str(tmp_path / "t.o")], check=True)
    shutil.copyfile(linked, out)
    with pytest.raises(relocs.RelocError, match=r"relocation type 20 at 0x8004 in \.text"):
        relocs.write_table(linked, out)
