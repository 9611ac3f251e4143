"""The host side of the cache/TLB model (issue 13): the mailbox from the ELF's symbol table,
`run --emulator qemu-model` (with a fake QEMU), the join of model.jsonl into the results, and the
report's modelled figures. The plugin and the kernel's marks have their own tests."""

from __future__ import annotations

import csv
import json
import subprocess
import zlib
from pathlib import Path
from typing import Any

import pytest

from booting import boot, installed, tool_proc
from cleanroom_host.records import model
from cleanroom_host.reports import frame as report
from cleanroom_host.reports.context import Run
from cleanroom_host.reports.derive import derive, pick
from cleanroom_host.records.results import ResultSet

PRESTONIA = {"t": "model", "version": 1, "preset": "prestonia",
             "l1d": {"size": 8192, "ways": 4, "line": 64, "latency": 2},
             "l2": {"size": 524288, "ways": 8, "line": 64, "latency": 7}, "l3": None,
             "dtlb4k": {"entries": 64, "ways": 64}, "dtlb4m": {"entries": 64, "ways": 64},
             "cpi": 1.0, "mem_latency": 200, "walk_cycles": 0, "mailbox": "0x105000"}


def frame(obj: dict[str, Any]) -> bytes:
    js = json.dumps(obj, separators=(",", ":")).encode()
    return b"@cr1 " + js + b" ~" + format(zlib.crc32(js), "08x").encode() + b"\r\n"


def sample(case: int, index: int, cycles: int, **figures: int) -> dict[str, Any]:
    base = {"instructions": cycles // 2, "loads": 10, "stores": 20, "l1d_misses": 3, "l2_misses": 1,
            "l3_misses": 0, "tlb_misses": 2, "walk_reads": 2}
    return {"t": "sample", "case": case, "sample": index, **base, **figures, "cycles": cycles}


def model_lines(samples: list[dict[str, Any]], unmatched: int = 0) -> str:
    end = {"t": "end", "samples": len(samples), "unmatched": unmatched, "unknown_pde_walks": 0, "marks": 99,
           "accesses": 12345}
    return "".join(json.dumps(x) + "\n" for x in [PRESTONIA, *samples, end])


# --- the mailbox: ELF symbol lookup --------------------------------------------

def nm_value(elf: Path, name: str) -> int | None:
    out = subprocess.run(["i686-linux-gnu-nm", str(elf)], capture_output=True, text=True, check=True, timeout=600)
    for line in out.stdout.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[2] == name:
            return int(parts[0], 16)
    return None


