"""The words a run's platform is described in: its kind and what one of its TSC ticks is.

machine.py sorts a result set into a kind (from the records, or from the row of
the emulator that ran it); each emulator's row in emulators.py names the kind
of its runs and the unit of their TSC. Both read these, so neither imports the other's
constants.
"""

from __future__ import annotations

from dataclasses import dataclass

QEMU_TCG = "qemu-tcg"  # QEMU's TCG: the TSC follows host time
QEMU_ICOUNT = "qemu-icount"  # QEMU with -icount: one TSC tick per instruction
BOCHS = "bochs"  # Bochs: one TSC tick per instruction
HOSTED = "hosted"  # the hosted build: a Linux process on this machine's CPU
HARDWARE = "hardware"  # a real PC with interrupts off
VM = "vm"  # a hardware-assisted virtual machine (KVM): a real CPU, its caches and its TSC
UNKNOWN = "unknown"  # no cpu record


@dataclass(frozen=True)
class Units:
    """How a TSC-based value is named: `name` in headings and sentences, `short` in compound units
    ("TSC ticks per switch", derived.csv's "TSC ticks/series")."""

    name: str
    short: str
    host_time: bool = False  # the TSC follows the host's clock: under an emulator, it times the emulator

    def per(self, what: str) -> str:
        return f"{self.short}/{what}"


TICKS = Units("TSC ticks", "TSC ticks")
HOST_TICKS = Units("TSC ticks (host time)", "TSC ticks", host_time=True)
INSTRUCTIONS = Units("instructions", "instructions")
BOCHS_INSTRUCTIONS = Units("instructions (Bochs: one TSC tick per instruction)", "instructions")
