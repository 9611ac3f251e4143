"""What a run ran on, and so what its numbers are: the unit of a TSC tick, whether the
caches the CPU reports exist, how far its timing can be trusted, which event
counters counted.

The kernel's records say `cycles`, but a TSC tick is a cycle only of the TSC:
under QEMU -icount it is one instruction, in Bochs one instruction too, under
plain QEMU (TCG) it follows the host's clock, and on real hardware it is the
constant-rate TSC, not the core clock (that one is the `core_cycles` counter).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Iterable

from ..records import model
from ..records.kinds import (BOCHS, HARDWARE, HOSTED, PLATFORM_BOCHS, PLATFORM_HOSTED, PLATFORM_QEMU, QEMU_ICOUNT,
                             QEMU_TCG, TICKS, UNKNOWN, VM, Units, looks_icount)
from ..records.protocol import Record
from . import emulators

TCG_SIGNATURE = "TCGTCGTCGTCG"
KVM_SIGNATURE = "KVMKVMKVM"


TRUST = {
    QEMU_TCG: "QEMU TCG: host time, no caches or TLB modelled; read instruction counts under qemu-icount instead",
    QEMU_ICOUNT: ("QEMU -icount: the TSC counts instructions, exactly and repeatably; no caches or TLB "
                  "modelled, so no cache or TLB effect can show"),
    BOCHS: "Bochs: one TSC tick per instruction, repeatable; no caches or TLB timing modelled",
    HOSTED: ("hosted: a Linux process pinned to one CPU, real caches and TLB; interrupts, the scheduler and "
             "other cores still disturb it, and paging is always on"),
    HARDWARE: ("real hardware with interrupts off (the paper's clean room); a TSC tick is not a core cycle "
               "when the core's clock varies"),
    VM: ("a virtual machine: this CPU, its caches and its TSC at native speed, but every TLB miss walks two page "
         "tables (EPT/NPT: the guest's, and the host's for each of its entries), and the host's interrupts and VM "
         "exits (every cpuid is one) land inside timed regions"),
    UNKNOWN: "unknown platform (no cpu record): treat every number as unverified",
}
# What every figure of an emulator whose TSC follows the host's clock is (Machine.emulator_time)
EMULATOR_TIME = "the emulator's own costs in host time, not a CPU's"
# What every figure of a run whose hypervisor traps rdtsc is (Machine.rdtsc_trap: the trust line says it too)
TRAPPED_COST = "every figure here is the cost of its emulation, not the CPU's"
TRAPPED_TIME = f"the hypervisor traps rdtsc, so {TRAPPED_COST}"
# What every figure of a hosted run with more workers than CPUs is (oversubscribe=1: Machine.shared)
SHARED_TIME = ("{workers} workers took turns on {cpus} CPUs (oversubscribe=1): every time is the scheduler's; "
               "the run checks the multi-CPU logic, not speed")
# qemu-model: the same exact instruction counts, plus a cache/TLB model's figures (docs/MODEL.md)
MODELLED_TRUST = ("QEMU -icount with the cache/TLB model: the TSC counts instructions, exactly and repeatably; "
                  "QEMU itself models no cache or TLB, but each result's `model` figures price the accesses it "
                  "really made on a modelled cache and TLB (a model, not a measurement)")


@dataclass(frozen=True)
class Cache:
    name: str  # L1d, L2, L3
    size: int


@dataclass(frozen=True)
class Counter:
    """One hardware event of the `counters` record."""

    name: str
    ok: bool
    why: str


@dataclass(frozen=True)
class Machine:
    kind: str
    units: Units
    trust: str
    caches: list[Cache]  # the cpu record's data and unified caches, smallest first
    counters: list[Counter] = field(default_factory=list)
    counter_scope: str | None = None
    counters_recorded: bool = False  # the log has a counters record (older logs do not)
    hypervisor: str | None = None
    tsc_sources: str | None = None  # every source's TSC figure and the choice (tsc_sources_text)
    tsc_warning: str | None = None  # no calibration, or sources that disagree (tsc_warning_text)
    evidence: "Evidence | None" = None  # the evidence record and the results' own (None: an older log)
    timing: str = ""  # the trust line with the TSC's choice but not every source's figure: the summary's
    shared: str | None = None  # hosted, oversubscribe=1: SHARED_TIME for its workers and CPUs
    rdtsc_trap: int | None = None  # a real CPU's back-to-back rdtsc took this many ticks: trapped (rdtsc_trapped)

    @property
    def emulated(self) -> bool:
        """An emulator: no caches, no TLB timing; its cache sizes are made up (its row says so)."""
        row = emulators.of_kind(self.kind)
        return row is not None and row.caches != emulators.REAL

    @property
    def emulator_time(self) -> bool:
        """An emulator whose TSC follows the host's clock (its row says so): every figure it gives is
        the emulator's own cost, never a CPU's, so none is an answer."""
        return self.emulated and self.units.host_time

    @property
    def no_answers(self) -> str | None:
        """Why no figure of this run answers anything (an emulator's host time, a hypervisor trapping rdtsc,
        workers sharing CPUs), or None: its figures are a CPU's."""
        if self.emulator_time:
            return EMULATOR_TIME
        return TRAPPED_TIME if self.rdtsc_trap is not None else self.shared

    @property
    def plot_caches(self) -> list[Cache]:
        """The caches to draw on a figure: none for an emulator, which models none."""
        return [] if self.emulated else self.caches

    @property
    def counted(self) -> list[str]:
        return [c.name for c in self.counters if c.ok]

    @classmethod
    def of(cls, records: Iterable[Record], run: dict[str, Any] | None = None) -> "Machine":
        recs = list(records)
        cpu = _first(recs, "cpu")
        kind = classify(recs, run)
        counters, scope, recorded = _counters(_first(recs, "counters"))
        hyper = cpu.get("hypervisor") if cpu else None
        trust = TRUST[kind]
        smp = _first(recs, "smp")
        used = int((smp or {}).get("used") or 1)
        shared_cpus = int((smp or {}).get("shared_cpus") or 0)
        shared = SHARED_TIME.format(workers=used, cpus=shared_cpus) if kind == HOSTED and shared_cpus else None
        if shared:
            trust = trust.replace("a Linux process pinned to one CPU", f"a Linux process: {shared}")
        elif kind == HOSTED and used > 1:  # suite=smp, cpus=N: a thread pinned to each of N CPUs
            trust = trust.replace("a Linux process pinned to one CPU", f"a Linux process, a thread pinned to each of "
                                                                        f"{used} CPUs")
        if kind == HOSTED and hyper:
            trust += f"; this host is itself a virtual machine ({hyper})"
        if kind == VM and hyper:
            trust = trust.replace("a virtual machine", f"a virtual machine ({hyper})")
        if kind == QEMU_ICOUNT and (run or {}).get("model"):
            trust = MODELLED_TRUST
        tsc = _first(recs, "tsc")
        sources, warning = tsc_sources_text(tsc), tsc_warning_text(tsc)
        # the trust line is what every report shows: the clock's evidence belongs there (a warning whole)
        clock = brief = f"; WARNING: {warning}" if warning else ""
        if not warning and sources:
            clock, brief = f"; TSC {sources}", f"; TSC {tsc_choice_text(tsc)}"
        evidence = Evidence.of(recs)
        notes = hypervisor_notes(recs, run, kind) + (evidence_notes(evidence) if evidence else [])
        tail = "; " + "; ".join(notes) if notes else ""
        return cls(kind, units_of(kind), trust + clock + tail, data_caches(cpu), counters, scope, recorded,
                   str(hyper) if hyper else None, sources, warning, evidence, trust + brief + tail, shared,
                   rdtsc_trapped(recs) if real_tsc(kind) else None)


