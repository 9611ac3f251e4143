"""What Klimiankou 2018 reports, and where a run's numbers sit beside it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

from .derive import OFF, Row, extreme, pick
from .protocol import Record

KIB = 1024
MIB = 1024 * 1024

PAPER_MACHINE = "Intel Xeon (NetBurst, Prestonia) 2.4 GHz, L1d 8 KiB, L2 512 KiB, 100000 reps"


@dataclass(frozen=True)
class Claim:
    """One number the paper states in section 4 (its figures have no tables)."""

    what: str
    quantity: str
    want: str  # which extreme of this run to set beside it: "max" or "min"
    paging: str  # 'off', 'on' or 'vm' (the on-off comparison)
    paper: str


CLAIMS: tuple[Claim, ...] = (
    Claim("fig 4: worst concurrency overhead", "conc_rel", "max", "any", "352 % at 512K (= L2)"),
    Claim("fig 3: worst overhead per quantum", "conc_per_quantum", "max", "any", "~1.125 M cycles at 512K"),
    Claim("fig 5: VM on conc. overhead, lowest", "vm_on_conc", "min", "vm", "-90 % at 16K"),
    Claim("fig 5: VM on conc. overhead, highest", "vm_on_conc", "max", "vm", "+44 % at 1.5K"),
    Claim("fig 7: VM overhead, multi, lowest", "vm_rel_multi", "min", "vm", "-39 % at 16K"),
    Claim("fig 7: VM overhead, single, lowest", "vm_rel_single", "min", "vm", "-7.5 % at 3M"),
)


def size_text(n: int) -> str:
    """Bytes as the figures label them: 0, 512, 1K, 1.5K, 512K, 4M."""
    for unit, size in (("G", 1 << 30), ("M", MIB), ("K", KIB)):
        if n >= size:
            v = n / size
            return f"{v:g}{unit}"
    return str(n)


@dataclass(frozen=True)
class Cache:
    name: str  # L1d, L2, L3
    size: int


def data_caches(cpu: Record | None) -> list[Cache]:
    """Data and unified caches of a cpu record, smallest first."""
    caches = cpu.get("caches") if isinstance(cpu, dict) else None
    out: list[Cache] = []
    for c in caches if isinstance(caches, list) else []:
        if not isinstance(c, dict) or c.get("type") not in ("data", "unified"):
            continue
        size = c.get("size")
        if not isinstance(size, int) or size <= 0:
            continue
        out.append(Cache(f"L{c.get('level')}{'d' if c.get('type') == 'data' else ''}", size))
    return sorted(out, key=lambda c: c.size)


def cache_position(size: int, caches: list[Cache]) -> str:
    """Where one buffer of `size` bytes (two of them in the scenarios) sits among the caches."""
    if not caches:
        return "no cache sizes reported"
    for c in caches:
        if c.size == size:
            return f"= {c.name} size"
    for c in caches:
        if c.size == 2 * size:
            return f"both buffers = {c.name} size"
    below = [c for c in caches if c.size < size]
    above = [c for c in caches if c.size > size]
    if not below:
        return f"below {above[0].name} ({size_text(above[0].size)})"
    if not above:
        return f"above {below[-1].name} ({size_text(below[-1].size)})"
    return f"between {below[-1].name} ({size_text(below[-1].size)}) and {above[0].name} ({size_text(above[0].size)})"


def _value(row: Row) -> str:
    v = row.value.mid
    if row.unit == "%":
        return f"{v:+.1f} %" if row.quantity.startswith("vm") or row.quantity == "conc_on_vm" else f"{v:.1f} %"
    if abs(v) >= 1e6:
        return f"~{v / 1e6:.3g} M cycles"
    return f"{v:.0f} cycles"


def paging_text(label: str) -> str:
    """'off' -> 'paging off'; 'on/4k-off' -> 'paging on/4k vs off'."""
    if label.endswith(f"-{OFF}"):
        return f"paging {label[: -len(OFF) - 1]} vs {OFF}"
    return f"paging {label}"


def bytes_text(n: int) -> str:
    """size_text with a B under 1 KiB, for prose: '4B', '1.5K'."""
    return size_text(n) + ("B" if n < KIB else "")


def _where(row: Row) -> str:
    return f"at {bytes_text(row.size)} ({paging_text(row.paging)})"


def comparison(rows: list[Row], cpu: Record | None) -> list[str]:
    """The paper's numbers side by side with this run's, plus the peak's cache position."""
    if not rows:
        return []
    caches = data_caches(cpu)
    table: list[tuple[str, str, str]] = []
    for claim in CLAIMS:
        candidates = [r for r in pick(rows, claim.quantity)
                      if claim.paging == "any" or (claim.paging == "vm") == r.paging.endswith(f"-{OFF}")]
        best = extreme([r for r in candidates if r.size > 0], claim.want)
        mine = f"{_value(best)} {_where(best)}" if best else "-"
        table.append((claim.what, claim.paper, mine))
    w0 = max(len(t[0]) for t in table)
    w1 = max(len(t[1]) for t in table + [("", "paper", "")])
    out = [f"paper vs this run (paper: {PAPER_MACHINE})",
           f"  {'':{w0}}  {'paper':{w1}}  this run"]
    out += [f"  {a:{w0}}  {b:{w1}}  {c}" for a, b, c in table]
    for paging in sorted({r.paging for r in rows if r.quantity == "conc_rel"}, key=lambda p: (p != OFF, p)):
        points = [r for r in pick(rows, "conc_rel", paging=paging) if r.size > 0]
        peak = extreme(points, "max")
        if peak is not None:
            out.append(f"  peak relative concurrency overhead, paging {paging}: {peak.value.mid:.1f} % at "
                       f"{bytes_text(peak.size)} per buffer, {cache_position(peak.size, caches)}")
        # Below the L1 size the switch itself dominates; the cache effect the
        # paper is about shows in the peak among the larger sizes.
        big = extreme([r for r in points if caches and r.size >= caches[0].size], "max")
        if big is not None and peak is not None and big.size != peak.size:
            out.append(f"    from {caches[0].name} size up: {big.value.mid:.1f} % at {bytes_text(big.size)} "
                       f"per buffer, {cache_position(big.size, caches)}")
    if caches:
        out.append("  caches: " + ", ".join(f"{c.name} {size_text(c.size)}" for c in caches)
                   + "; the paper's peak was at one buffer = L2 (its two buffers overflow L2)")
    return out


