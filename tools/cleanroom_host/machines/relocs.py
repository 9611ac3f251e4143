"""The kernel's relocation table (a build step; boot/boot.asm and linker.ld say why).

The kernel is linked at 2 MiB and not position-independent, yet GRUB's multiboot2
may load it elsewhere (the header's relocatable tag), so its entry adds the distance
to every absolute address in the image before using one. Where they are comes from
`ld --emit-relocs`: every R_386_32 relocation against a symbol of the image. This
module writes their places into the image's `.reloc` section, as boot/boot.asm reads
them: a 32-bit count of 16-bit steps, each step the distance from the previous place
(the first from the image's start), a step of 0 meaning "advance RELOC_SKIP bytes,
fix nothing" for longer distances.

    python -m cleanroom_host.machines.relocs LINKED_WITH_RELOCS OUTPUT

reads the relocations from the first file and writes the table into the second (the
same link with the relocation sections removed), in place. Anything it cannot make
relocatable (a PC-relative or 16-bit reference that would change with the distance)
stops the build, named.
"""

from __future__ import annotations

import argparse
import struct
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

from ..records.text import not_installed

SECTION = ".reloc"
# boot/boot.asm's RELOC_SKIP: the distance a step of 0 advances
SKIP = 0xFFFF
R_386_32 = 1
R_386_PC32 = 2
R_386_PLT32 = 4
SHF_ALLOC = 0x2


class RelocError(Exception):
    """The image cannot be made relocatable; the message names why."""


@dataclass(frozen=True)
class Image:
    start: int              # the lowest loaded address (where the steps start)
    end: int                # the end of the highest loaded section
    table: tuple[int, int]  # the .reloc section: address, size
    table_offset: int       # ... and its offset in the file


def encode(sites: Iterable[int], start: int) -> bytes:
    """The table boot/boot.asm reads: count, then 16-bit steps from start."""
    steps: list[int] = []
    here = start
    for site in sorted(sites):
        gap = site - here
        if gap <= 0 and steps:
            raise RelocError(f"two absolute addresses overlap at 0x{site:x}")
        if gap < 0:
            raise RelocError(f"an absolute address at 0x{site:x} lies before the image's start 0x{start:x}")
        while gap > SKIP:
            steps.append(0)
            gap -= SKIP
        if gap == 0:  # only the very first place can be the start itself: nothing precedes it
            raise RelocError(f"an absolute address at the image's first byte 0x{site:x}")
        steps.append(gap)
        here = site
    return struct.pack(f"<I{len(steps)}H", len(steps), *steps)


def decode(table: bytes, start: int) -> list[int]:
    """The places a table names (what boot/boot.asm fixes up): the inverse of encode."""
    (count,) = struct.unpack_from("<I", table)
    places, here = [], start
    for (step,) in struct.iter_unpack("<H", table[4:4 + 2 * count]):
        if step == 0:
            here += SKIP
        else:
            here += step
            places.append(here)
    return places


def _elf(fh: Any) -> Any:
    try:
        from elftools.common.exceptions import ELFError
        from elftools.elf.elffile import ELFFile
    except ImportError as exc:
        raise RelocError(not_installed("pyelftools")) from exc
    try:
        return ELFFile(fh)
    except ELFError as exc:
        raise RelocError(f"not an ELF file, or a damaged one: {exc}") from exc


def image_of(elf: Any) -> Image:
    loaded = [s for s in elf.iter_sections() if s["sh_flags"] & SHF_ALLOC and s["sh_size"]]
    if not loaded:
        raise RelocError("no loaded sections")
    table = elf.get_section_by_name(SECTION)
    if table is None:
        raise RelocError(f"no {SECTION} section (boot/boot.asm reserves it; linker.ld places it)")
    return Image(min(s["sh_addr"] for s in loaded), max(s["sh_addr"] + s["sh_size"] for s in loaded),
                 (table["sh_addr"], table["sh_size"]), table["sh_offset"])


def sites_of(elf: Any) -> list[int]:
    """Every place in the loaded image that holds an absolute address of the image."""
    from elftools.elf.relocation import RelocationSection

    symtab = elf.get_section_by_name(".symtab")
    if symtab is None:
        raise RelocError("no symbol table")
    sites = []
    for rel_section in elf.iter_sections():
        if not isinstance(rel_section, RelocationSection):
            continue
        target = elf.get_section(rel_section["sh_info"])
        if not target["sh_flags"] & SHF_ALLOC:
            continue  # debugging information: never loaded
        for rel in rel_section.iter_relocations():
            kind, sym = rel["r_info_type"], symtab.get_symbol(rel["r_info_sym"])
            absolute = sym["st_shndx"] == "SHN_ABS"  # a number, which moves with nothing
            where = f"0x{rel['r_offset']:x} in {target.name} (symbol {sym.name or '(section)'})"
            if sym["st_shndx"] == "SHN_UNDEF" and sym.name:
                raise RelocError(f"an undefined symbol at {where}")
            if kind == R_386_32:
                if not absolute:
                    sites.append(rel["r_offset"])
            elif kind in (R_386_PC32, R_386_PLT32):
                if absolute:
                    raise RelocError(f"a PC-relative reference to an absolute address at {where}: "
                                     "it would change when the image moves")
            else:
                raise RelocError(f"relocation type {kind} at {where}: boot/boot.asm fixes up only 32-bit "
                                 "absolute addresses (R_386_32); PC-relative ones need nothing")
    return sites


def write_table(linked: Path, output: Path) -> int:
    """Writes the table of linked's absolute addresses into output's .reloc; returns their number."""
    with linked.open("rb") as fh:
        elf = _elf(fh)
        image, sites = image_of(elf), sites_of(elf)
    table = encode(sites, image.start)
    with output.open("r+b") as fh:
        out_image = image_of(_elf(fh))
        if (out_image.start, out_image.end, out_image.table) != (image.start, image.end, image.table):
            raise RelocError(f"{output} is laid out differently from {linked}: not the same link")
        lo, hi = image.table[0], image.table[0] + image.table[1]
        inside = [s for s in sites if lo <= s + 3 and s < hi]
        if inside:
            raise RelocError(f"an absolute address inside the {SECTION} table at 0x{inside[0]:x}")
        if len(table) > image.table[1]:
            raise RelocError(f"the table needs {len(table)} bytes; boot/boot.asm reserves {image.table[1]}: "
                             f"raise RELOC_TABLE_BYTES there")
        fh.seek(out_image.table_offset)
        fh.write(table)
    return len(sites)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="relocs", description=__doc__.splitlines()[0])
    ap.add_argument("linked", type=Path, help="the kernel linked with --emit-relocs")
    ap.add_argument("output", type=Path, help="the same link without relocation sections: gets the table")
    args = ap.parse_args(argv)
    try:
        write_table(args.linked, args.output)
    except (RelocError, OSError) as exc:
        print(f"error: relocation table for {args.output}: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
