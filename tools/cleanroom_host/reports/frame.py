"""The report of a result set: a summary that leads with answers, the full tables
(report.txt), and each benchmark's CSV files and figures.

Each benchmark family's report is one module, registered in families.FAMILIES with the hooks
named there; a benchmark no family claims gets the generic report (generic.py). This module walks them;
it knows no benchmark by name.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from ..records import model
from ..records.kinds import INSTRUCTIONS
from ..records.protocol import Record, format_ranges
from ..records.results import ResultSet
from ..records import replicas
from ..records.text import WIDTH, auto_text, bench_time_text, compact, fit, format_params, human_bytes, human_hz, table
from ..stats.interval import SUMMARY_LEGEND, Interval, short, summary_band
from ..machines.machine import counters_text
from .context import Run
from . import generic, html
from .families import FAMILIES, captions, modules as families, name as family_name
from .answers import Answer, lines, quoted_once, rows, unquoted
from .paper import size_text

__all__ = ["compact", "format_params", "human_bytes", "human_hz", "table", "render", "write_outputs",
           "summary", "full_report", "run_of"]

Section = Callable[[ResultSet], list[str]]
PLOTS_DIR = "plots"
REPORT_TXT = "report.txt"
SUMMARY_BUDGET = 53  # lines the summary stays within, each at most text.WIDTH columns (the tests hold it to that)
# ... where the run had more than 2 CPUs: each multi-CPU question is answered at its most CPUs as well as at 2,
# with its checks (the lent 16-core machine's suite=smp: 79 lines; docs/REPORT.md)
SMP_SUMMARY_BUDGET = 82
CLOCK_BENCH = "tsc"  # reading the clock: the machine lines show it, no module reports it
SKIP_REASONS = 3  # the summary's skipped line names the things of this many reasons (report.txt all)


def run_of(rs: ResultSet) -> Run:
    return Run.of(rs.records, rs.doc, rs.figures)


def reported_benches() -> set[str]:
    return {b for module in families() for b in module.BENCHES}


def unclaimed(run: Run) -> list[str]:
    """The benchmarks with results that no family claims, in the order the run measured them: the generic
    report's (generic.py). The clock's (CLOCK_BENCH) is the machine lines'."""
    measured = dict.fromkeys(str(r.get("bench")) for r in run.results())
    return [b for b in measured if b not in reported_benches() and b != CLOCK_BENCH]


# --- the full report's sections -----------------------------------------------

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


def _run_info(rs: ResultSet) -> dict[str, Any] | None:
    run = rs.doc.get("run")
    return run if isinstance(run, dict) else None


def section_run(rs: ResultSet) -> list[str]:
    doc = rs.doc
    out = [f"cleanroom report: {rs.path}"]
    run = _run_info(rs)
    if run is not None:
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


def _tsc_rate(run: Run, tsc: dict[str, Any], detail: str = "") -> str:
    """The TSC's rate as what it is on this platform (under icount and Bochs a tick is an instruction),
    with `detail` in its parentheses."""
    hz = human_hz(tsc.get("hz"))
    if run.units.short == INSTRUCTIONS.short:  # the emulator's row says its TSC counts instructions
        return f"one tick per instruction ({hz} of emulated time" + (f"; {detail})" if detail else ")")
    return f"{hz} ({detail})" if detail else hz


def _tsc_text(run: Run, tsc: dict[str, Any]) -> str:
    """The TSC's rate, its figure and source, how it is read and what a read costs."""
    rate = _tsc_rate(run, tsc, f"{tsc.get('hz')} Hz, method {tsc.get('method')}")
    return f"{rate}, serialise {tsc.get('serialize')}, overhead {tsc.get('overhead')} {run.units.short}"


def section_machine(rs: ResultSet) -> list[str]:
    run = run_of(rs)
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
        text = "; ".join(_cache_text(c) for c in caches) if isinstance(caches, list) and caches else "-"
        if run.machine.emulated and text != "-":
            text += " (the emulated CPU's report: the emulator models no cache)"
        rows.append(("caches", text))
        rows.append(("hypervisor", compact(cpu.get("hypervisor")) if cpu.get("hypervisor") else "none"))
    rows.append(("platform", run.machine.trust))
    rows.append(("unit", run.units.name))
    tsc = rs.first("tsc")
    if tsc:
        rows.append(("tsc", _tsc_text(run, tsc)))
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
    if run.machine.counters_recorded:
        rows.append(("counters", counters_text(run.machine)))
    if run.model_info:
        rows.append(("model", model.run_text(run.model_info)))
    if not hello and not cpu and not tsc and not mem and not config:
        return ["machine: no hello/cpu/tsc/mem/config records"]
    width = max(len(k) for k, _ in rows)
    return ["machine"] + [f"  {k.ljust(width)}  {v}" for k, v in rows]


