"""Where the loader puts the kernel, through GRUB menus the tests write.

GRUB's multiboot v1 on UEFI copies the image to its link address (2 MiB)
whatever the memory map says is there; with `cutmem 2M 4M` the map calls that
range bad memory, and the kernel must say it sits on it. GRUB's multiboot2
places the relocatable image in memory its map calls free, and the image's
fix-up (boot/boot.asm) makes it run there."""

from __future__ import annotations

from pathlib import Path

import pytest

from booting import boot_iso, done, errors, grub_iso, of_type

MIB = 1 << 20
CHEAP = "bench=tsc runs=1 exit=auto"

pytestmark = pytest.mark.usefixtures("kernel_elf")


@pytest.mark.early
def test_grub_multiboot_v1_puts_the_image_on_bad_memory_and_the_kernel_says_so(tmp_path: Path) -> None:
    iso = grub_iso(tmp_path, f"    insmod mmap\n    cutmem 2M 4M\n    multiboot /boot/cleanroom.elf {CHEAP}")
    rc, res = boot_iso(tmp_path, "uefi", iso)
    assert rc == 0 and done(res)["status"] == "ok", "the run goes on: the damage was done before it began"
    assert of_type(res, "hello")[0]["multiboot"] == 1
    mem = of_type(res, "mem")[0]
    base, length = mem["image"]
    assert base == 2 * MIB, "multiboot v1: the link address, whatever the map says"
    assert not [f for f in mem["free"] if f[0] < 4 * MIB and f[0] + f[1] > 2 * MIB], "cutmem's range is not free"
    overlap = errors(res, "image_overlap")
    assert len(overlap) == 1, of_type(res, "error")
    e = overlap[0]
    assert e["image"] == [base, length] and e["overlap"] == [base, length]
    assert (e["map"], e["map_type"], e["what"]) == ("multiboot", 5, "bad memory")
    assert f"[0x{base:x}, 0x{base + length:x})" in e["msg"] and "bad memory" in e["msg"]
    acpi = of_type(res, "tsc")[0]["acpi"]
    assert acpi["where"] in ("acpi_reclaim", "acpi_nvs") and acpi["rsdp"], \
        "multiboot v1 passes no RSDP and OVMF keeps no legacy copy: the map's ACPI ranges are scanned"


@pytest.mark.early
def test_grub_multiboot2_on_uefi_places_the_image_where_the_map_has_room(tmp_path: Path) -> None:
    """Half a MiB cut at 1 MiB (GRUB for EFI takes the range from the
    firmware): GRUB puts the image right after it, half a MiB below its link
    address, and the fixed-up kernel runs there."""
    iso = grub_iso(tmp_path, f"    insmod mmap\n    cutmem 1M 1536K\n    multiboot2 /boot/cleanroom.elf {CHEAP}")
    rc, res = boot_iso(tmp_path, "uefi", iso)
    assert rc == 0 and done(res)["status"] == "ok" and len(of_type(res, "result")) == 8
    assert of_type(res, "hello")[0]["multiboot"] == 2
    assert of_type(res, "mem")[0]["image"][0] == 1536 * 1024
    assert not errors(res, "image_overlap")


def test_grub_multiboot2_on_a_bios_ignores_cutmem_and_the_kernel_says_so(tmp_path: Path) -> None:
    """GRUB for BIOS places the image by the firmware's map alone: cutmem's
    hole is not avoided, and the kernel's own check is what names it."""
    iso = grub_iso(tmp_path, f"    insmod mmap\n    cutmem 1M 1536K\n    multiboot2 /boot/cleanroom.elf {CHEAP}")
    rc, res = boot_iso(tmp_path, "iso", iso)
    assert rc == 0 and done(res)["status"] == "ok"
    base, length = of_type(res, "mem")[0]["image"]
    assert base == MIB
    overlap = errors(res, "image_overlap")
    assert len(overlap) == 1 and overlap[0]["overlap"] == [base, min(length, 512 * 1024)], "the part in the hole"
    assert overlap[0]["map_type"] is None and "multiboot map does not list" in overlap[0]["msg"]
