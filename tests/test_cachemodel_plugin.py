"""The cache/TLB model plugin (tools/cachemodel, docs/MODEL.md): its core
on constructed access streams (compiled here with the host gcc), and the
plugin itself loaded into qemu-icount on a real boot. Joining the samples
into result records is the host tool's; the end-to-end figures are tested
with `--emulator qemu-model`."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from booting import KERNEL, REPO, TOOL_SAFETY_NET_S, boot, built, done, installed, of_type
from cleanroom_host.machines import emulators

SOURCES = REPO / "tools" / "cachemodel"
PLUGIN = REPO / "build" / "cachemodel" / "libcachemodel.so"
# Outside the 128 MiB guest: nothing stores there (a plugin given it sees no marks).
NO_MAILBOX = 0x7FF00000


def model_mailbox() -> int:
    """The kernel's model_mailbox address, as binutils' nm reads it (arch/modelmark.c defines it)."""
    out = subprocess.run([installed("i686-linux-gnu-nm"), str(built(KERNEL, "all"))], capture_output=True,
                         text=True, check=True, timeout=TOOL_SAFETY_NET_S).stdout
    found = [int(parts[0], 16) for parts in map(str.split, out.splitlines())
             if len(parts) == 3 and parts[2] == "model_mailbox"]
    assert len(found) == 1, f"{KERNEL} has {len(found)} model_mailbox symbols, not one: the marks are missing"
    return found[0]


def model_boot(tmp_path: Path, cmdline: str, mailbox: int, model: str = "prestonia") -> tuple[
        int, dict[str, Any], list[dict[str, Any]]]:
    """A qemu-icount boot with the plugin loaded; (status, results.json, the plugin's lines)."""
    built(PLUGIN, "all")
    out = tmp_path / "model.jsonl"
    rc, res = boot(tmp_path, "qemu-icount", cmdline, "--qemu-arg=-plugin",
                   f"--qemu-arg={PLUGIN},mailbox={mailbox:#x},out={out},model={model}")
    assert out.exists(), "the plugin wrote no output file"
    return rc, res, [json.loads(line) for line in out.read_text().splitlines()]


def test_model_core_on_constructed_streams(tmp_path: Path) -> None:
    """LRU eviction order, working sets that fit and that thrash, TLB
    flushes by CR3 load against global entries, invlpg, 4 KiB and 4 MiB
    walks and their reads, marks and per-sample counts."""
    binary = tmp_path / "test_model"
    subprocess.run(["gcc", "-std=c11", "-O1", "-Wall", "-Wextra", "-Werror", "-o", str(binary),
                    str(SOURCES / "test_model.c"), str(SOURCES / "model.c")],
                   check=True, timeout=TOOL_SAFETY_NET_S)
    proc = subprocess.run([str(binary)], capture_output=True, text=True, timeout=TOOL_SAFETY_NET_S)
    summary = proc.stdout.strip().splitlines()[-1]
    assert proc.returncode == 0 and summary.startswith("ok:"), proc.stdout
    assert int(summary.split()[1]) >= 70, summary


def test_plugin_loads_and_counts_a_selftest_boot(tmp_path: Path) -> None:
    rc, res, lines = model_boot(tmp_path, "suite=selftest", model_mailbox())
    assert rc == 0 and done(res)["status"] == "ok"
    first, last = lines[0], lines[-1]
    assert first["t"] == "model" and first["version"] == 1 and first["preset"] == "prestonia"
    assert first["l1d"] == {"size": 8192, "ways": 4, "line": 64, "latency": 2}
    assert first["l2"]["size"] == 512 * 1024 and first["l3"] is None
    assert last["t"] == "end" and last["accesses"] > 1_000_000
    assert all(line["t"] == "sample" for line in lines[1:-1])
    # the kernel marks its paging switches and page directories, every sample has its end
    assert last["marks"] > 0 and last["unmatched"] == 0 and last["samples"] == len(lines) - 2


def test_plugin_counts_what_the_tsc_counts(tmp_path: Path) -> None:
    """Under icount the TSC counts instructions: each sample's modelled
    instructions (first to last rdtsc of the timed region) equal the TSC
    figure of the same sample exactly."""
    rc, res, lines = model_boot(tmp_path, "bench=tsc runs=2 raw=1", model_mailbox())
    assert rc == 0 and done(res)["status"] == "ok"
    results = of_type(res, "result")
    samples = [line for line in lines if line["t"] == "sample"]
    assert results and lines[-1]["unmatched"] == 0
    by_case: dict[int, list[dict[str, Any]]] = {}
    for s in samples:
        by_case.setdefault(s["case"], []).append(s)
    for number, r in enumerate(results):
        own = sorted(by_case[r.get("case_no", number)], key=lambda s: s["sample"])
        assert [s["sample"] for s in own] == list(range(r["n"])), r["case"]
        assert [s["instructions"] for s in own] == [t + r["overhead"] for t in r["samples"]], r["case"]
        assert all(s["cycles"] == s["instructions"] for s in own if s["l1d_misses"] == s["tlb_misses"] == 0)


def test_a_bad_model_stops_qemu_with_the_accepted_names(tmp_path: Path) -> None:
    kernel = built(KERNEL, "all")
    proc = subprocess.run(["qemu-system-i386", "-display", "none", *emulators.ICOUNT_ARGS, "-kernel", str(kernel),
                           "-plugin", f"{PLUGIN},mailbox={NO_MAILBOX:#x},out={tmp_path / 'x.jsonl'},model=prescott"],
                          capture_output=True, text=True, timeout=TOOL_SAFETY_NET_S, stdin=subprocess.DEVNULL)
    assert proc.returncode != 0
    assert "prestonia, modern or custom:SPEC" in proc.stderr