def section_results(rs: ResultSet) -> list[str]:
    results = rs.of_type("result")
    if not results:
        return ["results: none"]
    head = f"results ({len(results)}, unit {run_of(rs).units.name})"
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


def _module_sections(rs: ResultSet) -> list[str]:
    run = run_of(rs)
    out: list[str] = []
    for block in [module.sections(run) for module in families()] + [generic.sections(run, unclaimed(run))]:
        if block:
            out += ([""] if out else []) + block
    return out


SECTIONS: tuple[Section, ...] = (
    section_run, section_machine, section_results, section_tests,
    section_skips, section_errors, section_faults, section_thread_faults,
    _module_sections, section_done,
)


def report_lines(rs: ResultSet) -> list[str]:
    """Every table: what report.txt holds after the summary, a line each (a blank one between sections).
    The lines of an aligned table are text.TableLines: the page draws their table as HTML."""
    out: list[str] = []
    for block in (section(rs) for section in SECTIONS):
        if block:
            out += ([""] if out else []) + block
    return out


def full_report(rs: ResultSet) -> str:
    """Every table: what report.txt holds after the summary."""
    return "\n".join(report_lines(rs)) + "\n"


# --- the summary ----------------------------------------------------------------

def _summary_run(rs: ResultSet, run: Run) -> list[str]:
    doc = rs.doc
    info = _run_info(rs)
    missing = doc.get("missing") or []
    done = rs.first("done")
    parts = []
    if info is not None:
        parts.append(f"{info.get('emulator')}, {info.get('wall_seconds')} s"
                     + (", HUNG" if info.get("hung") else "") + (", timed out" if info.get("timed_out") else ""))
    parts.append(f"{len(rs.records)} records" + (", complete" if doc.get("complete") else ", INCOMPLETE")
                 + (f", {doc.get('corrupt')} corrupt" if doc.get("corrupt") else "")
                 + (f", {len(missing)} missing" if missing else ""))
    parts.append(f"done {done.get('status')}" if done else "no done record")
    if rs.of_type("result"):
        parts.append(replicas.replication_text(rs.records))
    out = ["run: " + "; ".join(parts)]
    hello = rs.first("hello")
    config = rs.first("config")
    cfg = config.get("cfg") if config and isinstance(config.get("cfg"), dict) else {}
    line = f"  cmdline: {compact(hello.get('cmdline'))}" if hello else ""
    runs = cfg.get("runs") if isinstance(cfg, dict) else None
    sweep = info.get("sweep") if info is not None else None
    if runs == "auto" and isinstance(sweep, dict) and isinstance(sweep.get("added"), list):
        n = len(sweep["added"])  # the processes the host added decide; the rounds inside are a share
        why = str(sweep.get("stopped") or "").split(" (")[0]
        line += (f"; runs=auto: {n} process{'es' if n != 1 else ''} added for the open sizes within "
                 f"{sweep.get('limit_seconds'):g} s" + (f" ({why})" if why else ""))
    elif runs == "auto":
        line += "; " + auto_text(rs.of_type("result"), cfg)
    elif runs is not None:
        line += f"; {runs} recorded runs per case" + ("" if runs and int(runs) > 1 else ": no spread to judge by")
    if line:
        out.append(line.rstrip())
    return out


def _clock_text(run: Run) -> str:
    """The tsc benchmark's headline: what a back-to-back read and an empty timed region read."""
    parts = []
    for case, what in (("rdtsc", "back-to-back rdtsc"), ("empty", "empty timed region")):
        rec = next((r for r in run.results(CLOCK_BENCH) if r.get("case") == case), None)
        if rec is not None:
            parts.append(f"{what} {short(Interval.of(rec))}")
    return ", ".join(parts)