def _first(records: list[Record], t: str) -> Record | None:
    return next((r for r in records if isinstance(r, dict) and r.get("t") == t), None)


def classify(records: list[Record], run: dict[str, Any] | None = None) -> str:
    """The platform kind: from the run's emulator when results.json recorded it, else from the records."""
    row = emulators.find(run.get("emulator")) if isinstance(run, dict) else None  # "serial": a real PC, by capture
    if row is not None:
        return row.kind
    hello, cpu = _first(records, "hello"), _first(records, "cpu")
    if hello and hello.get("platform") == PLATFORM_HOSTED or cpu and cpu.get("platform") == PLATFORM_HOSTED:
        return HOSTED
    if cpu is None:
        return UNKNOWN
    platform, hyper = cpu.get("platform"), cpu.get("hypervisor")
    if platform == PLATFORM_BOCHS:
        return BOCHS
    # The kernel calls QEMU with KVM "qemu" too (exit=auto drives both the same way); under KVM
    # the CPU, its caches and its TSC are real.
    if hyper == KVM_SIGNATURE:
        return VM
    if platform == PLATFORM_QEMU or hyper == TCG_SIGNATURE:
        return QEMU_ICOUNT if looks_icount(records) else QEMU_TCG
    return VM if hyper else HARDWARE


