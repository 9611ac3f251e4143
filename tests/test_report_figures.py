"""`cleanroom report` with workset/ctxsw results: tables, derived.csv and the
figures, from a real recorded QEMU quick run and from synthetic logs."""

from __future__ import annotations

import csv
import math
import os
import struct
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from booting import TOOL_SAFETY_NET_S, tool_proc

sys.path.insert(0, str(Path(__file__).resolve().parent / "fixtures"))

import synth_workset  # noqa: E402

from cleanroom_host.records.protocol import parse_log  # noqa: E402

FIGURES = ["fig3-concurrency-overhead-absolute.png", "fig4-concurrency-overhead-relative.png",
           "fig5-vm-impact-on-concurrency-overhead.png", "fig6-vm-overhead-absolute.png",
           "fig7-vm-overhead-relative.png", "fig8-concurrency-impact-on-vm-overhead.png", "ctxsw.png"]
QEMU_FIXTURE = "qemu-quick-workset.log"


def png_size(path: Path) -> tuple[int, int]:
    """Width and height from a PNG's IHDR; fails on anything that is not a PNG."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    assert data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


def assert_real_plot(path: Path) -> None:
    w, h = png_size(path)
    assert 600 <= w <= 2000 and 400 <= h <= 1200
    import matplotlib.image as mpimg

    pixels = mpimg.imread(str(path))
    assert pixels.std() > 0.05, f"{path.name} is (nearly) blank"


def read_derived(path: Path) -> dict[tuple[str, str, int], dict[str, str]]:
    with path.open() as f:
        rows = list(csv.DictReader(f))
    assert rows and list(rows[0]) == ["figure", "quantity", "unit", "series", "paging", "size", "value", "min", "max",
                                      "verdict", "decision", "decision_lo", "decision_hi"]
    out = {}
    for r in rows:
        key = (r["quantity"], r["paging"], int(r["size"]))
        assert key not in out, f"duplicate derived row {key}"
        out[key] = r
    return out


def medians(records: list[dict[str, Any]]) -> dict[tuple[str, str, int], dict[str, int]]:
    out = {}
    for r in records:
        if r.get("t") == "result" and r.get("bench") == "workset":
            p = r["params"]
            out[(r["case"], p["paging"], p["size"])] = {"med": r["med"], "reps": p["reps"]}
    return out


def close(cell: str, expect: float) -> bool:
    if math.isnan(expect):
        return cell == ""
    return cell != "" and math.isclose(float(cell), expect, rel_tol=1e-6, abs_tol=1e-4)


def hand_computed(m: dict[tuple[str, str, int], dict[str, int]], size: int) -> dict[tuple[str, str], float]:
    """Figures 3-8 at one size, written out from the medians (docs/REPORT.md)."""
    def div(a: float, b: float) -> float:
        return math.nan if b == 0 else 100.0 * a / b

    so, mo = m[("single", "off", size)]["med"], m[("multi", "off", size)]["med"]
    sn, mn = m[("single", "on", size)]["med"], m[("multi", "on", size)]["med"]
    reps = m[("single", "off", size)]["reps"]
    return {
        ("conc_abs", "off"): mo - so, ("conc_abs", "on/4k"): mn - sn,
        ("conc_per_quantum", "off"): (mo - so) / (2 * reps), ("conc_per_quantum", "on/4k"): (mn - sn) / (2 * reps),
        ("conc_rel", "off"): div(mo - so, so), ("conc_rel", "on/4k"): div(mn - sn, sn),
        ("vm_on_conc", "on/4k-off"): div((mn - sn) - (mo - so), mo - so),
        ("vm_abs_single", "on/4k-off"): sn - so, ("vm_abs_multi", "on/4k-off"): mn - mo,
        ("vm_abs_single_per_quantum", "on/4k-off"): (sn - so) / (2 * reps),
        ("vm_abs_multi_per_quantum", "on/4k-off"): (mn - mo) / (2 * reps),
        ("vm_rel_single", "on/4k-off"): div(sn - so, so), ("vm_rel_multi", "on/4k-off"): div(mn - mo, mo),
        ("conc_on_vm", "on/4k-off"): div((mn - mo) - (sn - so), sn - so),
    }


@pytest.fixture(scope="module")
def qemu_report(fixtures_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    log = fixtures_dir / QEMU_FIXTURE
    out = tmp_path_factory.mktemp("qemu-report")
    p = tool_proc("report", str(log), "--out", str(out), "--full")
    return {"log": log, "out": out, "proc": p, "records": parse_log(log.read_bytes()).records}


def test_qemu_fixture_is_a_real_complete_quick_run(qemu_report: dict[str, Any]) -> None:
    res = parse_log(qemu_report["log"].read_bytes())
    assert res.complete and res.status == "ok" and not res.damaged
    hello, cpu = res.first("hello"), res.first("cpu")
    assert hello is not None and "suite=quick" in hello["cmdline"] and hello["platform"] == "bare"
    assert cpu is not None and cpu["hypervisor"] == "TCGTCGTCGTCG"
    config = res.first("config")
    assert config is not None and config["cfg"]["paging"] == "both"
    pagings = {r["params"]["paging"] for r in res.of_type("result") if r["bench"] == "workset"}
    assert pagings == {"off", "on"}


def test_qemu_report_tables(qemu_report: dict[str, Any]) -> None:
    p = qemu_report["proc"]
    assert p.returncode == 0, p.stderr
    text = p.stdout
    # a QEMU TCG run: TSC ticks of host time, never "cycles"
    assert "ctxsw: TSC ticks (host time) per switch" in text
    for head in ("paging off: concurrency overhead (Figures 3, 4)", "paging on/4k: concurrency overhead",
                 "paging on/4k vs paging off: virtual memory (Figures 5-8)", "paper vs this run"):
        assert head in text
    assert "352 % at 512K (= L2)" in text and "peak relative concurrency overhead, paging off:" in text
    assert "emulators model no caches, so no cache effect is expected" in text
    # stdout is report.txt; report.txt, derived.csv, Figures 3-8, ctxsw.png; and the locks section: locks.csv and
    # three lock plots; report.html (the list of files goes to stderr)
    assert p.stderr.splitlines()[-1].startswith("wrote 14 files into")
    assert text.splitlines()[-1].startswith("done: status ok")
    assert (qemu_report["out"] / "report.txt").read_text() == text


def test_qemu_derived_csv_agrees_with_a_hand_computation(qemu_report: dict[str, Any]) -> None:
    derived = read_derived(qemu_report["out"] / "derived.csv")
    m = medians(qemu_report["records"])
    sizes = sorted({k[2] for k in m})
    assert len(sizes) > 20 and 0 in sizes and 4 << 20 in sizes
    checked = 0
    for size in sizes:
        for (q, paging), expect in hand_computed(m, size).items():
            row = derived[(q, paging, size)]
            assert close(row["value"], expect), (q, paging, size, row["value"], expect)
            checked += 1
    # 6 per size for the two paging modes, 8 for on-vs-off: nothing else, nothing missing
    assert checked == len(derived) == 14 * len(sizes)
    fig = {r["quantity"]: r["figure"] for r in derived.values()}
    assert fig["conc_abs"] == "3" and fig["conc_rel"] == "4" and fig["vm_on_conc"] == "5"
    assert fig["vm_abs_multi"] == "6" and fig["vm_rel_single"] == "7" and fig["conc_on_vm"] == "8"


def test_qemu_plots(qemu_report: dict[str, Any]) -> None:
    plots = qemu_report["out"] / "plots"
    lock_plots = ["create.png", "litethreads.png", "valchanov.png"]  # the fixture also holds locks and create
    assert sorted(os.listdir(plots)) == sorted(FIGURES + lock_plots)
    for name in FIGURES:
        assert_real_plot(plots / name)
    assert len({(plots / n).read_bytes() for n in FIGURES}) == len(FIGURES)


def test_synthetic_report_without_vm_data_draws_only_its_figures(tmp_path: Path) -> None:
    recs = [r for r in synth_workset.records() if (r.get("params") or {}).get("paging") != "on"]
    for i, r in enumerate(recs):
        r["seq"] = i
    recs[-1]["records"] = len(recs) - 1
    from cleanroom_host.records.protocol import encode_record

    log = tmp_path / "serial.log"
    log.write_bytes(b"".join(encode_record(r) for r in recs))
    p = tool_proc("report", str(tmp_path), "--full")
    assert p.returncode == 0, p.stderr
    assert sorted(os.listdir(tmp_path / "plots")) == ["ctxsw.png", FIGURES[0], FIGURES[1]]
    assert "vs paging off" not in p.stdout and "note:" not in p.stdout  # hardware, no emulator note
    quantities = {r[0] for r in read_derived(tmp_path / "derived.csv")}
    assert quantities == {"conc_abs", "conc_per_quantum", "conc_rel"}


def test_synthetic_report_peak_and_bands(tmp_path: Path) -> None:
    log = tmp_path / "serial.log"
    log.write_bytes(synth_workset.log(runs=5))
    p = tool_proc("report", str(log), "--out", str(tmp_path / "out"), "--full")
    assert p.returncode == 0, p.stderr
    assert ("peak relative concurrency overhead, paging off: 299.97 % (299.96..299.97) at 512K per buffer, = L2 size"
            in p.stdout)
    derived = read_derived(tmp_path / "out" / "derived.csv")
    row = derived[("conc_abs", "off", 524288)]
    assert float(row["min"]) < float(row["value"]) < float(row["max"])
    for name in FIGURES:
        assert_real_plot(tmp_path / "out" / "plots" / name)


def test_report_without_workset_writes_only_report_txt(tmp_path: Path, fixtures_dir: Path) -> None:
    """... and its page (report.html)."""
    p = tool_proc("report", str(fixtures_dir / "qemu-quick.log"), "--out", str(tmp_path), "--full")
    assert p.returncode == 0 and sorted(os.listdir(tmp_path)) == ["report.html", "report.txt"]
    assert p.stdout.splitlines()[-1].startswith("done: status ok")


def test_no_plots_never_loads_matplotlib(tmp_path: Path, fixtures_dir: Path, repo_root: Path) -> None:
    code = ("import sys; sys.path.insert(0, sys.argv[1]); from cleanroom_host.cli import main; "
            "import io; rc = main(['report', sys.argv[2], '--out', sys.argv[3], '--no-plots'], io.StringIO()); "
            "print(rc, 'matplotlib' in sys.modules)")
    p = subprocess.run([sys.executable, "-c", code, str(repo_root / "tools"), str(fixtures_dir / QEMU_FIXTURE),
                        str(tmp_path)], capture_output=True, text=True, timeout=TOOL_SAFETY_NET_S)
    assert p.stdout.split() == ["0", "False"], p.stderr
    assert sorted(os.listdir(tmp_path)) == ["derived.csv", "locks.csv", "report.html", "report.txt"]


HOSTED_FIXTURE = "hosted-workset.log"


def test_hosted_fixture_report(fixtures_dir: Path, tmp_path: Path) -> None:
    """A real hosted sweep: one paging mode ("host"), so Figures 3, 4 and ctxsw only."""
    log = fixtures_dir / HOSTED_FIXTURE
    res = parse_log(log.read_bytes())
    assert res.complete and res.status == "ok" and not res.damaged
    hello = res.first("hello")
    assert hello is not None and hello["platform"] == "hosted"
    p = tool_proc("report", str(log), "--out", str(tmp_path), "--full")
    assert p.returncode == 0, p.stderr
    assert "paging host: concurrency overhead (Figures 3, 4)" in p.stdout
    assert "note: hosted run" in p.stdout and "emulators model no caches" not in p.stdout
    assert sorted(os.listdir(tmp_path / "plots")) == ["ctxsw.png", FIGURES[0], FIGURES[1]]
    for name in os.listdir(tmp_path / "plots"):
        assert_real_plot(tmp_path / "plots" / name)
    derived = read_derived(tmp_path / "derived.csv")
    meds: dict[tuple[str, int], dict[str, int]] = {}
    for r in res.of_type("result"):
        if r["bench"] == "workset":
            meds[(r["case"], r["params"]["size"])] = {"med": r["med"], "reps": r["params"]["reps"]}
    sizes = sorted({size for _case, size in meds})
    assert sizes == [0, 1024, 4096, 16384, 65536, 262144, 1 << 20, 4 << 20]
    assert len(derived) == 3 * len(sizes)
    for size in sizes:
        s, m = meds[("single", size)]["med"], meds[("multi", size)]["med"]
        reps = meds[("single", size)]["reps"]
        assert close(derived[("conc_abs", "host", size)]["value"], m - s)
        assert close(derived[("conc_per_quantum", "host", size)]["value"], (m - s) / (2 * reps))
        assert close(derived[("conc_rel", "host", size)]["value"], 100.0 * (m - s) / s)
    # the peak the text names is the largest relative overhead of the sweep
    peak = max(sizes[1:], key=lambda z: (meds[("multi", z)]["med"] - meds[("single", z)]["med"])
               / meds[("single", z)]["med"])
    from cleanroom_host.reports.paper import bytes_text

    lines = p.stdout.splitlines()
    at = next(i for i, line in enumerate(lines) if "peak relative concurrency overhead, paging host:" in line)
    # from L1d size up it is the cache peak's line; below, the small sizes' line under it
    line = lines[at] if peak >= 48 * 1024 else lines[at + 1]  # 48K: the fixture's L1d
    assert f" at {bytes_text(peak)} per buffer" in line