def _summary_machine(rs: ResultSet, run: Run) -> list[str]:
    cpu, tsc = rs.first("cpu"), rs.first("tsc")
    m = run.machine
    if cpu:
        head = (f"machine: \"{cpu.get('brand') or cpu.get('vendor')}\" ({cpu.get('vendor')} family "
                f"{cpu.get('family')} model {cpu.get('model')})"
                + (f" on {cpu.get('platform')}" if cpu.get("platform") else "")
                + (f", hypervisor {cpu.get('hypervisor')}" if cpu.get("hypervisor") else ""))
    else:
        head = "machine: no cpu record"
    out = [head, f"  timing: {m.timing or m.trust}"]
    unit = f"  unit: {run.units.name}"
    if tsc:
        unit += "; TSC " + _tsc_rate(run, tsc)
    clock = _clock_text(run)
    out.append(unit + (f"; {clock}" if clock else ""))
    if m.caches:
        names = ", ".join(f"{c.name} {size_text(c.size)}" for c in m.caches)
        out.append(f"  caches: {names}" + (": made up by the emulator, which models no cache" if m.emulated else ""))
    out.append(f"  counters: {counters_text(m, brief=True)}")
    cpus = cpus_text(rs.first("smp"))
    if cpus:
        out.append(f"  cpus: {cpus}")
    if run.model_info:
        out.append(f"  model: {model.run_text(run.model_info)}")
    return out


def id_ranges(ids: list[int]) -> str:
    """0-3,8: runs of consecutive ids (as bench/parallel.c writes params.cpu_ids)."""
    out: list[str] = []
    for i in ids:
        if out and out[-1][1] + 1 == i:
            out[-1] = (out[-1][0], i)
        else:
            out.append((i, i))
    return ",".join(str(a) if a == b else f"{a}-{b}" for a, b in out)  # type: ignore[misc]


def cpus_text(smp: Record | None) -> str | None:
    """The smp record's CPUs for the machine lines: how many, which, and whether any two are hardware
    threads of one core (a k sweep's figures then mix cores and siblings; each record says `smt`)."""
    if not smp or int(smp.get("used") or 1) < 2:
        return None
    ids = [int(i) for i in smp.get("used_ids") or []]
    if smp.get("shared_cpus"):
        return f"{smp.get('used')} workers on CPUs {id_ranges(sorted(set(ids)))}, several a CPU (oversubscribe=1)"
    text = f"{smp.get('used')} used ({id_ranges(ids)})"
    cores = smp.get("core_ids")
    if not smp.get("cores") or not isinstance(cores, list):
        return text + "; which share a core is not known"
    groups: dict[int, list[int]] = {}
    for i, core in zip(ids, cores):
        groups.setdefault(int(core), []).append(i)
    shared = [g for g in groups.values() if len(g) > 1]
    if not shared:
        return text + f", each on a core of its own ({smp['cores']})"
    pairs = ", ".join("+".join(map(str, g)) for g in shared[:4]) + (", ..." if len(shared) > 4 else "")
    return text + f" on {len(groups)} cores: SMT siblings {pairs} ({smp['cores']}; each k sweep's `smt` says)"


def _named(recs: list[Record]) -> str:
    """"name x2, other": the records' names, each once, with how many records gave it."""
    counts: dict[str, int] = {}
    for r in recs:
        name = compact(r.get("name") or r.get("code") or r.get("what"))
        counts[name] = counts.get(name, 0) + 1
    return ", ".join(name + (f" x{n}" if n > 1 else "") for name, n in counts.items())


def bookkeeping(rs: ResultSet, skip: Record) -> bool:
    """A skip that says only that one pass left a benchmark to another (aspace in the paging-off pass,
    every benchmark in a hosted build's paging pass): the benchmark has results in the set."""
    bench = skip.get("bench")
    return skip.get("what") == bench and any(r.get("bench") == bench for r in rs.of_type("result"))


def skipped_text(rs: ResultSet) -> str | None:
    """"skipped: 1 (rdtscp: the CPU lacks rdtscp)": what the run skipped, each thing once and counted as
    named, with why; bookkeeping left out. The things of SKIP_REASONS reasons are named, the rest
    counted. None when nothing was skipped."""
    why: dict[str, list[str]] = {}
    for r in rs.of_type("skip"):
        name = compact(r.get("what"))
        if not bookkeeping(rs, r) and not any(name in names for names in why.values()):
            why.setdefault(compact(r.get("why") or "no reason given"), []).append(name)
    if not why:
        return None
    shown = list(why.items())[:SKIP_REASONS]
    rest = sum(len(names) for names in why.values()) - sum(len(names) for _why, names in shown)
    return (f"skipped: {sum(len(names) for names in why.values())} ("
            + "; ".join(f"{', '.join(names)}: {reason}" for reason, names in shown)
            + (f"; {rest} more in report.txt)" if rest else ")"))