# A back-to-back rdtsc pair takes a CPU a few dozen TSC ticks (tens more on old ones); a hypervisor that
# traps rdtsc takes thousands (2 312 and 6 100 under the development machines' software hypervisor).
RDTSC_TRAPPED = 500
# The kernel's functions whose fault, under a hypervisor, is the hypervisor refusing what they do.
REFUSED = {"paging_enable": "turning paging on (setting CR0.PG)"}


def rdtsc_trapped(records: list[Record]) -> int | None:
    """The fewest TSC ticks of a back-to-back rdtsc pair (the tsc benchmark's `rdtsc` case) when even
    that is far above what a CPU takes: a hypervisor traps rdtsc. None otherwise."""
    fewest = [r.get("min") for r in records if r.get("t") == "result" and r.get("bench") == "tsc"
              and r.get("case") == "rdtsc" and isinstance(r.get("min"), int)]
    return min(fewest) if fewest and min(fewest) > RDTSC_TRAPPED else None


def real_tsc(kind: str) -> bool:
    """A known platform whose TSC is a real CPU's (not an emulator's): a hypervisor may trap its rdtsc."""
    row = emulators.of_kind(kind)
    return kind != UNKNOWN and (row is None or row.caches == emulators.REAL)


def hypervisor_notes(records: list[Record], run: dict[str, Any] | None, kind: str) -> list[str]:
    """What the trust line says of a run on a real CPU under a hypervisor: an rdtsc it traps, a fault
    where it refused what the kernel needs, a guest it stopped. Nothing for the emulators, whose TSC
    is no CPU's anyway."""
    if not real_tsc(kind):
        return []
    run = run or {}
    cpu = _first(records, "cpu")
    hyper = kind == VM or bool(cpu and cpu.get("hypervisor"))
    notes = []
    ticks = rdtsc_trapped(records)
    if ticks is not None:
        notes.append(f"the hypervisor traps rdtsc: a back-to-back pair takes at least {ticks} TSC ticks (a CPU "
                     f"takes a few dozen), so {TRAPPED_COST}")
    fault = _first(records, "fault")
    if hyper and fault is not None:
        where = run.get("fault_in")
        refused = REFUSED.get(str(where).split("+")[0]) if where else None
        at = f"at eip {fault.get('eip'):#x}" if isinstance(fault.get("eip"), int) else "(no eip)"
        notes.append(f"the kernel took {fault.get('name')} (vector {fault.get('vector')}) {at}"
                     + (f" in {where}" if where else "")
                     + (f": the hypervisor refused {refused}" if refused
                        else ": under a hypervisor most likely one refusing what the kernel needs")
                     + "; nothing after it was measured")
    if run.get("emulator_error"):
        notes.append(f"the hypervisor stopped the guest ({run.get('emulator_error')}); nothing after the last "
                     f"record was measured")
    return notes


def units_of(kind: str) -> Units:
    """What a TSC tick is on this kind of platform: its emulators' row says; elsewhere a real TSC tick."""
    row = emulators.of_kind(kind)
    return row.tsc if row is not None else TICKS


def data_caches(cpu: Record | None) -> list[Cache]:
    """Data and unified caches of a cpu record, smallest first."""
    caches = cpu.get("caches") if isinstance(cpu, dict) else None
    out: list[Cache] = []
    for c in caches if isinstance(caches, list) else []:
        if not isinstance(c, dict) or c.get("type") not in ("data", "unified"):
            continue
        size = c.get("size")
        if not isinstance(size, int) or isinstance(size, bool) or size <= 0:
            continue
        out.append(Cache(f"L{c.get('level')}{'d' if c.get('type') == 'data' else ''}", size))
    return sorted(out, key=lambda c: c.size)


def _counters(rec: Record | None) -> tuple[list[Counter], str | None, bool]:
    if rec is None:
        return [], None, False
    events = rec.get("events")
    out = []
    for e in events if isinstance(events, list) else []:
        if isinstance(e, dict) and e.get("name"):
            out.append(Counter(str(e.get("name")), e.get("ok") is True, str(e.get("why") or "")))
    scope = rec.get("scope")
    return out, str(scope) if scope else None, True


def counters_text(m: Machine, brief: bool = False) -> str:
    """One line: which events counted and why the others did not. Brief (the summary): when none
    counted, for one reason, that reason alone (report.txt names the events)."""
    if not m.counters_recorded:
        return "not recorded (a log from before the counters record)"
    counted = m.counted
    text = (", ".join(counted) + (f" (scope {m.counter_scope})" if m.counter_scope else "")) if counted else "none"
    absent: dict[str, list[str]] = {}
    for c in m.counters:
        if not c.ok:
            absent.setdefault(c.why or "no reason given", []).append(c.name)
    if brief and not counted and len(absent) == 1:
        return f"none ({next(iter(absent))})"
    if absent:
        text += "; not counted: " + "; ".join(f"{', '.join(names)} ({why})" for why, names in absent.items())
    return text


