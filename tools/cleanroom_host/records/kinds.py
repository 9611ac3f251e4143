"""The words a run's platform is described in: its kind and what one of its TSC ticks is.

machine.py sorts a result set into a kind (from the records, or from the row of
the emulator that ran it); each emulator's row in emulators.py names the kind
of its runs and the unit of their TSC. Both read these, so neither imports the other's
constants.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

QEMU_TCG = "qemu-tcg"  # QEMU's TCG: the TSC follows host time
QEMU_ICOUNT = "qemu-icount"  # QEMU with -icount: one TSC tick per instruction
BOCHS = "bochs"  # Bochs: one TSC tick per instruction
HOSTED = "hosted"  # the hosted build: a Linux process on this machine's CPU
HARDWARE = "hardware"  # a real PC with interrupts off
VM = "vm"  # a hardware-assisted virtual machine (KVM): a real CPU, its caches and its TSC
UNKNOWN = "unknown"  # no cpu record

# hello.platform and cpu.platform as the kernel writes them (docs/PROTOCOL.md)
PLATFORM_HOSTED = "hosted"
PLATFORM_BOCHS = "bochs"
PLATFORM_QEMU = "qemu"  # under KVM too
# Under -icount shift=0 the guest's TSC runs at 1 GHz, one tick per instruction; a TCG guest's
# TSC follows the host's, which is never exactly that.
ICOUNT_HZ = 1_000_000_000
ICOUNT_HZ_TOLERANCE = 0.001
ICOUNT_RDTSC = 3  # a back-to-back rdtsc pair under icount: three instructions


def _first(records: Iterable[Any], t: str) -> dict[str, Any] | None:
    return next((r for r in records if isinstance(r, dict) and r.get("t") == t), None)


def looks_icount(records: list[Any]) -> bool:
    """A QEMU run whose TSC counts instructions: a 1 GHz TSC, or a back-to-back rdtsc of 3 ticks."""
    tsc = _first(records, "tsc")
    hz = tsc.get("hz") if tsc else None
    if isinstance(hz, int) and not isinstance(hz, bool) and abs(hz - ICOUNT_HZ) <= ICOUNT_HZ * ICOUNT_HZ_TOLERANCE:
        return True
    return any(isinstance(r, dict) and r.get("t") == "result" and r.get("bench") == "tsc"
               and r.get("case") == "rdtsc" and r.get("med") == ICOUNT_RDTSC for r in records)


def counts_instructions(records: list[Any]) -> bool:
    """The run's TSC counts instructions (QEMU -icount, Bochs): the same boot repeats to the tick, so
    one boot is every boot, and a band of zero width is exact. Elsewhere the clock is real: a process
    or boot differs from the next by more than its own rounds do."""
    hello, cpu = _first(records, "hello"), _first(records, "cpu")
    if hello and hello.get("platform") == PLATFORM_HOSTED or cpu and cpu.get("platform") == PLATFORM_HOSTED:
        return False
    if cpu and cpu.get("platform") == PLATFORM_BOCHS:
        return True
    return looks_icount(records)


@dataclass(frozen=True)
class Units:
    """How a TSC-based value is named: `name` in headings and sentences, `short` in compound units
    ("TSC ticks per switch", derived.csv's "TSC ticks/series")."""

    name: str
    short: str
    host_time: bool = False  # the TSC follows the host's clock: under an emulator, it times the emulator
    exact: bool = False  # a tick is an instruction: a run repeats to the tick, so one boot is every boot

    def per(self, what: str) -> str:
        return f"{self.short}/{what}"


TICKS = Units("TSC ticks", "TSC ticks")
HOST_TICKS = Units("TSC ticks (host time)", "TSC ticks", host_time=True)
INSTRUCTIONS = Units("instructions", "instructions", exact=True)
BOCHS_INSTRUCTIONS = Units("instructions (Bochs: one TSC tick per instruction)", "instructions", exact=True)
