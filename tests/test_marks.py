"""The kernel's side of the cache and TLB model (docs/MODEL.md): the
mailbox the plugin watches, the case numbers that join the model's samples
to their result records, and the rule that every CR3 load, invlpg and
page-directory write is announced. The encoding of the marks themselves is
tests/unit/test_modelmark.c."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from booting import KERNEL, REPO, TOOL_SAFETY_NET_S, boot, done, of_type

# Sets of several cases measured in turn (workset: single and multi, paging
# off and on, at each size) next to cases measured alone (tsc).
CMDLINE = "bench=tsc,workset paging=both sizes=0,4K runs=2 warmup=1"


def symbols(elf: Path) -> list[tuple[int, int, str, str]]:
    """(address, size, type, name) of every sized symbol, by address."""
    out = subprocess.run(["nm", "-n", "-S", str(elf)], capture_output=True, text=True, check=True,
                         timeout=TOOL_SAFETY_NET_S).stdout
    rows = []
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 4:
            rows.append((int(parts[0], 16), int(parts[1], 16), parts[2], parts[3]))
    return rows


@pytest.mark.usefixtures("kernel_elf")
def test_mailbox_is_a_page_of_kernel_bss_of_its_own() -> None:
    syms = symbols(KERNEL)
    box = [s for s in syms if s[3] == "model_mailbox"]
    assert len(box) == 1, "exactly one global model_mailbox"
    addr, size, kind, _ = box[0]
    assert kind == "B", "a global in .bss (zeroed, supervisor-only kernel memory)"
    assert addr % 4096 == 0 and size == 4096
    others = [s for s in syms if s[3] != "model_mailbox" and s[0] < addr + 4096 and s[0] + s[1] > addr]
    assert not others, f"symbols share the mailbox's page: {others}"


def check_case_numbers(res: dict[str, Any]) -> list[dict[str, Any]]:
    results = of_type(res, "result")
    assert results
    numbers = [r["case_no"] for r in results]
    # in the order measuring started, which is the order the records come
    # in; no set was refused, so no number is missing
    assert numbers == list(range(len(results))), numbers
    return results


@pytest.mark.usefixtures("kernel_elf")
def test_every_result_carries_its_case_number(tmp_path: Path) -> None:
    rc, res = boot(tmp_path, "qemu-icount", CMDLINE)
    assert rc == 0 and done(res)["status"] == "ok"
    results = check_case_numbers(res)
    work = [r for r in results if r["bench"] == "workset"]
    # a set of four (single, multi; paging off, on) per size: consecutive numbers
    assert len(work) == 8
    assert [(r["params"]["paging"], r["case"]) for r in work[:4]] == [
        ("off", "single"), ("off", "multi"), ("on", "single"), ("on", "multi")]
    assert [r["case_no"] for r in work] == list(range(work[0]["case_no"], work[0]["case_no"] + 8))


@pytest.mark.usefixtures("hosted_elf")
def test_hosted_results_carry_case_numbers_too(tmp_path: Path) -> None:
    rc, res = boot(tmp_path, "hosted", "bench=tsc runs=2")
    assert rc == 0 and done(res)["status"] == "ok"
    check_case_numbers(res)


# A raw CR3 load or invlpg, and a store to a page-directory slot.
RAW_TLB_CHANGE = re.compile(r"\bwrite_cr3\s*\(|(?<![\w])invlpg\s*\(")
RAW_PDE_WRITE = re.compile(r"\bdir(_4k|_4m)?\s*\[[^]]*\]\s*[|&^]?=[^=]|(?:^|[;{])\s*\*pde\s*[|&^]?=[^=]")


def kernel_sources() -> list[Path]:
    return [p for d in ("lib", "arch", "kernel", "runtime", "bench", "app") for p in sorted((REPO / d).glob("*.c"))]


def test_every_translation_change_is_announced() -> None:
    """CR3 loads, invlpg and page-directory writes go through the helpers
    that mark them (arch/modelmark.h); the paging switch, which marks
    PAGING_ON itself, is the one raw CR3 load."""
    raw = []
    for p in kernel_sources():
        rel = str(p.relative_to(REPO))
        for n, line in enumerate(p.read_text().splitlines(), 1):
            code = line.split("/*")[0]
            if RAW_TLB_CHANGE.search(code) and not (
                    rel == "arch/paging.c" and "write_cr3((uint32_t)dir)" in code):
                raw.append(f"{rel}:{n}: {line.strip()}")
            if RAW_PDE_WRITE.search(code):
                raw.append(f"{rel}:{n}: {line.strip()}")
    assert not raw, "unannounced (use cr3_load, tlb_invalidate, pde_write):\n" + "\n".join(raw)


def test_announcement_check_finds_what_it_must() -> None:
    """The patterns above catch the forms the kernel used before the marks."""
    assert RAW_TLB_CHANGE.search("    write_cr3(cr3);") and RAW_TLB_CHANGE.search("        invlpg(va);")
    assert not RAW_TLB_CHANGE.search("static int64_t run_invlpg(void *arg)")
    for line in ("as->dir[pde] = kernel[pde];", "as->dir[0] |= PTE_U;", "dir_4m[0] = dir_4k[0];", "*pde = t | USER_RW;"):
        assert RAW_PDE_WRITE.search(line), line
    assert not RAW_PDE_WRITE.search("uint32_t e = as->dir[pde];") and not RAW_PDE_WRITE.search("if (*pde == 0)")
    assert not RAW_PDE_WRITE.search("    uint32_t *pde = &as->dir[PDE_OF(va)];")