def _summary_problems(rs: ResultSet) -> list[str]:
    out = []
    tests = rs.of_type("test")
    failed = [t for t in tests if t.get("ok") is not True]
    if tests:
        out.append(f"self-tests: {len(tests) - len(failed)} passed, {len(failed)} failed"
                   + (": " + ", ".join(compact(t.get("name")) for t in failed[:5]) if failed else ""))
    for t, what in (("fault", "FAULTS"), ("thread_fault", "thread faults"), ("error", "errors")):
        recs = rs.of_type(t)
        if recs:
            names = _named(recs)
            out.append(f"{what}: {len(recs)} ({names[:100]}{'...' if len(names) > 100 else ''})")
    skipped = skipped_text(rs)
    return out + ([skipped] if skipped else [])


ANSWERS, NO_ANSWERS = "answers", "no answers"  # the answers' heading


def _answers_head(why: str, band: str) -> list[str]:
    """What the answers are, what their intervals are (band), and the legend of the words they use. Under an
    emulator whose TSC follows the host's clock, or a hypervisor that traps rdtsc, they are no answers: the
    heading says whose costs they are (why: Machine.no_answers), and sets no paper's numbers beside them."""
    what = f"{NO_ANSWERS}: {why}" if why else ANSWERS
    papers = "" if why else "; in square brackets the papers' numbers"
    return [f"{what}; {band}{papers}:", f"  {SUMMARY_LEGEND}"]


OTHERS = "others"  # the answers' last group: the benchmarks no family reports (generic.py)
OTHERS_WHAT = "benchmarks without a report module: each case's median (docs/REPORT.md)"


@dataclass(frozen=True)
class Group:
    """One family's answers (its module's name; OTHERS for results no family reports), and their lines as
    the summary prints them (indented under the answers' heading, wrapped)."""

    name: str
    answers: list[Answer]
    lines: list[str]


def answer_groups(run: Run) -> list[tuple[str, list[Answer]]]:
    """The answers, a group per family that has any (its module's name; OTHERS for the benchmarks no family
    reports: generic.py's line each), each paper's number written once (none where the run has no answers)."""
    groups = [(family_name(module), [a if isinstance(a, Answer) else Answer(a) for a in module.summary(run)])
              for module in families()]
    groups.append((OTHERS, generic.summary(run, unclaimed(run))))
    seen: set[str] = set()
    out = []
    for name, answers in groups:
        if run.machine.no_answers:  # no value here answers a paper's question: none is set beside its numbers
            answers = unquoted(answers)
        answers = quoted_once(answers, seen)
        if answers:
            out.append((name, answers))
    return out


def summary_budget(rs: ResultSet) -> int:
    """The lines this set's summary stays within: SMP_SUMMARY_BUDGET where it ran on more than 2 CPUs."""
    used = max((r.get("used", 1) for r in rs.records if r.get("t") == "smp" and isinstance(r.get("used"), int)),
               default=1)
    return SMP_SUMMARY_BUDGET if used > 2 else SUMMARY_BUDGET


@dataclass(frozen=True)
class Summary:
    """The summary in three parts: the run and the machine, the answers' heading and legend, and the answers
    a group per family (answer_groups); every line wrapped to text.WIDTH."""

    head: list[str]
    answers_head: list[str]
    groups: list[Group]
    why: str = ""   # why they are no answers (Machine.no_answers; "" where they are), unwrapped
    band: str = ""  # what their intervals are (interval.summary_band), unwrapped

    def lines(self) -> list[str]:
        return self.head + self.answers_head + [line for g in self.groups for line in g.lines]


def summary_parts(rs: ResultSet, report_txt: Path | None = None) -> Summary:
    """The summary in its parts (Summary), its answers as objects beside their lines."""
    run = run_of(rs)
    head = [f"cleanroom report: {rs.path}"]
    if report_txt is not None:
        head.append(f"full tables: {report_txt} (`report --full` prints them)")
    head += _summary_run(rs, run) + _summary_machine(rs, run) + _summary_problems(rs)
    groups = answer_groups(run)
    why = run.machine.no_answers or ""
    values = [d.value for module in families() for d in module.derived(run)]
    values += [v.v for name, answers in groups if name == OTHERS for a in answers for v in a.values if v.v]
    band = summary_band(values) if groups else ""
    return Summary(fit(head, WIDTH), fit(_answers_head(why, band), WIDTH) if groups else [],
                   [Group(name, answers, fit([f"  {line}" for line in lines(answers)], WIDTH))
                    for name, answers in groups], why, band)


