"""The TSC's frequency from every source the machine has, and a run that says
so plainly when they are missing or disagree (issue 12, "clock").

Under qemu-icount the TSC counts instructions and QEMU's clocks (PIT, PM
timer, HPET) run on the same virtual time, one nanosecond per instruction:
the true TSC rate there is exactly 1 GHz, and the calibration's own cost in
TSC ticks is its cost in instructions, a deterministic measure of a stall."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from booting import boot, done, errors, installed, of_type, shared_boot
from cleanroom_host.machines.emulators import BOCHS_IPS
from cleanroom_host.machines.machine import Machine

CHEAP = "bench=tsc runs=2"
ICOUNT_HZ = 10**9
AGREE = 0.005
AGREE_PPM = 5000  # arch/tsc.h's TSC_AGREE_PPM: AGREE in parts per million
# The whole calibration: three 10 ms windows, 3e7 instructions; a stall (the
# old PIT loop on a PIT that does not count) was 18 s. 1e8 = 0.1 s of
# emulated time.
MAX_COST = 10**8
SOURCES = ("hpet", "pmtimer", "pit", "cpuid15", "cpuid16")


def machine_args(*args: str) -> list[str]:
    return [f"--qemu-arg={a}" for a in args]


def tsc_of(res: dict[str, Any]) -> dict[str, Any]:
    recs = of_type(res, "tsc")
    assert len(recs) == 1
    return recs[0]


def assert_right_or_plainly_unknown(res: dict[str, Any], true_hz: int) -> dict[str, Any]:
    """The figure labelled good is within 0.5 % of the truth; or hz is 0 and an error says so."""
    tsc = tsc_of(res)
    assert set(tsc["sources"]) == set(SOURCES)
    if tsc["hz"] == 0:
        assert tsc["method"] == "none"
        assert errors(res, "tsc_uncalibrated"), "hz 0 without a plain statement"
    else:
        assert abs(tsc["hz"] - true_hz) <= AGREE * true_hz, tsc
        assert tsc["sources"][tsc["method"]] == tsc["hz"]
        assert not errors(res, "tsc_uncalibrated")
    for name, hz in tsc["sources"].items():
        if hz is None:
            assert tsc["why"][name], f"{name} absent without a reason"
        elif name != "cpuid16":  # nominal, not measured
            assert abs(hz - true_hz) <= AGREE * true_hz, f"{name} figure {hz} is wrong"
    return tsc


# (QEMU arguments, the sources that must give a figure, the ones that must not)
CONFIGS = {
    "default": ([], {"hpet", "pmtimer", "pit"}, set()),
    "pc-pit-off": (["-M", "pc,pit=off"], {"hpet", "pmtimer"}, {"pit"}),
    "q35-pit-off": (["-M", "q35,pit=off"], {"hpet", "pmtimer"}, {"pit"}),
    "hpet-off": (["-M", "pc,hpet=off"], {"pmtimer", "pit"}, {"hpet"}),
    "no-acpi": (["-no-acpi"], {"pit"}, {"hpet", "pmtimer"}),
    "nothing": (["-M", "pc,pit=off,acpi=off"], set(), {"hpet", "pmtimer", "pit"}),
}


@pytest.mark.parametrize("config", CONFIGS)
def test_icount_clock_is_right_or_plainly_unknown(boots_root: Path, config: str) -> None:
    args, present, absent = CONFIGS[config]
    rc, res = shared_boot(boots_root, "qemu-icount", CHEAP, *machine_args(*args))  # default: shared below
    assert rc == 0 and done(res)["status"] == "ok"
    tsc = assert_right_or_plainly_unknown(res, ICOUNT_HZ)
    assert_the_choice_follows_from_the_figures(res)
    assert {n for n in present if tsc["sources"][n]} == present
    assert all(tsc["sources"][n] is None for n in absent)
    assert tsc["cost"] < MAX_COST, f"the calibration took {tsc['cost']} instructions: a stall"
    if "pit" in absent and config != "no-acpi":
        assert tsc["why"]["pit"] == "its counter did not change"
    if len(present) >= 2:
        assert tsc["agree"] is True and tsc["disagree"] == []
        assert tsc["method"] == ("hpet" if "hpet" in present else "pmtimer")
    elif present:
        assert tsc["agree"] is False, "a single source cannot be confirmed"
    else:
        assert tsc["hz"] == 0
    if config == "nothing":
        assert "could not be calibrated" in Machine.of(res["records"], res.get("run")).trust


def test_forced_source_is_used(tmp_path: Path) -> None:
    rc, res = boot(tmp_path, "qemu-icount", CHEAP + " tsc=pmtimer")
    assert rc == 0
    tsc = assert_right_or_plainly_unknown(res, ICOUNT_HZ)
    assert tsc["method"] == "pmtimer" and tsc["forced"] is True and tsc["agree"] is True
    assert of_type(res, "config")[0]["cfg"]["tsc"] == "pmtimer"


def test_forced_absent_source_gives_hz_0_and_says_so(tmp_path: Path) -> None:
    rc, res = boot(tmp_path, "qemu-icount", CHEAP + " tsc=hpet", *machine_args("-M", "pc,hpet=off"))
    assert rc == 0
    tsc = tsc_of(res)
    assert tsc["hz"] == 0 and tsc["forced"] is True and tsc["sources"]["pmtimer"]
    assert errors(res, "tsc_uncalibrated")


def test_bad_tsc_token_names_the_accepted_values(tmp_path: Path) -> None:
    rc, res = boot(tmp_path, "qemu-icount", CHEAP + " tsc=rtc")
    assert rc == 2 and done(res)["status"] == "config"
    err = errors(res, "cmdline")[0]
    assert err["token"] == "tsc=rtc"
    assert err["accepted"].split("|") == ["auto", "hpet", "pmtimer", "pit", "cpuid15", "cpuid16"]
    assert not of_type(res, "tsc")


def ppm(a: int, b: int) -> int:
    """How far b is from a, in parts per million of a (lib/clockpick.c's clock_ppm, saturating)."""
    return 0xFFFFFFFF if a == 0 else min(abs(a - b) * 10**6 // a, 0xFFFFFFFF)


def assert_the_choice_follows_from_the_figures(res: dict[str, Any]) -> None:
    """The tsc record's choice, worked out again here from its own figures by the rules docs/PROTOCOL.md gives
    (lib/clockpick.c, tsc= not given): the closest pair of independent sources (CPUID 15h and 16h cannot
    confirm each other; ties keep the earlier pair in the order of preference), agreeing when within 0.5 %;
    the tolerance 4 x their distance, from 100 ppm to 0.5 % (0.5 % when no pair agrees); hz, the first source
    in the order within the tolerance of the pair, else (unconfirmed) the first figure, then agreeing when any
    independent figure is within 0.5 % of it; the sources further than the tolerance from hz disagree, and an
    unconfirmed hz with such a source is a tsc_disagree error."""
    tsc = tsc_of(res)
    assert not tsc["forced"]
    figures = {name: hz for name, hz in tsc["sources"].items() if hz}  # the record's order: the preference
    group = {name: "cpuid" if name.startswith("cpuid") else name for name in figures}
    pairs = [(ppm(figures[a], figures[b]), i, a, b) for i, (a, b) in enumerate(
        (a, b) for k, a in enumerate(figures) for b in list(figures)[k + 1:] if group[a] != group[b])]
    closest = min(pairs, default=None)
    agree = closest is not None and closest[0] <= AGREE_PPM
    tolerance = min(max(4 * closest[0], 100), AGREE_PPM) if agree else AGREE_PPM
    assert tsc["pair"] == ([closest[2], closest[3]] if closest else [])
    assert tsc["pair_ppm"] == (closest[0] if closest else 0) and tsc["tolerance_ppm"] == tolerance
    if agree:
        method = next(n for n, hz in figures.items() if ppm(figures[closest[2]], hz) <= tolerance)
    else:
        method = next(iter(figures), None)
        agree = any(ppm(figures[method], hz) <= AGREE_PPM for n, hz in figures.items() if group[n] != group[method])
    assert (tsc["method"], tsc["hz"]) == ((method, figures[method]) if method else ("none", 0))
    assert tsc["agree"] is agree
    disagree = [n for n, hz in figures.items() if method and ppm(figures[method], hz) > tolerance]
    assert tsc["disagree"] == disagree
    assert bool(errors(res, "tsc_disagree")) == (bool(method) and not agree and bool(disagree))


def test_tcg_calibration_follows_from_its_own_figures(tmp_path: Path) -> None:
    """Without -icount the TSC follows host time: its rate, and how closely the clocks agree on it, depend on
    the host's load, so no figure is asserted. What holds however the run went: the default machine's clocks
    give figures, and the choice follows from them by the rules (assert_the_choice_follows_from_the_figures)."""
    rc, res = boot(tmp_path, "qemu", CHEAP)
    assert rc == 0 and done(res)["status"] == "ok"
    tsc = tsc_of(res)
    assert len([n for n in ("hpet", "pmtimer", "pit") if tsc["sources"][n]]) >= 2 and tsc["hz"] > 0
    assert set(tsc["spread_ppm"]) == {n for n in ("hpet", "pmtimer", "pit") if tsc["sources"][n]}
    assert_the_choice_follows_from_the_figures(res)


def test_bochs_calibrates_to_its_instruction_rate(boots_root: Path) -> None:
    """Bochs' TSC counts instructions and its clocks run at BOCHS_IPS of them a second (the self-test
    boot test_boot.py reads too: the calibration is the same in every run)."""
    installed("bochs")
    installed("grub-mkrescue")
    rc, res = shared_boot(boots_root, "bochs", "suite=selftest")
    assert rc == 0
    tsc = assert_right_or_plainly_unknown(res, BOCHS_IPS)
    assert tsc["hz"] and tsc["agree"] is True


@pytest.mark.parametrize("cpu", ["phenom", "EPYC"])
def test_amd_lfence_is_checked(tmp_path: Path, cpu: str) -> None:
    """QEMU TCG keeps no DE_CFG bit: the write is caught or does not stick, so
    lfence is unverified and timed regions serialise with cpuid."""
    rc, res = boot(tmp_path, "qemu-icount", CHEAP, "--cpu", cpu)
    assert rc == 0 and not of_type(res, "fault")
    tsc = tsc_of(res)
    assert tsc["lfence"] == "unverified" and tsc["serialize"] == "cpuid"
    assert_right_or_plainly_unknown(res, ICOUNT_HZ)


def test_intel_lfence_is_architectural(boots_root: Path) -> None:
    rc, res = shared_boot(boots_root, "qemu-icount", CHEAP)  # the default clock test's boot
    tsc = tsc_of(res)
    assert of_type(res, "cpu")[0]["vendor"] == "GenuineIntel"
    assert tsc["lfence"] == "architectural" and tsc["serialize"] in ("lfence", "rdtscp")
    assert isinstance(tsc["invariant"], bool)


def _tsc_record(**kw: Any) -> dict[str, Any]:
    rec = {"t": "tsc", "hz": 2_000_000_000, "method": "pmtimer", "serialize": "lfence", "overhead": 30,
           "sources": {"hpet": None, "pmtimer": 2_000_000_000, "pit": 4040, "cpuid15": None, "cpuid16": None},
           "agree": False, "disagree": ["pit"], "forced": False}
    rec.update(kw)
    return rec


def test_report_warns_of_disagreeing_sources() -> None:
    m = Machine.of([_tsc_record()])
    assert m.tsc_warning and "disagree by more than 0.5 %" in m.trust and "pit 4040 Hz" in m.trust


def test_report_shows_sources_and_choice() -> None:
    rec = _tsc_record(sources={"hpet": 2_000_100_000, "pmtimer": 2_000_000_000, "pit": None, "cpuid15": None,
                               "cpuid16": None}, agree=True, disagree=[], method="hpet", hz=2_000_100_000)
    m = Machine.of([rec])
    assert m.tsc_warning is None
    assert "TSC from hpet, confirmed within 0.5 %" in m.trust
    assert "hpet 2.0001 GHz (chosen), pmtimer 2.0000 GHz; none from pit, cpuid15, cpuid16" in m.trust


def test_report_warns_of_an_uncalibrated_tsc() -> None:
    rec = _tsc_record(hz=0, method="none", sources={n: None for n in SOURCES}, disagree=[])
    assert "could not be calibrated" in Machine.of([rec]).trust


def test_report_of_an_old_log_is_unchanged() -> None:
    rec = {"t": "tsc", "hz": 2_000_000_000, "method": "pit", "serialize": "lfence", "overhead": 30}
    m = Machine.of([rec])
    assert m.tsc_sources is None and m.tsc_warning is None and "TSC" not in m.trust
