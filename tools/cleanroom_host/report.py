"""Text report of a result set; derived.csv and the figures (plots.py) beside it."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from . import aspacereport, benchreport, lockreport
from .protocol import format_ranges
from .results import ResultSet
from .text import bench_time_text, compact, format_params, human_bytes, human_hz, table

__all__ = ["compact", "format_params", "human_bytes", "human_hz", "table", "render", "write_outputs"]

Section = Callable[[ResultSet], list[str]]
PLOTS_DIR = "plots"


def _cache_text(c: Any) -> str:
    if not isinstance(c, dict):
        return compact(c)
    level, ctype = c.get("level"), c.get("type")
    kind = {"data": "d", "instruction": "i", "unified": ""}.get(str(ctype), f" {ctype}" if ctype else "")
    text = f"L{level}{kind} {human_bytes(c.get('size'))}"
    if c.get("ways") is not None:
        text += f" {c.get('ways')}-way"
    if c.get("line") is not None:
        text += f" {c.get('line')} B lines"
    return text


def section_run(rs: ResultSet) -> list[str]:
    doc = rs.doc
    out = [f"cleanroom report: {rs.path}"]
    run = doc.get("run")
    if isinstance(run, dict):
        hung = (f", hung: no record for {run.get('silence'):g} s after seq {run.get('last_seq')}"
                if run.get("hung") else "")
        out.append(f"run: {run.get('emulator')}, {run.get('wall_seconds')} s"
                   + (", timed out (--timeout)" if run.get("timed_out") else "") + hung
                   + (f", emulator exit code {run.get('exit_code')}" if "exit_code" in run else ""))
        if run.get("command_line"):
            out.append(f"  command: {run.get('command_line')}")
        per_bench = bench_time_text(run)
        if per_bench:
            out.append(f"  {per_bench}")
    missing = doc.get("missing") or []
    out.append(f"records: {len(rs.records)} good, {doc.get('corrupt', 0)} corrupt, "
               f"{len(missing)} missing, complete: {'yes' if doc.get('complete') else 'no'}")
    if missing:
        out.append(f"  missing seq: {format_ranges(missing)}")
    for key, what in (("duplicates", "duplicates dropped"), ("reordered", "records reordered")):
        if doc.get(key):
            out.append(f"  {what}: {doc.get(key)}")
    out.extend(f"  {p}" for p in doc.get("problems") or [] if not str(p).startswith("no done record"))
    return out


def section_machine(rs: ResultSet) -> list[str]:
    rows: list[tuple[str, str]] = []
    hello = rs.first("hello")
    if hello:
        rows.append(("kernel", f"{hello.get('kernel')} (protocol {hello.get('proto')})"
                     + (f", loaded by {hello.get('loader')}" if hello.get("loader") else "")))
    cpu = rs.first("cpu")
    if cpu:
        rows.append(("cpu", f"{cpu.get('vendor')} \"{cpu.get('brand')}\""
                     + (f" on {cpu.get('platform')}" if cpu.get("platform") else "")))
        rows.append(("", f"family {cpu.get('family')} model {cpu.get('model')} "
                         f"stepping {cpu.get('stepping')}"))
        feats = cpu.get("features")
        rows.append(("features", " ".join(str(f) for f in feats) if isinstance(feats, list) and feats else "-"))
        caches = cpu.get("caches")
        rows.append(("caches", "; ".join(_cache_text(c) for c in caches) if isinstance(caches, list) and caches else "-"))
        rows.append(("hypervisor", compact(cpu.get("hypervisor")) if cpu.get("hypervisor") else "none"))
    tsc = rs.first("tsc")
    if tsc:
        rows.append(("tsc", f"{human_hz(tsc.get('hz'))} ({tsc.get('hz')} Hz, method {tsc.get('method')}), "
                            f"serialise {tsc.get('serialize')}, overhead {tsc.get('overhead')} cycles"))
    mem = rs.first("mem")
    if mem:
        rows.append(("memory", f"usable {human_bytes(mem.get('usable'))}, "
                               f"largest free {human_bytes(mem.get('largest'))}"))
    if hello:
        rows.append(("cmdline", compact(hello.get("cmdline")) or "-"))
    config = rs.first("config")
    if config:
        cfg = config.get("cfg")
        text = format_params(cfg) if isinstance(cfg, dict) else compact(cfg)
        if config.get("exit_method"):
            text += f" (exit via {config.get('exit_method')})"
        rows.append(("config", text))
    if not rows:
        return ["machine: no hello/cpu/tsc/mem/config records"]
    width = max(len(k) for k, _ in rows)
    return ["machine"] + [f"  {k.ljust(width)}  {v}" for k, v in rows]


def section_results(rs: ResultSet) -> list[str]:
    results = rs.of_type("result")
    if not results:
        return ["results: none"]
    unit = {str(r.get("unit")) for r in results}
    head = f"results ({len(results)}, unit {'/'.join(sorted(unit))})"
    rows = [[compact(r.get("bench")), compact(r.get("case")), format_params(r.get("params")),
             compact(r.get("n")), compact(r.get("min")), compact(r.get("med")),
             compact(r.get("max")), compact(r.get("mean"))] for r in results]
    return [head] + table(["bench", "case", "params", "n", "min", "med", "max", "mean"], rows,
                          numeric={3, 4, 5, 6, 7})


def section_tests(rs: ResultSet) -> list[str]:
    tests = rs.of_type("test")
    if not tests:
        return []
    passed = sum(1 for t in tests if t.get("ok") is True)
    rows = [[compact(t.get("name")), "ok" if t.get("ok") is True else "FAIL", compact(t.get("detail") or "")]
            for t in tests]
    return [f"self-tests: {passed} passed, {len(tests) - passed} failed"] + table(["name", "ok", "detail"], rows)


def section_skips(rs: ResultSet) -> list[str]:
    skips = rs.of_type("skip")
    if not skips:
        return []
    return [f"skipped ({len(skips)})"] + table(["what", "why"], [[compact(s.get("what")), compact(s.get("why"))]
                                                                for s in skips])


def section_errors(rs: ResultSet) -> list[str]:
    errors = rs.of_type("error")
    if not errors:
        return []
    return [f"errors ({len(errors)})"] + table(["code", "msg"], [[compact(e.get("code")), compact(e.get("msg"))]
                                                               for e in errors])


def section_faults(rs: ResultSet) -> list[str]:
    faults = rs.of_type("fault")
    if not faults:
        return []
    rows = [[compact(f.get("vector")), compact(f.get("name")), _hex(f.get("eip")), _hex(f.get("err")),
             _hex(f.get("cr2")), compact(f.get("bench"))] for f in faults]
    return [f"faults ({len(faults)})"] + table(["vector", "name", "eip", "err", "cr2", "bench"], rows)


def section_thread_faults(rs: ResultSet) -> list[str]:
    faults = rs.of_type("thread_fault")
    if not faults:
        return []
    rows = [[compact(f.get("vector")), compact(f.get("name")), _hex(f.get("eip")), _hex(f.get("cr2")),
             compact(f.get("thread")), compact(f.get("bench")), compact(f.get("what")), compact(f.get("cause"))]
            for f in faults]
    return [f"thread faults (the thread was stopped, the run went on): {len(faults)}"] + table(
        ["vector", "name", "eip", "cr2", "thread", "bench", "what", "cause"], rows)


def _hex(v: Any) -> str:
    return f"0x{v:08x}" if isinstance(v, int) and not isinstance(v, bool) else compact(v)


def section_done(rs: ResultSet) -> list[str]:
    done = rs.first("done")
    if done is None:
        return ["done: no done record (the run did not finish, or its end was lost)"]
    return [f"done: status {done.get('status')}, passed {done.get('passed')}, failed {done.get('failed')}, "
            f"{done.get('records')} records before it"]


def section_locks(rs: ResultSet) -> list[str]:
    return lockreport.sections(rs.records)


def section_aspace(rs: ResultSet) -> list[str]:
    return aspacereport.sections(rs.records)


SECTIONS: tuple[Section, ...] = (
    section_run, section_machine, section_results, section_tests,
    section_skips, section_errors, section_faults, section_thread_faults,
    benchreport.section_ctxsw, benchreport.section_workset, benchreport.section_platform,
    section_locks, section_aspace, section_done,
)


def render(rs: ResultSet) -> str:
    blocks = [section(rs) for section in SECTIONS]
    return "\n\n".join("\n".join(b) for b in blocks if b) + "\n"


def write_outputs(rs: ResultSet, out_dir: Path, plots: bool = True) -> list[Path]:
    """derived.csv, locks.csv, aspace.csv and the figures, for whatever workset/ctxsw/locks/create/peers/aspace
    data the set holds."""
    from .derive import derive

    written: list[Path] = []
    _series, rows = derive(rs.records)
    if rows:
        written.append(benchreport.write_derived(rows, out_dir / benchreport.DERIVED_CSV))
    locks_csv = lockreport.write_csv(rs.records, out_dir / lockreport.LOCKS_CSV)
    if locks_csv is not None:
        written.append(locks_csv)
    aspace_csv = aspacereport.write_csv(rs.records, out_dir / aspacereport.ASPACE_CSV)
    if aspace_csv is not None:
        written.append(aspace_csv)
    if plots:
        from . import aspaceplots, lockplots, plots as plotting  # matplotlib loads only here

        written += plotting.write_all(rs.records, out_dir / PLOTS_DIR)
        written += lockplots.write_all(rs.records, out_dir / PLOTS_DIR)
        written += aspaceplots.write_all(rs.records, out_dir / PLOTS_DIR)
    return written