TSC_AGREE = 0.005  # the kernel's TSC_AGREE_PPM: two sources agree within 0.5 %


def _hz_text(hz: int) -> str:
    return f"{hz / 1e9:.4f} GHz" if hz >= 10**8 else f"{hz / 1e6:.4f} MHz" if hz >= 10**5 else f"{hz} Hz"


def _figures(tsc: Record | None) -> dict[str, int] | None:
    """A tsc record's figure per source (absent ones left out); None for a record without sources
    (logs from before the kernel measured several)."""
    sources = tsc.get("sources") if isinstance(tsc, dict) else None
    if not isinstance(sources, dict):
        return None
    return {str(k): v for k, v in sources.items() if isinstance(v, int) and not isinstance(v, bool) and v > 0}


def tsc_choice_text(tsc: Record) -> str:
    """The source chosen and whether a second one confirmed it: "from hpet, confirmed within 0.5 %"."""
    how = "confirmed within 0.5 %" if tsc.get("agree") is True else "not confirmed by a second source"
    forced = ", as tsc= asked" if tsc.get("forced") is True else ""
    return f"from {tsc.get('method')}{forced}, {how}"


def tsc_sources_text(tsc: Record | None) -> str | None:
    """The choice and every source's figure, e.g. "from hpet, confirmed within 0.5 % (hpet 1.0000 GHz
    (chosen), pmtimer 1.0000 GHz, pit 1.0000 GHz; none from cpuid15, cpuid16)"."""
    figures = _figures(tsc)
    if figures is None or tsc is None:
        return None
    method = str(tsc.get("method"))
    listed = ", ".join(f"{name} {_hz_text(hz)}" + (" (chosen)" if name == method else "")
                       for name, hz in figures.items())
    missing = [str(k) for k in tsc.get("sources", {}) if k not in figures]
    detail = (listed or "no figures") + (f"; none from {', '.join(missing)}" if missing else "")
    if not figures or not tsc.get("hz"):
        return f"not calibrated ({detail})"
    return f"{tsc_choice_text(tsc)} ({detail})"


def tsc_warning_text(tsc: Record | None) -> str | None:
    """What a reader must not miss: a TSC nobody calibrated, or sources that disagree."""
    figures = _figures(tsc)
    if figures is None or tsc is None:
        return None
    hz = tsc.get("hz")
    if not isinstance(hz, int) or hz <= 0:
        return ("the TSC could not be calibrated (hz 0): no source gave a frequency, so no figure in seconds "
                "can be trusted (" + (tsc_sources_text(tsc) or "") + ")")
    disagree = [name for name, f in figures.items() if abs(f - hz) > TSC_AGREE * hz]
    if tsc.get("agree") is not True and disagree:
        return (f"the TSC's sources disagree by more than 0.5 %: {tsc.get('method')} says {_hz_text(hz)}, "
                + ", ".join(f"{n} {_hz_text(figures[n])}" for n in disagree) + "; the figure is unconfirmed")
    return None


# --- per-case evidence: APERF/MPERF, SMIs, memory types (the evidence record, result fields) ---

# An APERF/MPERF ratio further from 1 than this: the core did not run at the TSC's rate (turbo
# above, a lower P-state or throttling below), so a TSC tick was not a core cycle in that case.
APERF_MPERF_TOLERANCE = 0.02
WRITE_BACK = "wb"
MEMTYPE_UNKNOWN = "unknown"


def _int(v: Any) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def aperf_mperf_ratio(result: Record) -> float | None:
    """The core clock over the TSC clock during a result's recorded rounds (None: not read)."""
    aperf, mperf = _int(result.get("aperf")), _int(result.get("mperf"))
    return aperf / mperf if aperf is not None and mperf else None


def _name(r: Record) -> str:
    return f"{r.get('bench')}/{r.get('case')}"


