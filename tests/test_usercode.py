"""The user's snippet (bench asm, docs/USERCODE.md): assembled on the host, handed to the kernel as a module,
unrolled n and 2n times and subtracted; per copy with decimals; and every way it can go wrong named, with what
was measured before it kept. Under qemu-icount the TSC counts instructions, so a copy's cost is exact."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from booting import HOSTED, KERNEL, boot, built, done, errors, of_type, tool_main
from cleanroom_host.machines import defaults, usercode

TEN = ("nop; mov eax, 1; add eax, ebx; xor ecx, ecx; inc edx; lea esi, [esi+4]; shl eax, 1; sub ebx, eax; "
       "mov [edi], eax; test eax, eax")


def asm_boot(tmp_path: Path, emulator: str, *argv: str, cmdline: str | None = None) -> tuple[int, dict[str, Any], str]:
    """`run --emulator E ARGV`: (status, results.json, stderr)."""
    out = tmp_path / emulator
    extra = ["--cmdline", cmdline] if cmdline else []
    rc, _stdout, stderr = tool_main("run", "--emulator", emulator, *argv, *extra, "--out", str(out), "--quiet")
    doc = json.loads((out / "results.json").read_text()) if (out / "results.json").exists() else {}
    return rc, doc, stderr


def asm_results(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return [r for r in of_type(doc, "result") if r["bench"] == "asm"]


@pytest.mark.usefixtures("kernel_elf")
def test_a_nop_is_one_instruction_a_copy_in_both_paging_modes(tmp_path: Path) -> None:
    rc, doc, err = asm_boot(tmp_path, "qemu-icount", "--asm", "nop")
    assert rc == 0, err
    rs = asm_results(doc)
    assert [r["params"]["paging"] for r in rs] == ["off", "on"]
    fig = defaults.load()
    for r in rs:
        assert r["case"] == "as_written" and r["med"] == r["min"] == r["max"] == 1.0, r
        assert r["divided"] == "host" and "sums" not in r and r["per"] == r["params"]["copies"] * r["params"]["reps"]
        assert r["params"]["copies"] == fig.number("CR_DEF_ASM_COPIES")
        assert r["params"]["reps"] == fig.number("CR_DEF_ASM_REPS")
    # the module the kernel got, and the source behind it, are kept with the results
    assert (tmp_path / "qemu-icount" / usercode.MODULE_FILE).is_file()
    assert doc["run"]["user_code"]["snippet"]["body"] == ["nop"]
    # the report says it per copy, with the decimals the host's division kept (reports/generic.py)
    rc, text, err = tool_main("report", str(tmp_path / "qemu-icount"), "--no-plots")
    assert rc == 0 and "asm, instructions per operation, paging off and on/4k: as_written 1.00" in text, text + err


@pytest.mark.usefixtures("kernel_elf")
def test_ten_instructions_read_ten_and_copies_move_nothing(tmp_path: Path) -> None:
    rc, doc, err = asm_boot(tmp_path, "qemu-icount", "--asm", TEN, cmdline="bench=asm copies=7 reps=3 paging=off")
    assert rc == 0, err
    (r,) = asm_results(doc)
    assert r["med"] == r["min"] == r["max"] == 10.0 and r["params"]["copies"] == 7 and r["params"]["reps"] == 3


@pytest.mark.usefixtures("kernel_elf")
def test_r_gives_a_chain_and_independent_copies(tmp_path: Path) -> None:
    rc, doc, err = asm_boot(tmp_path, "qemu-icount", "--asm", "imul {r}, {r}", "--asm-setup", "mov {r}, 3",
                            cmdline="bench=asm paging=off runs=2")
    assert rc == 0, err
    rs = {r["case"]: r for r in asm_results(doc)}
    assert set(rs) == {"chain", "independent"}
    assert rs["chain"]["params"]["registers"] == "eax"
    assert rs["independent"]["params"]["registers"] == " ".join(usercode.REGISTERS)
    assert all(r["med"] == 1.0 for r in rs.values())  # one instruction a copy, whichever register
    assert doc["run"]["user_code"]["snippet"]["setup"] == [f"mov {reg}, 3" for reg in usercode.REGISTERS]


def test_nasm_errors_and_absolute_addresses_are_refused_before_booting(tmp_path: Path) -> None:
    rc, _out, err = tool_main("run", "--emulator", "qemu-icount", "--asm", "nop; imul eax, eax, eax, eax",
                              "--out", str(tmp_path / "a"), "--quiet")
    assert rc == 5 and "--asm, line 2 (`imul eax, eax, eax, eax`)" in err and "invalid combination" in err, err
    assert not (tmp_path / "a" / "serial.log").exists()
    rc, _out, err = tool_main("run", "--emulator", "qemu-icount", "--asm", "here: mov eax, [here]",
                              "--out", str(tmp_path / "b"), "--quiet")
    assert rc == 5 and "line 1" in err and "absolute address" in err, err
    rc, _out, err = tool_main("run", "--emulator", "qemu-icount", "--asm-setup", "nop", "--out", str(tmp_path / "c"))
    assert rc == 5 and "--asm-setup needs --asm" in err, err


@pytest.mark.usefixtures("kernel_elf")
@pytest.mark.parametrize("code, paging, vector, line", [
    ("nop; ud2", "off", 6, "line 2: `ud2`"),
    ("mov eax, [0xfffff000]", "on", 14, "line 1: `mov eax, [0xfffff000]`"),  # paging on: nothing mapped there
    ("xor ecx, ecx; div ecx", "off", 0, "line 2: `div ecx`"),
])
def test_a_fault_names_its_line_and_keeps_what_came_before(tmp_path: Path, code: str, paging: str, vector: int,
                                                            line: str) -> None:
    rc, doc, err = asm_boot(tmp_path, "qemu-icount", "--asm", code, cmdline=f"bench=tsc,asm paging={paging} runs=2")
    assert rc == 3 and done(doc)["status"] == "fault", err
    assert {r["bench"] for r in of_type(doc, "result")} == {"tsc"}  # measured before the fault: kept
    (fault,) = of_type(doc, "fault")
    assert fault["vector"] == vector and fault["bench"] == "asm" and fault["user"]["part"] == "body"
    assert "in the user's code 'snippet', copy 0 of its body" in err and line in err, err


@pytest.mark.usefixtures("kernel_elf")
def test_a_snippet_that_never_returns_is_a_named_hang(tmp_path: Path) -> None:
    rc, doc, err = asm_boot(tmp_path, "qemu-icount", "--asm", "jmp $", "--silence", "2",
                            cmdline="bench=asm paging=off runs=2")
    assert rc == 4 and not of_type(doc, "done") and of_type(doc, "config"), err  # what came before: kept
    assert "the user's code 'snippet' was running (bench asm, case as_written) and never came back" in err, err


@pytest.mark.usefixtures("kernel_elf")
@pytest.mark.parametrize("code, named", [("add esp, 4", "ESP"), ("std", "DF"), ("mov ebp, 0", "EBP"),
                                         ("mov ax, 0; mov ds, ax", "a segment register")])
def test_a_snippet_that_breaks_the_harness_state_is_named(tmp_path: Path, code: str, named: str) -> None:
    rc, doc, err = asm_boot(tmp_path, "qemu-icount", "--asm", code, cmdline="bench=tsc,asm paging=off runs=2")
    assert rc == 1 and done(doc)["status"] == "fail", err
    (e,) = errors(doc, "asm_state")
    assert f"changed {named}" in e["msg"] and e["user"] == "snippet", e
    assert not asm_results(doc) and any(s["bench"] == "asm" for s in of_type(doc, "skip"))
    assert {r["bench"] for r in of_type(doc, "result")} == {"tsc"}


@pytest.mark.usefixtures("kernel_elf")
def test_the_scratch_buffer_is_as_large_as_the_default_says(tmp_path: Path) -> None:
    last = defaults.load().number("CR_DEF_ASM_SCRATCH") - 4
    rc, doc, err = asm_boot(tmp_path, "qemu-icount", "--asm", f"mov dword [edi + {last}], 1; mov eax, [esi + {last}]",
                            cmdline="bench=asm paging=on runs=2")
    assert rc == 0 and asm_results(doc)[0]["med"] == 2.0, err


@pytest.mark.usefixtures("kernel_elf")
def test_an_ab_of_two_snippets_is_their_difference(tmp_path: Path) -> None:
    out = tmp_path / "ab"
    rc, stdout, err = tool_main("ab", "--emulator", "qemu-icount", "--asm", "nop", "--b-asm", "nop; nop",
                                "--cmdline", "bench=asm paging=off runs=2", "--out", str(out), "--quiet")
    assert rc == 0, err
    rc, check_out, _err = tool_main("check", str(out))
    assert rc == 6 and "asm as_written" in check_out and "1 -> 2" in check_out, check_out


@pytest.mark.usefixtures("kernel_elf")
def test_a_stick_carries_the_snippet(tmp_path: Path) -> None:
    """`cleanroom stick` writes the ISO a USB stick takes (GRUB's module2 carries the snippet); booted as it is, by
    its own menu, under SeaBIOS (the UEFI path is the same grub.cfg: docs/USERCODE.md)."""
    stick = tmp_path / "stick.iso"
    rc, stdout, err = tool_main("stick", "--asm", "nop", "--cmdline", "bench=asm paging=off runs=2", "--out", str(stick))
    assert rc == 0 and "snippet as modules" in stdout, err
    rc, doc, err = asm_boot(tmp_path, "iso", "--iso", str(stick))
    assert rc == 0, err
    (r,) = asm_results(doc)
    assert r["case"] == "as_written" and r["n"] == 2  # TCG: host time, so no figure to hold it to
    rc, _stdout, err = tool_main("stick", "--out", str(tmp_path / "none.iso"))
    assert rc == 5 and "make iso" in err, err


@pytest.mark.usefixtures("kernel_elf")
def test_qemu_model_counts_the_same(tmp_path: Path) -> None:
    rc, doc, err = asm_boot(tmp_path, "qemu-model", "--asm", TEN, cmdline="bench=asm paging=off runs=2")
    assert rc == 0, err
    assert asm_results(doc)[0]["med"] == 10.0


def test_hosted_an_imul_chain_is_slower_than_an_add_chain(tmp_path: Path) -> None:
    """Hosted, on this machine's CPU: an imul's latency is 3 cycles or more on every x86 since the Pentium, an
    add's 1 (Agner Fog's tables; docs/RESULTS.md has this machine's readings): a shape, not a figure."""
    built(HOSTED, "hosted")
    meds = {}
    for name, code in (("imul", "imul eax, eax"), ("add", "add eax, eax")):
        rc, doc, err = asm_boot(tmp_path / name, "hosted", "--asm", code, cmdline="bench=asm runs=11")
        assert rc == 0, err
        (r,) = asm_results(doc)
        assert r["params"]["paging"] == "host" and isinstance(r["med"], float)
        meds[name] = r["med"]
    assert meds["imul"] > 1.5 * meds["add"] > 0, meds


def test_the_kernel_refuses_a_module_that_is_not_a_snippet(tmp_path: Path) -> None:
    """bench asm without a snippet says why it skips (a module of the wrong kind is no snippet either)."""
    built(KERNEL, "all")
    rc, doc = boot(tmp_path, "qemu-icount", "bench=asm paging=off")
    assert rc == 0
    (skip,) = [s for s in of_type(doc, "skip") if s["bench"] == "asm"]
    assert "no snippet" in skip["why"] and "--asm" in skip["why"]