@pytest.fixture(scope="module")
def mailbox_elf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny ELF32 with a 4096-aligned model_mailbox in .bss, made with the cross toolchain."""
    installed("i686-linux-gnu-gcc")
    installed("i686-linux-gnu-ld")
    d = tmp_path_factory.mktemp("elf")
    (d / "mb.c").write_text("unsigned char model_mailbox[4096] __attribute__((aligned(4096)));\n"
                            "int before_it = 7;\n"
                            "void _start(void) { model_mailbox[0] = 1; }\n")
    subprocess.run(["i686-linux-gnu-gcc", "-c", "-ffreestanding", "-fno-pic", "-O1", "-o", str(d / "mb.o"),
                    str(d / "mb.c")], check=True, timeout=600)
    subprocess.run(["i686-linux-gnu-ld", "-m", "elf_i386", "-Ttext=0x100000", "-e", "_start", "-o",
                    str(d / "mb.elf"), str(d / "mb.o")], check=True, timeout=600)
    return d / "mb.elf"


def test_elf_symbol_finds_the_mailbox(mailbox_elf: Path) -> None:
    addr = model.mailbox_address(mailbox_elf)
    assert addr == nm_value(mailbox_elf, "model_mailbox") and addr % 4096 == 0 and addr >= 0x100000
    assert model.elf_symbol(mailbox_elf, "before_it") == nm_value(mailbox_elf, "before_it")
    assert model.elf_symbol(mailbox_elf, "no_such_symbol") is None


def objcopy(elf: Path, out: Path, *args: str) -> Path:
    subprocess.run(["i686-linux-gnu-objcopy", *args, str(elf), str(out)], check=True, timeout=600)
    return out


def test_elf_symbol_errors_are_plain(tmp_path: Path, mailbox_elf: Path) -> None:
    junk = tmp_path / "junk.elf"
    junk.write_bytes(b"\x7fELF fake")
    with pytest.raises(model.ModelError, match=f"^{junk} is not an ELF file"):
        model.mailbox_address(junk)
    cut = tmp_path / "cut.elf"
    cut.write_bytes(mailbox_elf.read_bytes()[:100])  # the header, not the sections it points to
    with pytest.raises(model.ModelError, match=f"^{cut} is not an ELF file, or a damaged one"):
        model.mailbox_address(cut)
    with pytest.raises(model.ModelError, match="cannot read .*No such file"):
        model.mailbox_address(tmp_path / "absent.elf")
    with pytest.raises(model.ModelError, match="no symbol table"):
        model.mailbox_address(objcopy(mailbox_elf, tmp_path / "stripped.elf", "--strip-all"))
    with pytest.raises(model.ModelError, match="is a 64-bit ELF file, not a 32-bit one"):
        model.mailbox_address(objcopy(mailbox_elf, tmp_path / "wide.elf", "-O", "elf64-x86-64"))


def test_kernel_mailbox(kernel_elf: Path) -> None:
    """The real kernel has the marks (arch/modelmark.c): the symbol is where nm says, page-aligned."""
    addr = model.mailbox_address(kernel_elf)
    assert addr == nm_value(kernel_elf, model.MAILBOX_SYMBOL) and addr % 4096 == 0


# --- the join ------------------------------------------------------------------------

def results_with_cases() -> list[dict[str, Any]]:
    return [
        {"t": "result", "bench": "tsc", "case": "rdtsc", "params": {}, "n": 3, "min": 3, "med": 3, "max": 3,
         "per": 1, "case_no": 0},
        # per 4: each sample's figure / 4 toward zero; n = 4: the lower median is the 2nd of 4
        {"t": "result", "bench": "ctxsw", "case": "pushad", "params": {"paging": "off"}, "n": 4, "min": 9,
         "med": 10, "max": 11, "per": 4, "case_no": 1},
        {"t": "skip", "what": "workset size=1G", "why": "does not fit"},
        {"t": "result", "bench": "old", "case": "no_case_no", "n": 3, "min": 1, "med": 1, "max": 1, "per": 1},
    ]


def test_join_divides_by_per_and_takes_the_lower_median() -> None:
    recs = results_with_cases()
    out = model.ModelOutput(PRESTONIA, [sample(0, i, 30 + i) for i in range(3)]
                            + [sample(1, i, c) for i, c in enumerate((403, 399, 43, 1000))], {"t": "end"})
    joined = model.join(recs, out)
    assert joined.ok, joined.problems
    assert recs[0]["model"]["cycles"] == {"min": 30, "med": 31, "max": 32}
    # 403/4 = 100, 399/4 = 99, 43/4 = 10, 1000/4 = 250 -> sorted 10 99 100 250, lower median 99
    assert recs[1]["model"]["cycles"] == {"min": 10, "med": 99, "max": 250}
    assert recs[1]["model"]["l1d_misses"] == {"min": 0, "med": 0, "max": 0}  # 3 / 4 toward zero
    assert recs[1]["model"]["instructions"]["max"] == 500 // 4
    assert "model" not in recs[3] and "model" not in recs[2]  # no case_no: untouched
    assert joined.run["preset"] == "prestonia" and joined.run["samples"] == 7 and joined.run["status"] == "ok"
    assert model.per_operation(-7, 2) == -3  # toward zero, as the kernel divides


def test_join_mismatch_names_the_case() -> None:
    recs = results_with_cases()
    samples = [sample(0, i, 30) for i in range(3)] + [sample(1, i, 400) for i in (0, 1, 3)] + [sample(5, 0, 1)]
    joined = model.join(recs, model.ModelOutput(PRESTONIA, samples, {"t": "end"}))
    assert not joined.ok and joined.run["status"] == "mismatch"
    text = "\n".join(joined.problems)
    assert "case 1 (ctxsw pushad paging=off): 1 of its 4 samples missing (sample 2)" in text
    assert "samples of case 5, which no result record has" in text
    assert "model" not in recs[1] and "model" in recs[0]


# --- run --emulator qemu-model, with a fake QEMU -----------------------------------------

def play_log(cases: list[dict[str, Any]]) -> bytes:
    body = [{"t": "hello", "proto": 1, "kernel": "0.1.0", "cmdline": "bench=tsc exit=auto"},
            {"t": "tsc", "hz": 1000000000, "method": "pit", "serialize": "lfence", "overhead": 0}, *cases]
    recs = [dict(r, seq=i) for i, r in enumerate(body)]
    recs.append({"t": "done", "seq": len(recs), "status": "ok", "records": len(recs), "passed": 0, "failed": 0})
    return b"".join(frame(r) for r in recs)


@pytest.fixture
def fake_model(tmp_path: Path, fixtures_dir: Path, mailbox_elf: Path) -> dict[str, Any]:
    log = tmp_path / "play.log"
    log.write_bytes(play_log(results_with_cases()[:2]))
    plugin = tmp_path / "libcachemodel.so"
    plugin.write_bytes(b"not loaded by the fake")
    jsonl = tmp_path / "plugin-output.jsonl"
    jsonl.write_text(model_lines([sample(0, i, 30) for i in range(3)] + [sample(1, i, 400 + i) for i in range(4)]))
    info = tmp_path / "info.json"
    env = {"FAKE_LOG": str(log), "FAKE_INFO": str(info), "FAKE_MODEL": str(jsonl),
           "CLEANROOM_RESULTS": str(tmp_path / "results")}
    args = ["run", "--emulator", "qemu-model", "--kernel", str(mailbox_elf), "--plugin", str(plugin),
            "--emulator-binary", str(fixtures_dir / "fake_emulator.py"), "--cmdline", "bench=tsc"]
    return {"args": args, "env": env, "info": info, "jsonl": jsonl, "plugin": plugin, "elf": mailbox_elf}


def test_run_qemu_model_joins_the_samples(tmp_path: Path, fake_model: dict[str, Any]) -> None:
    out = tmp_path / "o"
    p = tool_proc(*fake_model["args"], "--model", "custom:l1d=8K/4/64/2,l2=2M/8/64/7",
             "--out", str(out), env=fake_model["env"])
    assert p.returncode == 0, p.stdout + p.stderr
    argv = json.loads(fake_model["info"].read_text())["argv"]
    mailbox = model.mailbox_address(fake_model["elf"])
    assert argv[argv.index("-icount") + 1] == "shift=0,sleep=off"  # emulators.ICOUNT_ARGS: exact, not host time
    # QEMU's option syntax: a comma inside a value is doubled
    assert argv[argv.index("-plugin") + 1] == (f"{fake_model['plugin']},mailbox=0x{mailbox:x},"
                                               f"out={argv[argv.index('-plugin') + 1].split('out=')[1].split(',')[0]},"
                                               f"model=custom:l1d=8K/4/64/2,,l2=2M/8/64/7")
    assert (out / "model.jsonl").read_text() == fake_model["jsonl"].read_text()
    doc = json.loads((out / "results.json").read_text())
    pushad = next(r for r in doc["records"] if r.get("case") == "pushad")
    assert pushad["model"]["cycles"] == {"min": 100, "med": 100, "max": 100}  # 400..403 / per 4
    assert doc["run"]["emulator"] == "qemu-model" and doc["run"]["model"]["preset"] == "prestonia"
    assert doc["run"]["model"]["samples"] == 7 and doc["run"]["model"]["status"] == "ok"
    rows = list(csv.DictReader((out / "results.csv").open()))
    assert rows[1]["model_cycles_med"] == "100" and rows[0]["model_tlb_misses_max"] == "2"


def test_run_qemu_model_mismatch_exits_4(tmp_path: Path, fake_model: dict[str, Any]) -> None:
    fake_model["jsonl"].write_text(model_lines([sample(0, i, 30) for i in range(3)] + [sample(1, 0, 400)]))
    out = tmp_path / "o"
    p = tool_proc(*fake_model["args"], "--out", str(out), env=fake_model["env"])
    assert p.returncode == 4, p.stdout + p.stderr
    assert "model: case 1 (ctxsw pushad paging=off): 3 of its 4 samples missing" in p.stdout
    doc = json.loads((out / "results.json").read_text())
    assert doc["run"]["model"]["status"] == "mismatch" and any("case 1" in x for x in doc["problems"])
    argv = json.loads(fake_model["info"].read_text())["argv"]
    assert argv[argv.index("-plugin") + 1].endswith(",model=prestonia")  # the default preset
    # parsing the run's log again joins its model.jsonl again, with the same verdict
    assert tool_proc("parse", str(out / "serial.log")).returncode == 4


def test_model_option_refused_elsewhere(tmp_path: Path, fake_model: dict[str, Any]) -> None:
    args = [a if a != "qemu-model" else "qemu-icount" for a in fake_model["args"]]
    p = tool_proc(*args, "--model", "modern", "--out", str(tmp_path / "o"), env=fake_model["env"])
    assert p.returncode == 5 and "--model applies only to --emulator qemu-model" in p.stderr
    p = tool_proc(*fake_model["args"], "--model", "pentium4", "--out", str(tmp_path / "o"),
             env=fake_model["env"])
    assert p.returncode == 5 and "choose one of prestonia, modern or custom:SPEC" in p.stderr
    fake_model["plugin"].unlink()
    p = tool_proc(*fake_model["args"], "--out", str(tmp_path / "o"), env=fake_model["env"])
    assert p.returncode == 5 and "build it with `make`" in p.stderr


# --- the report's modelled figures -------------------------------------------------------------

REPS = 100


def workset_doc() -> dict[str, Any]:
    """Workset results whose TSC figures (instructions) are flat and whose model cycles peak at 512K."""
    recs: list[dict[str, Any]] = [
        {"t": "hello", "proto": 1, "kernel": "0.1.0", "cmdline": "bench=workset"},
        {"t": "cpu", "vendor": "GenuineIntel", "brand": "QEMU Virtual CPU", "family": 6, "model": 6,
         "hypervisor": "TCGTCGTCGTCG", "platform": "qemu"},
        {"t": "tsc", "hz": 1000000000, "method": "pit", "serialize": "lfence", "overhead": 0},
    ]
    case_no = 0
    for paging in ("off", "on"):
        for size in (16384, 524288, 4 * 1048576):
            for case in ("single", "multi"):
                insns = 2 * REPS * (size // 4 + (50 if case == "multi" else 0))
                cycles = insns + (2 * REPS * (size // 64) * 200 if case == "multi" and size == 524288 else 0)
                tlb = 2 * REPS * (size // 4096) if paging == "on" and size > 262144 else 0
                cycles += tlb * 30
                fig = {"cycles": cycles, "instructions": insns, "l1d_misses": 2 * REPS * size // 64,
                       "l2_misses": 2 * REPS * size // 64 if case == "multi" and size == 524288 else 0,
                       "l3_misses": 0, "tlb_misses": tlb, "walk_reads": tlb, "loads": 0, "stores": insns}
                recs.append({"t": "result", "bench": "workset", "case": case,
                             "params": {"size": size, "reps": REPS, "paging": paging, "pagesize": "4k"},
                             "unit": "cycles", "n": 3, "min": insns, "med": insns, "max": insns, "per": 1,
                             "case_no": case_no,
                             "model": {k: {"min": v, "med": v, "max": v} for k, v in fig.items()}})
                case_no += 1
    recs.append({"t": "done", "status": "ok", "records": len(recs), "passed": 0, "failed": 0})
    run_model = {k: v for k, v in PRESTONIA.items() if k != "t"}
    return {"format": "cleanroom-results", "version": 1, "complete": True, "status": "ok", "records": recs,
            "run": {"emulator": "qemu-model", "model": dict(run_model, samples=36, unmatched=0, status="ok")}}


def test_report_draws_workset_from_model_cycles(tmp_path: Path) -> None:
    doc = workset_doc()
    rs = ResultSet(tmp_path / "results.json", doc)
    text = report.render(rs, full=True)
    assert "workset figures MODELLED on preset prestonia (L1d 8K 4-way 2 cycles, L2 512K 8-way 7 cycles" in text
    assert "NOT measured" in text and "[paper: 352 % at 512K per buffer" in text
    # the peak sits at the model's L2, with the model's misses behind it
    assert "at 512K per buffer, = L2 size; multi - single per quantum there: L1d misses (model) 0" in text
    assert "L2 misses (model) 8192" in text
    rows = derive(Run.of(doc["records"], doc).modelled("workset").records)[1]
    (per_quantum,) = [r for r in pick(rows, "conc_per_quantum", paging="off") if r.size == 524288]
    assert per_quantum.value.mid == 50 + (524288 // 64) * 200  # (multi - single) / (2 reps), modelled cycles
    (tlb,) = [r for r in pick(rows, "vm_tlb_misses_single_per_refill") if r.size == 4 * 1048576]
    assert tlb.value.mid == 1024  # a 4 MiB buffer in 4 KiB pages: one TLB miss per page
    # --figures tsc: the TSC's instruction counts, no model header
    rs.figures = "tsc"
    assert "MODELLED" not in report.render(rs, full=True)


def test_report_model_files(tmp_path: Path) -> None:
    (tmp_path / "results.json").write_text(json.dumps(workset_doc()))
    p = tool_proc("report", str(tmp_path))
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "derived-model.csv").is_file() and not (tmp_path / "derived.csv").exists()
    assert (tmp_path / "plots" / "fig3-concurrency-overhead-absolute-model.png").is_file()
    assert (tmp_path / "plots" / "fig3-misses-per-quantum-model.png").is_file()
    with (tmp_path / "derived-model.csv").open() as f:
        units = {row["quantity"]: row["unit"] for row in csv.DictReader(f)}
    assert units["conc_per_quantum"] == "modelled cycles/quantum"
    p = tool_proc("report", str(tmp_path), "--figures", "tsc", "--no-plots")
    assert p.returncode == 0 and (tmp_path / "derived.csv").is_file()
    plain = workset_doc()
    for r in plain["records"]:
        r.pop("model", None)
    (tmp_path / "results.json").write_text(json.dumps(plain))
    p = tool_proc("report", str(tmp_path), "--figures", "model", "--no-plots")
    assert p.returncode == 5 and "has no model figures" in p.stderr


# --- a real boot: the kernel's marks and the plugin, once both are built ------------------------

@pytest.mark.usefixtures("kernel_elf", "cachemodel_plugin")
def test_real_boot_every_sample_joined(tmp_path: Path) -> None:
    """bench=tsc runs=2 under qemu-model: every result gets its model figures (~1 s of boot)."""
    status, doc = boot(tmp_path, "qemu-model", "bench=tsc runs=2")
    assert status == 0, doc.get("problems")
    results = [r for r in doc["records"] if r.get("t") == "result"]
    assert results and all(r["model"]["instructions"]["min"] > 0 for r in results)
    # an empty timed region is as many modelled instructions as the TSC (one tick per instruction) says
    empty = next(r for r in results if r["case"] == "empty")
    assert empty["model"]["instructions"]["med"] == empty["med"] + empty["overhead"]
    assert doc["run"]["model"]["status"] == "ok" and doc["run"]["model"]["joined"] == 2 * len(results)
    assert (tmp_path / "qemu-model" / "model.jsonl").is_file()