def summary(rs: ResultSet, report_txt: Path | None = None) -> list[str]:
    """At most about summary_budget(rs) lines of at most WIDTH columns: the machine and how far its timing
    can be trusted, then the answers."""
    return summary_parts(rs, report_txt).lines()


def page_column(rs: ResultSet, ident: str, written: dict[str, list[Path]], page_dir: Path,
                report_txt: Path | None = None, tables: list[str] | None = None,
                parts: Summary | None = None) -> html.Column:
    """One set's column of an HTML page: the summary's head lines, its answers as tables of rows (parts:
    summary_parts', where the caller has them), each family's figures after its answers (written: the
    files each family wrote, by module name), the files beside the page, and the full tables (tables:
    report_lines', or none)."""
    parts = parts if parts is not None else summary_parts(rs, report_txt)
    caption = {family_name(m): captions(m) for m in families()} | {OTHERS: generic.CAPTIONS}
    whats = {f.module: f.what for f in FAMILIES} | {OTHERS: OTHERS_WHAT}
    out_groups = [html.Group(g.name, whats.get(g.name, ""), rows(g.answers),
                             [html.figure(p, caption.get(g.name, {})) for p in written.get(g.name, [])
                              if p.suffix == ".png"])
                  for g in parts.groups]
    named = {g.name for g in out_groups}
    for name, files in written.items():  # figures of a family whose summary says nothing: after the answers
        figs = [html.figure(p, caption.get(name, {})) for p in files if p.suffix == ".png"]
        if figs and name not in named:
            out_groups.append(html.Group(name, whats.get(name, ""), [], figs))
    out_dir = rs.path.parent if rs.path.suffix else rs.path
    all_written = [p for files in written.values() for p in files] + ([report_txt] if report_txt else [])
    legend = f"{parts.band}; {SUMMARY_LEGEND.removeprefix('legend: ')}"
    what = (NO_ANSWERS if parts.why else ANSWERS) if parts.groups else ""
    files = html.links(out_dir, all_written, page_dir)
    return html.Column(ident, str(rs.path), parts.head, what, parts.why, legend, out_groups, files,
                       html.blocks(tables or []), next((f for f in files if f["name"] == REPORT_TXT), None))


def render(rs: ResultSet, full: bool = True, report_txt: Path | None = None) -> str:
    """The summary, and with full the whole report after it (what report.txt holds)."""
    return _text(summary_parts(rs, report_txt), report_lines(rs) if full else None)


def _text(parts: Summary, tables: list[str] | None) -> str:
    """The summary's lines, then the tables where given."""
    text = "\n".join(parts.lines()) + "\n"
    return text + ("\n" + "\n".join(tables) + "\n" if tables is not None else "")


def index_part(rs: ResultSet, name: str, href: str, what: str) -> html.Part:
    """One run of make run's index.html: its machine and timing lines, and its headline answers (each
    family's top-level answers, as the summary words them, with the paper's number)."""
    run = run_of(rs)
    heads = [a for _name, answers in answer_groups(run) for a in answers if a.depth == 0 and a.words]
    why = run.machine.no_answers
    return html.Part(name, href, what, _summary_machine(rs, run)[:2], heads, f"{NO_ANSWERS}: {why}" if why else "")


# --- files --------------------------------------------------------------------

def files_by_family(run: Run, out_dir: Path, plots: bool = True) -> dict[str, list[Path]]:
    """Every family's CSV files and figures, written into out_dir, by family (its module's name), and the
    generic report's figures (OTHERS)."""
    by_family = {family_name(module): module.files(run, out_dir, plots) for module in families()}
    return by_family | {OTHERS: generic.files(run, out_dir, plots, unclaimed(run))}


def write_outputs(rs: ResultSet, out_dir: Path, plots: bool = True) -> list[Path]:
    """report.txt, then every module's CSV files and figures, then report.html (html.py: the summary's
    answers, each family's figures after them, the tables); returns the files written."""
    run = run_of(rs)
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / REPORT_TXT
    parts, tables = summary_parts(rs, path), report_lines(rs)  # once: report.txt and the page both show them
    path.write_text(_text(parts, tables), encoding="ascii", errors="backslashreplace")
    by_family = files_by_family(run, out_dir, plots)
    written = [path] + [p for files in by_family.values() for p in files]
    page = html.write(out_dir / html.PAGE, f"cleanroom report: {rs.path}",
                      [page_column(rs, "run", by_family, out_dir, path, tables, parts)])
    return written + [page]