@dataclass(frozen=True)
class Evidence:
    """What the run could tell besides TSC ticks: once per boot (the evidence record) and per result."""

    recorded: bool                # the log has an evidence record
    aperf_mperf: bool             # read around every case
    aperf_mperf_why: str
    smi_count: bool
    smi_count_why: str
    mce: bool                     # CR4.MCE set: a machine check is a fault record
    mtrr: str                     # on, off, absent, unreadable, hosted
    memtype: str                  # of all memory benchmarks could get
    split_4m: int                 # 4 MiB pages mapped with 4 KiB pages (two memory types)
    far_ratios: list[tuple[str, float]] = field(default_factory=list)  # results whose APERF/MPERF is not ~1
    ratio_range: tuple[float, float] | None = None
    smi_touched: list[tuple[str, int]] = field(default_factory=list)   # results an SMI interrupted
    not_write_back: list[tuple[str, str]] = field(default_factory=list)  # results on memory that is not WB
    refused: list[str] = field(default_factory=list)  # cases skipped because their memory was not WB

    @classmethod
    def of(cls, records: Iterable[Record]) -> "Evidence | None":
        recs = [r for r in records if isinstance(r, dict)]
        ev = _first(recs, "evidence")
        results = [r for r in recs if r.get("t") == "result"]
        if ev is None and not any("memtype" in r for r in results):
            return None
        ev = ev or {}
        ratios = [(_name(r), q) for r in results if (q := aperf_mperf_ratio(r)) is not None]
        far = [(n, q) for n, q in ratios if abs(q - 1) > APERF_MPERF_TOLERANCE]
        qs = [q for _, q in ratios]
        smi = [(_name(r), n) for r in results if (n := _int(r.get("smi"))) is not None and n > 0]
        not_wb = [(_name(r), str(r.get("memtype"))) for r in results
                  if r.get("memtype") not in (None, WRITE_BACK, MEMTYPE_UNKNOWN)]
        refused = [f"{r.get('bench')}/{r.get('what')}" for r in recs
                   if r.get("t") == "skip" and "not write-back" in str(r.get("why", ""))]
        return cls(bool(ev), ev.get("aperf_mperf") is True, str(ev.get("aperf_mperf_why") or ""),
                   ev.get("smi_count") is True, str(ev.get("smi_count_why") or ""), ev.get("mce") is True,
                   str(ev.get("mtrr") or ""), str(ev.get("memtype") or MEMTYPE_UNKNOWN),
                   _int(ev.get("split_4m")) or 0, far, (min(qs), max(qs)) if qs else None, smi, not_wb, refused)


def _few(names: list[str], most: int = 3) -> str:
    shown = ", ".join(names[:most])
    return shown + (f" and {len(names) - most} more" if len(names) > most else "")


def evidence_notes(e: Evidence) -> list[str]:
    """What the trust summary adds: only what should make a reader doubt a number."""
    out = []
    if e.far_ratios:
        lo, hi = e.ratio_range or (0.0, 0.0)
        out.append(f"APERF/MPERF {lo:.2f}..{hi:.2f} in {len(e.far_ratios)} results (turbo or P-states: a TSC tick "
                   f"was not a core cycle there: {_few([n for n, _ in e.far_ratios])})")
    if e.smi_touched:
        out.append(f"{len(e.smi_touched)} results touched by an SMI ({_few([f'{n} x{c}' for n, c in e.smi_touched])})")
    if e.not_write_back:
        out.append(f"{len(e.not_write_back)} results on memory that is not write-back "
                   f"({_few([f'{n} {t}' for n, t in e.not_write_back])})")
    if e.refused:
        out.append(f"{len(e.refused)} cases refused: their memory was not write-back ({_few(e.refused)})")
    if e.recorded and e.mtrr in ("off",):
        out.append("MTRRs off: all memory uncached")
    if e.split_4m:
        out.append(f"{e.split_4m} 4 MiB pages spanned two memory types and were mapped with 4 KiB pages")
    return out


def evidence_text(e: Evidence | None) -> str:
    """One line for a report: what was read per case and what was not, and why."""
    if e is None or not e.recorded:
        return "not recorded (a log from before the evidence record)"
    parts = [f"memory {e.memtype} (MTRRs {e.mtrr})",
             "APERF/MPERF read" if e.aperf_mperf else f"no APERF/MPERF ({e.aperf_mperf_why})",
             "SMI count read" if e.smi_count else f"no SMI count ({e.smi_count_why})",
             "machine checks reported" if e.mce else "machine checks not enabled"]
    return "; ".join(parts)


def model_view(machine: Machine, info: dict[str, Any] | None) -> Machine:
    """The run's Machine as the cache model's (model.py): its caches, its unit (modelled cycles) and a trust line
    saying so."""
    name = (info or {}).get("preset", "?")
    units = Units(f"modelled cycles (preset {name}, not measured)", "modelled cycles")
    trust = f"MODELLED: the cache/TLB model, preset {model.preset_text(info)}; not a measurement (docs/MODEL.md)"
    return replace(machine, kind=model.MODEL_KIND, units=units, trust=trust,
                   caches=[Cache(n, s) for n, s in model.model_caches(info)])