def emulated(records: Iterable[Record]) -> str | None:
    """Why this run cannot show cache effects, or None when it ran on hardware."""
    recs = list(records)
    hello = next((r for r in recs if r.get("t") == "hello"), None)
    cpu = next((r for r in recs if r.get("t") == "cpu"), None)
    platform = hello.get("platform") if hello else None
    if platform == "hosted":
        return ("hosted run: a Linux process pinned to one CPU; interrupts, the scheduler and other cores "
                "still disturb it, and paging is always on (the kernel's paging cases are skipped)")
    cpu_platform = cpu.get("platform") if cpu else None
    hyper = cpu.get("hypervisor") if cpu else None
    if cpu_platform in ("qemu", "bochs") or (platform in (None, "bare") and hyper):
        who = cpu_platform if cpu_platform in ("qemu", "bochs") else "an emulator or hypervisor"
        return (f"this run came from {who} (cpu.hypervisor {hyper or 'none'}): emulators model no caches, "
                f"so no cache effect is expected; the curves show the emulator's costs, not the paper's "
                f"cache pollution. Cache effects need real hardware (docs/HARDWARE.md).")
    return None


def describe_cpu(cpu: Any) -> str:
    if not isinstance(cpu, dict):
        return "unknown CPU"
    return str(cpu.get("brand") or cpu.get("vendor") or "unknown CPU")
