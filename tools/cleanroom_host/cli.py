"""Command line: cleanroom parse | run | ab | capture | decode-photos | report | compare | lava-job |
lava-device | lava-fetch | stick | check | history | make-run."""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import textwrap
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, NoReturn, Sequence, TextIO

# Only what every command needs is imported here; each command imports its own modules (the report's,
# compare's, LAVA's, the QR decoder's) where it uses them, so that a run does not pay for them (the
# tests start the tool several hundred times).
from .machines import defaults, emulators, estimate, runner, usercode
from .machines.progress import Progress
from .records import results
from .records.protocol import pick_boot
from .records.replicas import parse_sets
from .records.text import WIDTH, not_installed

if TYPE_CHECKING:
    from .reports import compare, comparesets


# Where runs go without --out (default: results/ in the repository).
RESULTS_ENV = "CLEANROOM_RESULTS"
# run's default boots (processes) where the clock is real, instead of emulators.DEFAULT_BOOTS (make test sets 1:
# its runs check shapes; the replicas' own tests ask for them)
BOOTS_ENV = "CLEANROOM_BOOTS"
HELP_WIDTH = 100  # the emulators' lines in `run --help`
HOSTED_MEMORY_MB = 3072  # the estimate's memory for hosted: a 32-bit Linux process has about 3 GiB for its buffers


class Parser(argparse.ArgumentParser):
    """argparse, but a usage error exits with the tool's set-up status."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(results.EXIT_SETUP, f"{self.prog}: error: {message}\n")


def seconds(text: str) -> float:
    """A positive number of seconds (--silence, --timeout)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds: {text!r}")
    return value


def percent(text: str) -> float:
    """A number of per cent from 0 (--threshold)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of per cent: {text!r}") from None
    if not 0 <= value < 1000:
        raise argparse.ArgumentTypeError(f"must be from 0 to under 1000 per cent: {text!r}")
    return value


def positive(text: str) -> int:
    """A whole number from 1 (--boot)."""
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"not a whole number from 1: {text!r}")
    return int(text)


def _paper(emulator: str, case: bool = False) -> str:
    """The estimate of suite=paper (or of its longest case) for --help, from the model itself."""
    try:
        p = estimate.plan("suite=paper")
    except defaults.DefaultsError:
        return "?"  # `run` says why
    secs: float | None
    if case:
        secs = estimate.longest_case(p, emulator, emulators.DEFAULT_MEMORY_MB)
    else:
        est = estimate.estimate(p, emulator, emulators.DEFAULT_MEMORY_MB)
        secs = est.seconds if est is not None else None
    return estimate.duration_text(secs).lstrip("~") if secs is not None else "?"


def _emulator_help() -> str:
    """`run --help`'s list of emulators, from their rows: what each runs and what its runs can show."""
    lines = ["emulators:"]
    for e in emulators.EMULATORS:
        lines += textwrap.wrap(f"{e.help} [{e.shows()}]", width=HELP_WIDTH, initial_indent=f"  {e.name:<12} ",
                               subsequent_indent=" " * 15, break_on_hyphens=False, break_long_words=False)
    return "\n".join(lines) + "\n"


def _paper_defaults() -> str:
    """suite=paper's defaults for --help, from lib/defaults.h."""
    try:
        p = estimate.plan("suite=paper")
    except defaults.DefaultsError:
        return "the defaults of lib/defaults.h"
    from .reports.paper import size_text
    return f"reps={p.workset_reps(1)}, sizes 0..{size_text(p.maxsize)}, paging both, runs {p.runs}"


# The commands and their one-line help (the top level's --help lists them all)
COMMANDS = {
    "parse": "check a serial log and write results.json/csv",
    "run": "boot the kernel in an emulator and capture its records",
    "ab": "an A/B on one machine: two command lines or builds run in turn, boot by boot (process by "
          "process), and compared pair by pair",
    "capture": "read records from a real serial port",
    "decode-photos": "read the results QR codes back from photos or screendumps",
    "report": "print a summary (machine, timing, the papers' answers); write report.txt, CSVs and plots",
    "compare": "result sets side by side (two or more: machines, emulators): medians, ratios and "
                        "derived quantities with intervals",
    "lava-job": "write a LAVA job definition that boots the kernel on QEMU or x86 PCs",
    "lava-device": "a LAVA device's configuration for a job (its type's template rendered with the job's context), "
                   "for lava-run",
    "lava-fetch": "a LAVA job's log (a file, or a job id through lavacli) to serial.log and results.json",
    "stick": "write an ISO for a USB stick or a CD (BIOS and UEFI) that boots one command line, carrying the user's "
           "code (--asm, --switch-file, --lock-file) as GRUB's modules",
    "check": "a regression gate over two result sets: under an exact clock any count that moved fails; under "
             "a real clock a paired A/B fails where B/A is resolved beyond --threshold",
    "history": "build and run each commit of a range (each in a worktree of its own, kept), and show each "
               "case's count over the commits and the commit where it changed",
    "make-run": "make run's three runs (the kernel under qemu-icount, hosted on one CPU, hosted on every CPU), "
                "results/latest, and their three summaries",
}


@dataclass(frozen=True)
class MakeRunStep:
    """One of make-run's runs."""
    out: str       # its directory under --out
    emulator: str  # the row of emulators.EMULATORS it runs under
    option: str    # the argument (argparse's dest) that gives its command line
    what: str      # index.html's words for its page


MAKE_RUN_STEPS = (
    MakeRunStep("kernel", "qemu-icount", "kernel_cmdline",
                "the kernel's quick suite under qemu-icount (its TSC counts instructions)"),
    MakeRunStep("hosted", "hosted", "hosted_cmdline", "the hosted build on one CPU of this machine (real caches)"),
    MakeRunStep("smp", "hosted", "smp_cmdline",
                "false sharing and a line's trip between CPUs, on every CPU of this machine"))


def _add_parse(ps: argparse.ArgumentParser, root: Path) -> None:
    ps.epilog = results.EXIT_HELP
    ps.add_argument("log", type=Path, help="serial log (raw bytes as received)")
    ps.add_argument("--out", type=Path, help="directory for results.json/csv (default: the log's)")
    ps.add_argument("--boot", type=positive, metavar="K",
                    help="a log of several boots (each hello begins one): write only boot K into the "
                         "directory (default: each boot's set into boot-1/, boot-2/, ... there)")


def _add_run(pr: argparse.ArgumentParser, root: Path, ab: bool = False) -> None:
    from .records import model
    never = ", ".join(e.name for e in emulators.EMULATORS if not e.refuses_long)
    pr.epilog = (_emulator_help() +
                 f"ISO boots with --cmdline use a temporary ISO made with grub-mkrescue; without it,\n"
                 f"the built ISO and its default entry. exit=auto is added when CMDLINE has no exit=.\n"
                 f"\nHangs: a run is hung when no good record (valid CRC) has arrived for S seconds\n"
                 f"(--silence S, default {runner.DEFAULT_SILENCE_S:g}; for the first record, counted from the emulator's\n"
                 f"start). Every benchmark case ends with records, so however long a run takes, it\n"
                 f"is not hung while its cases finish; only a case longer than S would look hung,\n"
                 f"and for those the limit is raised (below). A hung run is stopped, keeps every\n"
                 f"good record and exits 4. --timeout T limits the total time too (default: none).\n"
                 f"\nDuration estimate: before a run that measures workset, ctxsw, locks or aspace,\n"
                 f"the tool estimates its duration as boot + bytes zeroed / throughput + refills x\n"
                 f"refill cost + switches x switch cost + locks reps x rep cost (constants measured\n"
                 f"per emulator; docs/REPORT.md).\n"
                 f"Over {estimate.LIMIT_S / 60:.0f} min it refuses to start (exit 5) unless --yes is given ({never}\n"
                 f"runs are never refused). Without --silence, the silence limit becomes\n"
                 f"3 x the longest single case's estimate + 30 s when that is more. suite=paper\n"
                 f"({_paper_defaults()}) comes out at {_paper('qemu')} in QEMU\n"
                 f"and {_paper('bochs')} in Bochs, its longest case at {_paper('qemu', case=True)} in QEMU;\n"
                 f"the model is approximate.\n"
                 f"\nWithout --out, results go to results/<UTC time>-<emulator>/ (results/ or\n"
                 f"${RESULTS_ENV}; -2, -3 ... appended when another run created that name first)\n"
                 f"and results/latest points at them.\n\n" + results.EXIT_HELP)
    pr.add_argument("--emulator", choices=emulators.names(), default=emulators.DEFAULT_EMULATOR,
                    help=f"default: {emulators.DEFAULT_EMULATOR}")
    pr.add_argument("--cmdline", help='kernel command line, e.g. "suite=selftest"')
    pr.add_argument("--out", type=Path, help="results directory" + (
        ": a/ and b/, each side's set, and compare/ (default results/<UTC time>-ab-<emulator>/)" if ab else ""))
    pr.add_argument("--silence", type=seconds, metavar="S",
                    help=f"seconds without a record before the run counts as hung (default "
                         f"{runner.DEFAULT_SILENCE_S:g}, raised for long cases)")
    pr.add_argument("--timeout", type=seconds, metavar="T",
                    help="a limit on the run's total seconds (default: none)")
    pr.add_argument("--kernel", type=Path, default=root / "build" / "cleanroom.elf",
                    help="kernel ELF (default: build/cleanroom.elf, made by `make`)")
    pr.add_argument("--iso", type=Path, default=root / "build" / "cleanroom.iso",
                    help="ISO for iso/uefi/bochs without --cmdline (default: build/cleanroom.iso, `make iso`)")
    pr.add_argument("--hosted", type=Path, default=root / "build" / "hosted" / "cleanroom-hosted",
                    help="the hosted build (default: build/hosted/cleanroom-hosted, `make hosted`)")
    pr.add_argument("--host-cpu", type=int, metavar="N",
                    help="hosted: the CPU to pin it to (default: the last CPU this process may use)")
    pr.add_argument("--yes", "-y", action="store_true",
                    help="start even when the duration estimate exceeds "
                         f"{estimate.LIMIT_S / 60:.0f} minutes")
    pr.add_argument("--cpu", help="QEMU -cpu MODEL (e.g. 486, pentium); for bochs, cpu: model=MODEL")
    pr.add_argument("--cpus", type=positive, metavar="N",
                    help="N CPUs: QEMU -smp N, the hosted build pinned to N CPUs (the last N allowed), and the "
                         "kernel's cpus=N unless --cmdline sets cpus= (suite=smp needs 2 or more); "
                         "not for bochs or qemu-model")
    pr.add_argument("--oversubscribe", action="store_true",
                    help="hosted: --cpus N may exceed this machine's CPUs: N workers share them (oversubscribe=1), "
                         "to check multi-CPU logic at scale on a small machine; such a run gives no timing answers")
    pr.add_argument("--boots", type=positive, metavar="N", help=(
                    "each side's boots (hosted: processes), run in turn A B B A A B ... so that A's k-th and "
                    "B's k-th pair up; each takes the rounds its command line takes in one process alone (runs=, "
                    "runs=auto's budget: not shared out), so an A/B takes 2 N such processes' time. Default: 1 where the TSC counts instructions (every "
                    f"boot is the same), else {emulators.DEFAULT_PAIRS}") if ab else (
                    "the run as N boots (hosted: N processes) of the command line, each told replicas=N "
                         "(runs= and runs=auto's budget are shared out among them), merged into one set whose "
                         "intervals are built over the boots: two processes or boots differ by more than the "
                         "rounds inside one; with replicas=M in the command line, N of M boots (join the logs of the rest). "
                         "For an A/B on one machine, `cleanroom ab` runs two sides in turn. Default: the command line's replicas=; else 1 where the TSC counts "
                         "instructions (qemu-icount, qemu-model, bochs: every boot is the same); else "
                         f"$CLEANROOM_BOOTS, else {emulators.DEFAULT_BOOTS}; 1 for --oversubscribe, --screendump, "
                         "--qr-pages and an ISO's own menu entry"))
    pr.add_argument("--memory", type=int, metavar="MB",
                    help=f"guest memory in MiB (default {emulators.DEFAULT_MEMORY_MB})")
    pr.add_argument("--qemu-arg", action="append", default=[], metavar="ARG",
                    help="extra QEMU argument, repeatable (write --qemu-arg=-flag for a leading dash)")
    pr.add_argument("--serial", choices=emulators.SERIAL_PORTS, default="com1",
                    help="QEMU emulators: the machine's only UART, which carries the log: com1 (default), "
                         "com2 (an ISA UART at 0x2F8) or pci (a PCI 16550, -device pci-serial)")
    pr.add_argument("--screendump", type=Path, metavar="FILE",
                    help="QEMU only (qemu, qemu-icount, iso, uefi): save the final screen as a PPM image "
                         "through QEMU's QMP socket; the kernel halts at done (exit=halt unless --cmdline picks "
                         "an exit), and after done (or a hang) the screen is saved and QEMU stopped")
    pr.add_argument("--qr-pages", type=Path, metavar="DIR",
                    help="QEMU only: after done, save every results QR page as DIR/qr-000.ppm, ... (one per "
                         "code, named by its index) through QEMU's QMP socket, pressing a key between pages, then "
                         "stop QEMU; adds exit=halt and qr=on unless --cmdline sets them (docs/QR.md; read them "
                         "back with decode-photos)")
    pr.add_argument("--model", metavar="PRESET",
                    help=f"qemu-model only: the cache/TLB model, {' | '.join(model.PRESETS)} | custom:SPEC "
                         f"(default {model.DEFAULT_PRESET}; SPEC in docs/MODEL.md)")
    pr.add_argument("--plugin", type=Path, default=root / "build" / "cachemodel" / "libcachemodel.so",
                    help="qemu-model: the model plugin (default: build/cachemodel/libcachemodel.so, made by `make`)")
    pr.add_argument("--emulator-binary", metavar="PATH",
                    help="program to run instead of the emulator (e.g. a wrapper or a test fake)")
    pr.add_argument("--quiet", action="store_true", help="no progress output")
    _add_asm(pr, "")
    if ab:
        _add_asm(pr, "b-")


def _add_asm(p: argparse.ArgumentParser, side: str) -> None:
    """The user's code (docs/USERCODE.md): a snippet (bench asm), a switch routine, a lock; side "b-": B's for ab
    (default: A's)."""
    whose = "B's " if side else ""
    code = p.add_mutually_exclusive_group()
    code.add_argument(f"--{side}asm", metavar="CODE",
                      help=f"{whose}32-bit assembly to time bare-metal (bench asm): lines separated by ';' or "
                           "newlines, assembled here with NASM and handed to the kernel as a module; {r} names a "
                           "register the harness picks (a chain on EAX and six independent chains); adds "
                           "--cmdline bench=asm when none is given")
    code.add_argument(f"--{side}asm-file", type=Path, metavar="FILE", help=f"{whose}snippet from a file (NASM syntax)")
    p.add_argument(f"--{side}asm-setup", metavar="CODE",
                   help=f"{whose}set-up code run before the copies (a line with {{r}}: once per register)")
    p.add_argument(f"--{side}switch-file", type=Path, metavar="FILE",
                   help=f"{whose}fiber switch routine (lib/userabi.h's cr_switch; .asm for NASM, .c for C): ctxsw "
                        "measures it beside the built-ins, as the case `user`")
    p.add_argument(f"--{side}switch-as", metavar="NAME", choices=usercode.BUILTIN_SWITCHES,
                   help=f"{whose}switch routine in place of this built-in (its cases keep the built-in's name, so "
                        "that an A/B pairs them with it)")
    p.add_argument(f"--{side}lock-file", type=Path, metavar="FILE",
                   help=f"{whose}lock (lib/userabi.h's cr_lock_init, cr_lock, cr_unlock, cr_lock_size): locks and "
                        "smplocks measure it beside the built-ins, as the lock `user`")


def _add_ab(pa: argparse.ArgumentParser, root: Path) -> None:
    _add_run(pa, root, ab=True)
    pa.epilog = ("Two runs made one after the other also differ by what the machine did over their seconds (a\n"
                 "guest's vCPU sharing its core, a frequency): on a VM that alone can read as 10-50 %. Run in\n"
                 "turn, both sides of a pair see the same state, and compare takes B/A pair by pair (the\n"
                 "Wilcoxon signed-rank interval of the pairs' ratios): on the 2-vCPU guest of docs/REPORT.md a\n"
                 "planted 10-20 % slowdown was resolved in 9 and 10 of 10 A/Bs of 20 pairs (two cases), where\n"
                 "two separate runs of five processes found it in 4. That guest was idle: with its two vCPUs\n"
                 "busy, 20 pairs missed it in 2 of 5 A/Bs and 40 (--boots 40) found it in 8 of 8. B's options\n"
                 "default to A's: an A/A shows the noise.\n\n"
                 "    cleanroom ab --emulator hosted --cmdline bench=ctxsw --b-hosted ../other/build/hosted/cleanroom-hosted\n"
                 "    cleanroom ab --emulator qemu --cmdline bench=locks --b-cmdline 'bench=locks paging=on'\n\n"
                 "compare out/a out/b pairs them again (their results.json say they ran in turn).\n\n"
                 + results.EXIT_HELP)
    pa.add_argument("--b-cmdline", metavar="CMDLINE", help="B's command line (default: A's, --cmdline)")
    pa.add_argument("--b-kernel", type=Path, metavar="ELF", help="B's kernel ELF (default: A's, --kernel)")
    pa.add_argument("--b-iso", type=Path, metavar="ISO", help="B's ISO (default: A's, --iso)")
    pa.add_argument("--b-hosted", type=Path, metavar="PATH", help="B's hosted build (default: A's, --hosted)")


def _add_capture(pc: argparse.ArgumentParser, root: Path) -> None:
    pc.epilog = results.EXIT_HELP
    pc.add_argument("--port", required=True, help="serial device, e.g. /dev/ttyUSB0")
    pc.add_argument("--baud", type=int, default=115200, help="default 115200")
    pc.add_argument("--out", type=Path, help="results directory (default results/<UTC time>-serial/)")
    pc.add_argument("--silence", type=seconds, default=runner.DEFAULT_SILENCE_S, metavar="S",
                    help="after the first record, seconds without one before the capture counts as hung "
                         f"(default {runner.DEFAULT_SILENCE_S:g}; a suite with long cases needs more)")
    pc.add_argument("--timeout", type=seconds, metavar="T",
                    help="a limit on the total seconds, the wait for the first record included "
                         "(default: none, wait until Ctrl-C)")
    pc.add_argument("--quiet", action="store_true", help="no progress output")


def _add_decode_photos(pq: argparse.ArgumentParser, root: Path) -> None:
    pq.epilog = ("The kernel shows its record log as numbered QR codes when the run had no serial\n"
                 "port (qr=auto) or when asked (qr=on); docs/QR.md. Photograph every screen (any order,\n"
                 "repeats are fine), then give all the images here: each is read with zxing-cpp, the codes\n"
                 "are checked (every code's CRC, the same run), put back in order and inflated, and\n"
                 "serial.log, results.json and results.csv are written as `capture` writes them.\n"
                 "Missing codes are named as the screen numbers them; the records before the first\n"
                 "missing code are still written (complete: no, exit 4). An image without a\n"
                 "readable code is named.\n\n" + results.EXIT_HELP)
    pq.add_argument("images", type=Path, nargs="+", metavar="IMG",
                    help="photos or screenshots (PNG, JPEG, PPM: what Pillow reads)")
    pq.add_argument("--out", type=Path, help="results directory (default results/<UTC time>-photos/)")


def _add_report(pp: argparse.ArgumentParser, root: Path) -> None:
    from .reports import workset as benchreport, frame as report
    from .records import model
    pp.epilog = (f"Prints at most about {report.SUMMARY_BUDGET} lines (a run on more than 2 CPUs "
                 f"{report.SMP_SUMMARY_BUDGET}) of at most {WIDTH} columns: the\n"
                 "machine and how far its timing can be trusted, then each benchmark's answers to the papers'\n"
                 "questions with the papers' numbers beside them in square brackets. Every derived value\n"
                 "carries an interval with its coverage (95 % where the runs allow; cases measured in turn\n"
                 "paired round by round); a legend line names the method and coverage and says what ~0\n"
                 "(inside the run-to-run noise), ? (not resolved) and \"noise alone\" (what chance resolves)\n"
                 "mean.\n"
                 "The full tables go to OUT/report.txt (--full prints them too); with workset results\n"
                 "the quantities of Klimiankou 2018, Figures 3-8, go to OUT/derived.csv, the figures to\n"
                 "OUT/plots/*.png (docs/REPORT.md):\n"
                 + benchreport.quantity_help())
    pp.add_argument("path", type=Path, help="results directory, results.json or serial.log")
    pp.add_argument("--out", type=Path,
                    help="where report.txt, derived.csv and plots/ go (default: the results directory: PATH, "
                         "or the directory of the file PATH names)")
    pp.add_argument("--boot", type=positive, metavar="K",
                    help="report boot K of a log of several boots (PATH/boot-K when parse wrote it)")
    pp.add_argument("--full", action="store_true", help="print every table after the summary (report.txt)")
    pp.add_argument("--no-plots", action="store_true", help="text and CSV files only (no matplotlib)")
    pp.add_argument("--figures", choices=model.FIGURE_CHOICES, default="auto",
                    help="workset figures from: model = the cache/TLB model's cycles (results of --emulator "
                         "qemu-model; files named *-model), tsc = the records' TSC figures, auto (default) = "
                         "model when the results carry model figures, else tsc")


def _add_compare(pm: argparse.ArgumentParser, root: Path) -> None:
    from .reports import compare
    pm.epilog = ("Cases match on bench, case and params (paging, pagesize and reps included).\n\n"
                 "Two sets: the table shows both medians and B/A, the Hodges-Lehmann ratio of the two runs'\n"
                 "samples with its Mann-Whitney interval (two runs are never paired); cases only one side\n"
                 "has are listed after it. Then every derived quantity (workset's Figures 3-8, the lock,\n"
                 "create, peers and aspace ratios) of both runs with its interval, B - A by the same\n"
                 "unpaired method, and whether the runs differ beyond it.\n\n"
                 "Three sets or more (or --ref): a key naming each set's id (A, B, C, ...), CPU, platform\n"
                 "and TSC unit; one table per benchmark and per derived quantity with a column per set:\n"
                 "its median (or value) with its interval, and its ratio to the reference (a derived\n"
                 "value: its difference) by the same unpaired method. A table that only one set has is\n"
                 "named, not printed. Wide tables wrap into column groups.\n\n"
                 f"Cases in different units (instructions against TSC ticks) are marked \"{compare.UNITS_DIFFER}\",\n"
                 f"never divided. No line is wider than {WIDTH} columns. compare.csv (a row per case; with\n"
                 "three sets or more, a row per case and set) and compare-derived.csv (likewise per derived\n"
                 "quantity) go to --out, by default the last set's results directory (B's for two: B, or\n"
                 "the directory of the file B names); --plots draws PNG figures beside them.")
    pm.add_argument("a", type=Path, metavar="A", help="the first set (the reference unless --ref): a results "
                                                      "directory, results.json or serial.log")
    pm.add_argument("b", type=Path, metavar="B", help="the other result set")
    pm.add_argument("more", type=Path, nargs="*", metavar="C", help="more result sets, each a column of its own")
    pm.add_argument("--ref", metavar="ID", help="the set the others are divided by (cases) and subtracted from "
                                                "(derived values): its id, A, B, C, ... (default A)")
    pm.add_argument("--html", type=Path, metavar="OUT.html",
                    help="also write one page with a column per set: its answers, each family's figures after them "
                         "(report.html's layout, html.py)")
    pm.add_argument("--out", type=Path, help="directory for compare.csv (default: the last set's results "
                                             "directory, B's for two)")
    pm.add_argument("--paired", action="store_true",
                    help="two sets whose k-th processes (boots) ran next to each other (run in turn, e.g. by "
                         "joining logs): B/A pair by pair, Wilcoxon signed-rank; sets `cleanroom ab` wrote pair "
                         "without it")
    pm.add_argument("--plots", action="store_true",
                    help="also draw the figures (matplotlib), beside compare.csv: each working-set quantity "
                         "against size with a line per set, the other tables as bars; a panel per unit")


def _add_stick(pi: argparse.ArgumentParser, root: Path) -> None:
    pi.epilog = ("The ISO's one menu entry boots the kernel with CMDLINE (exit=auto added: on a real PC it halts at "
                 "the end and shows its results; docs/HARDWARE.md), the user's code beside it as multiboot2 modules "
                 "(GRUB's module2), which the kernel finds as --emulator iso and uefi hand them over. `make iso` "
                 "builds the ISO of the built-in menu (iso/grub.cfg). Write it to a stick with dd "
                 "(docs/HARDWARE.md).\n\nexit status: 0 written, 5 bad arguments or a tool missing")
    pi.add_argument("--out", type=Path, required=True, help="the ISO to write")
    pi.add_argument("--cmdline", help="the kernel command line (default: the benchmarks that measure the user's code)")
    pi.add_argument("--kernel", type=Path, default=root / "build" / "cleanroom.elf",
                    help="kernel ELF (default: build/cleanroom.elf, made by `make`)")
    _add_asm(pi, "")


def _add_check(pg: argparse.ArgumentParser, root: Path) -> None:
    from .reports import check
    pg.epilog = (check.__doc__.split("\n\n", 1)[1].rstrip() + "\n\n"
                 "    cleanroom check results/base results/this        # qemu-icount, qemu-model, bochs: exact\n"
                 "    cleanroom check results/ab-hosted                # the a/ and b/ of `cleanroom ab --out`\n\n"
                 + check.EXIT_HELP)
    pg.add_argument("sets", type=Path, nargs="+", metavar="SET",
                    help="BASELINE RUN (results directories, results.json or serial.log), or one directory "
                         "`cleanroom ab` wrote (its a/ and b/)")
    pg.add_argument("--threshold", type=percent, default=check.DEFAULT_THRESHOLD * 100, metavar="PERCENT",
                    help=f"real clock: how much slower B may be before a resolved B/A fails, in per cent "
                         f"(default {check.DEFAULT_THRESHOLD * 100:g}); an exact clock allows no change")


def _add_history(ph: argparse.ArgumentParser, root: Path) -> None:
    from . import history
    ph.epilog = history.HELP + "\n\n" + history.EXIT_HELP
    ph.add_argument("range", metavar="REV_RANGE",
                    help="the commits, as git rev-list takes them: A..B (B's commits since A, A itself left out), "
                         "or one revision and its ancestors (with --last)")
    ph.add_argument("--cmdline", required=True, help='the kernel command line each commit runs, e.g. "bench=ctxsw"')
    ph.add_argument("--emulator", choices=emulators.names(), default=history.DEFAULT_EMULATOR,
                    help=f"default {history.DEFAULT_EMULATOR} (exact: a count that changed, changed at that commit)")
    ph.add_argument("--last", type=positive, metavar="N", help="only the range's last N commits")
    ph.add_argument("--boots", type=positive, metavar="N",
                    help="each commit's boots (processes) where the clock is real (default: run's)")
    ph.add_argument("--store", type=Path, metavar="DIR",
                    help="where the worktrees, builds and each commit's results are kept between calls "
                         f"(default: {history.DEFAULT_STORE} in the repository)")
    ph.add_argument("--repo", type=Path, help="the git repository (default: the one this tool is in)")
    ph.add_argument("--out", type=Path,
                    help="where history.txt, history.csv and history.html go (default: the series' directory in "
                         "the store)")
    ph.add_argument("--no-plots", action="store_true", help="history.txt, .csv and .html without the figure")
    ph.add_argument("--quiet", action="store_true", help="no progress output")


def _add_lava_job(pj: argparse.ArgumentParser, root: Path) -> None:
    from .machines import lavajob
    lava_rows = ", ".join(e.name for e in emulators.EMULATORS if e.loads_kernel)
    pj.epilog = ("The job (YAML, on stdout or --out) deploys the kernel (or ISO), boots it with LAVA's qemu\n"
                 "method or, on an x86 PC, with iPXE or GRUB commands that load it from the dispatcher's TFTP\n"
                 "server, and monitors the serial port: every self-test becomes a LAVA test case (pass/fail,\n"
                 f"suite {lavajob.MONITOR_SELFTEST}), every result one with its median as the measurement\n"
                 f"(suite {lavajob.MONITOR_RESULTS}); the done record ends it. Timeouts come from the duration\n"
                 "estimate. The job is checked with LAVA's own schema (Debian's lava-common) before it is\n"
                 "written. lava-fetch turns the job's log into results.json. docs/LAB.md has the whole lab.\n\n"
                 "exit status: 0 written, 5 bad arguments (or a job LAVA's schema refuses)")
    pj.add_argument("--device-type", required=True, choices=lavajob.DEVICE_TYPES,
                    help="qemu (LAVA starts QEMU on its dispatcher) or x86 (a PC that boots from the network)")
    pj.add_argument("--boot", choices=lavajob.BOOTS,
                    help="x86: iPXE loads the multiboot kernel; GRUB loads it, or mounts the ISO and loads its kernel")
    src = pj.add_mutually_exclusive_group()
    src.add_argument("--kernel-url", metavar="URL",
                     help="the kernel ELF for LAVA to download (http://, https://, file://; qemu default: "
                          "file:// of build/cleanroom.elf, for lava-run on this machine)")
    src.add_argument("--iso-url", metavar="URL", help="the ISO instead (qemu: its default menu entry; x86: --boot grub)")
    pj.add_argument("--cmdline", help='kernel command line, e.g. "suite=quick" (exit=qemu on qemu, exit=halt on x86 '
                                      "is added when it names no exit=)")
    pj.add_argument("--emulator", metavar="ROW",
                    help=f"qemu: what LAVA's QEMU is to be, one of {lava_rows} (default {emulators.DEFAULT_EMULATOR}; "
                         "LAVA runs KVM itself unless the job says no_kvm)")
    pj.add_argument("--job-name", help="the job's name (default: cleanroom, the command line and where)")
    pj.add_argument("--notify", metavar="URL", help="a URL LAVA posts the results to (JSON) when the job has finished")
    pj.add_argument("--priority", default="medium", choices=("high", "medium", "low"), help="default medium")
    pj.add_argument("--tag", action="append", default=[], metavar="TAG",
                    help="run only on a LAVA device with this tag, repeatable (tag each PC with its own name to "
                         "pick it)")
    pj.add_argument("--lava-device-type", metavar="NAME",
                    help="the job's device_type when the lab's is not qemu or x86 (e.g. a type of its own whose "
                         "PCs boot GRUB from the network)")
    pj.add_argument("--kernel", type=Path, default=root / "build" / "cleanroom.elf",
                    help="qemu without --kernel-url: the kernel whose file:// URL the job names")
    pj.add_argument("--out", type=Path, help="write the job here (default: stdout)")
    _add_asm(pj, "")
    pj.add_argument("--module-url", metavar="URL",
                    help="where LAVA downloads the user's code (--asm, --switch-file, --lock-file: one piece a job), "
                         "which is written beside --out as JOB.user.bin (default: its file:// URL, for lava-run on "
                         "this machine)")


def _add_lava_device(pd: argparse.ArgumentParser, root: Path) -> None:
    from .machines import lavadevice
    pd.epilog = ("LAVA's dispatcher (lava-run) reads a device's configuration: its dictionary (a template that\n"
                 "extends its device type's, e.g. {% extends 'qemu.jinja2' %}) rendered with the job's context:\n"
                 "block as the template's variables, as LAVA's server renders it for each job. LAVA's qemu type\n"
                 "takes QEMU's program from the context's arch: rendered without it, the job fails in validate\n"
                 "(\"Cannot find command 'qemu-system-'\"). The templates are lava-server's: by default those\n"
                 f"`tools/setup.sh lab-packages` unpacks into {lavadevice.LAB_TEMPLATES}, else a server's own in\n"
                 f"{' or '.join(map(str, lavadevice.SERVER_TEMPLATES))}.\n"
                 "The configuration is checked with LAVA's device schema (Debian's lava-common). For a device on\n"
                 "a server, --context prints what `lavacli devices dict get --render --context` needs.\n"
                 "docs/LAB.md has the recipe.\n\n"
                 "exit status: 0 written, 5 bad arguments (or a configuration LAVA's schema refuses)")
    pd.add_argument("--job", type=Path, required=True, metavar="JOB.yaml", help="the job (lava-job's, or any)")
    kind = pd.add_mutually_exclusive_group()
    kind.add_argument("--device-type", metavar="NAME", help="the template to extend (default: the job's device_type)")
    kind.add_argument("--dictionary", type=Path, metavar="FILE.jinja2",
                      help="the device's dictionary (default: the one line that extends the device type's template)")
    pd.add_argument("--templates", type=Path, metavar="DIR", help="the device-type templates' directory")
    pd.add_argument("--context", action="store_true",
                    help="print the job's context as one line of YAML (lavacli's --context) instead")
    pd.add_argument("--out", type=Path, help="write the configuration here (default: stdout)")


def _add_lava_fetch(pf: argparse.ArgumentParser, root: Path) -> None:
    pf.epilog = ("SOURCE is a LAVA job log as LAVA writes it (YAML lines {dt, lvl, msg}: the web UI's\n"
                 "download, `lavacli jobs logs --raw ID`, or lava-run's output), or a job id, fetched with\n"
                 "`lavacli jobs logs --raw ID` (and the device from `lavacli jobs show --yaml ID`); lavacli\n"
                 "must be installed and configured with an identity (docs/LAB.md). The device's serial\n"
                 "lines become serial.log, which is checked and written as results.json and results.csv\n"
                 "exactly as `capture` writes them; results.json's run names the LAVA job, the device and\n"
                 "the machine (from the hello and cpu records), and the test cases LAVA's monitors made.\n\n"
                 + results.EXIT_HELP)
    pf.add_argument("source", metavar="SOURCE", help="a LAVA job log file, or a LAVA job id")
    pf.add_argument("--out", type=Path, help="results directory (default results/<UTC time>-lava/)")
    pf.add_argument("--device", help="the LAVA device's name (default: what lavacli says for a job id, else none)")
    pf.add_argument("--identity", "-i", help="lavacli's identity (lavacli -i)")
    pf.add_argument("--lavacli", default="lavacli", metavar="PROGRAM", help="the lavacli program (default: lavacli)")


def _add_make_run(pk: argparse.ArgumentParser, root: Path) -> None:
    pk.epilog = ("What `make run` does once it has built: `run` three times, each into a directory of OUT: kernel/\n"
                 "(--kernel-cmdline under qemu-icount), hosted/ (--hosted-cmdline, the hosted build on one CPU) and\n"
                 "smp/ (--smp-cmdline, the hosted build; its cpus= says on how many); then OUT's parent's latest\n"
                 "points at OUT, and `report` prints each summary (writing report.txt and the plots beside\n"
                 "each set). The Makefile gives the three command lines (CMDLINE, HOSTED_CMDLINE,\n"
                 "HOSTED_SMP_CMDLINE). A run that does not end with status 0 stops it there, with that status,\n"
                 "as make stops at a failing command.\n\n" + results.EXIT_HELP)
    pk.add_argument("--kernel-cmdline", required=True, metavar="CMDLINE", help="the kernel's, under qemu-icount")
    pk.add_argument("--hosted-cmdline", required=True, metavar="CMDLINE", help="the hosted build's, on one CPU")
    pk.add_argument("--smp-cmdline", required=True, metavar="CMDLINE", help="the hosted build's multi-CPU run")
    pk.add_argument("--out", type=Path, help="results directory of the three (default results/<UTC time>-make-run/)")
    pk.add_argument("--quiet", action="store_true", help="no progress output from the runs")


ADDERS: dict[str, Callable[[argparse.ArgumentParser, Path], None]] = {
    "parse": _add_parse, "run": _add_run, "ab": _add_ab, "capture": _add_capture, "decode-photos": _add_decode_photos,
    "report": _add_report, "compare": _add_compare, "lava-job": _add_lava_job, "lava-device": _add_lava_device,
    "lava-fetch": _add_lava_fetch, "stick": _add_stick, "check": _add_check, "history": _add_history, "make-run": _add_make_run}


def build_parser(command: str | None = None) -> Parser:
    """The whole parser, or (command given) one whose other commands are only named: building a
    command's options imports what its help text quotes."""
    root = runner.repo_root()
    p = Parser(prog="cleanroom", description="Host tool of the cleanroom measurement kernel.",
               epilog=results.EXIT_HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, add in ADDERS.items():
        command_parser = sub.add_parser(name, help=COMMANDS[name], formatter_class=argparse.RawDescriptionHelpFormatter)
        if command is None or command == name:
            add(command_parser, root)
    return p


def _cannot_write(command: str, where: str, exc: OSError, err: TextIO) -> int:
    """A command that could not write its files: say where and why; the set-up status."""
    err.write(f"cleanroom {command}: cannot write {where}: {exc.strerror or exc}\n")
    return results.EXIT_SETUP


def _results_dir(path: Path) -> Path:
    return path if path.is_dir() else path.parent


def _set_key(rs: results.ResultSet) -> Path:
    """What makes two arguments one set: the file loaded, or its directory for a set's own files."""
    path = rs.path.resolve()
    return path.parent if path.name in (results.RESULTS_JSON, results.SERIAL_LOG) else path


def _load_sets(paths: list[Path], err: TextIO) -> list[results.ResultSet] | None:
    """Every set, or None after saying which could not be read or was given twice (three sets or more;
    two may be one set twice: the identity check)."""
    from .reports import comparesets
    sets = []
    ids = comparesets.set_ids(len(paths))
    for ident, path in zip(ids, paths):
        try:
            sets.append(results.load(path))
        except (OSError, ValueError) as exc:
            err.write(f"cleanroom compare: set {ident}: {exc}\n")
            return None
    seen: dict[Path, str] = {}
    for ident, rs in zip(ids, sets):
        key = _set_key(rs)
        if len(sets) > 2 and key in seen:
            err.write(f"cleanroom compare: {seen[key]} and {ident} are the same result set ({key}): "
                      "give each set once\n")
            return None
        seen.setdefault(key, ident)
    return sets


def _pair_in_turn(sets: list[results.ResultSet], asked: bool, err: TextIO) -> bool:
    """Two sets run in turn (both results.json name one token; or --paired) are told so (replicas.TURNS);
    False after saying why --paired cannot pair them."""
    from .records import replicas
    tokens = {replicas.turns_token(rs.doc) for rs in sets}
    token = tokens.pop() if len(sets) == 2 and len(tokens) == 1 else None
    if not asked and token is None:
        return True
    counts = [replicas.count(rs.records) for rs in sets]
    why = None
    if len(sets) != 2:
        why = "it pairs two sets"
    elif min(n for n, _level in counts) < 2:
        why = "each set needs two processes (boots) or more"
    elif counts[0][0] != counts[1][0]:
        level = "processes" if counts[0][1] == replicas.LEVEL_PROCESS else "boots"
        why = f"A has {counts[0][0]} {level}, B {counts[1][0]}: the k-th of each pair up"
    if why is not None:
        if asked:
            err.write(f"cleanroom compare: --paired: {why}; `cleanroom ab` runs two sides in turn\n")
            return False
        return True
    for rs in sets:
        replicas.stamp_turns(rs.records, token or "paired")
    return True


def _write_compare(sets: list[results.ResultSet], sides: list[comparesets.Side], ref: int | None,
                   matches: list[compare.Match], derived: list[compare.DerivedMatch], out_dir: Path) -> list[Path]:
    """compare.csv and compare-derived.csv (when there are derived values): two sets' layout when ref is
    None, else a row per case (value) and set."""
    from .reports import compare, comparesets
    if ref is None:
        pairs, two = compare.as_pairs(matches), compare.as_derived_pairs(derived)
        return ([compare.write_csv(pairs, out_dir / compare.COMPARE_CSV, compare.side_units(*sets))]
                + ([compare.write_derived_csv(two, out_dir / compare.DERIVED_CSV)] if two else []))
    return ([comparesets.write_csv(matches, sides, ref, out_dir / compare.COMPARE_CSV)]
            + ([comparesets.write_derived_csv(derived, sides, ref, out_dir / compare.DERIVED_CSV)] if derived else []))


def cmd_compare(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from .reports import clocks, compare, compareplots, comparesets
    paths = [args.a, args.b, *args.more]
    ids = comparesets.set_ids(len(paths))
    if args.ref is not None and args.ref.upper() not in ids:
        err.write(f"cleanroom compare: --ref {args.ref!r}: no such set; the sets are {', '.join(ids)}\n")
        return results.EXIT_SETUP
    sets = _load_sets(paths, err)
    if sets is None or not _pair_in_turn(sets, args.paired, err):
        return results.EXIT_SETUP
    out_dir = args.out if args.out is not None else _results_dir(paths[-1])
    loaded = sets  # each set as its own report reads it (the page's columns)
    # TSCs of different rates: every TSC-timed figure in nanoseconds, each set's ticks over its own rate
    timing = clocks.timing(ids, sets)
    derived = compare.match_derived(sets, timing)
    sets = clocks.in_time(timing, sets)
    sides = comparesets.sides_of(sets)
    matches = compare.match_up(sets)
    # two sets without --ref: A, B and B/A (compare.py); else a column per set against the reference
    ref = None if len(sets) == 2 and args.ref is None else ids.index((args.ref or ids[0]).upper())
    if ref is None:
        lines = compare.render(sets[0], sets[1], compare.as_pairs(matches), compare.as_derived_pairs(derived), timing)
    else:
        lines = comparesets.render(sides, matches, derived, ref, timing)
    for line in lines:
        out.write(line + "\n")
    try:
        written = _write_compare(sets, sides, ref, matches, derived, out_dir)
        plots = compareplots.write_all(sides, matches, derived, out_dir) if args.plots else []
    except OSError as exc:
        return _cannot_write("compare", f"into {out_dir}", exc, err)
    except ImportError:
        err.write(f"cleanroom compare: --plots: {not_installed('matplotlib')}\n")
        return results.EXIT_SETUP
    figures = f" and {len(plots)} figure{'s' if len(plots) != 1 else ''} (compare-*.png)" if plots else ""
    out.write(f"wrote {' and '.join(str(p) for p in written)}{figures}\n")
    if args.html is not None:
        try:
            page = _compare_page(loaded, ids, args.html)
        except OSError as exc:
            return _cannot_write("compare", f"--html {args.html}", exc, err)
        except ImportError as exc:
            err.write(f"cleanroom compare: --html: {not_installed(exc.name or 'jinja2')}\n")
            return results.EXIT_SETUP
        out.write(f"wrote {page}\n")
    return 0


def _compare_page(sets: list[Any], ids: list[str], path: Path) -> Path:
    """compare --html: a column per set, each its own summary's lines with its families' figures (drawn into
    a temporary directory and inlined), linking its results files."""
    import tempfile

    from .reports import frame, html

    columns = []
    with tempfile.TemporaryDirectory(prefix="cleanroom-compare-") as tmp:
        for ident, rs in zip(ids, sets):
            figures = {name: [p for p in files if p.suffix == ".png"]
                       for name, files in frame.files_by_family(frame.run_of(rs), Path(tmp) / ident).items()}
            columns.append(frame.page_column(rs, ident, figures, path.resolve().parent))
        path.parent.mkdir(parents=True, exist_ok=True)
        return html.write(path, f"cleanroom compare: {', '.join(f'{i} {rs.path}' for i, rs in zip(ids, sets))}",
                          columns)


def cmd_parse(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from .records import model
    try:
        data = args.log.read_bytes()
    except OSError as exc:
        err.write(f"cleanroom parse: cannot read {args.log}: {exc.strerror or exc}\n")
        return results.EXIT_SETUP
    boots = parse_sets(data)
    if args.boot is not None:
        try:
            boots = [pick_boot(boots, args.boot, str(args.log))]
        except ValueError as exc:
            err.write(f"cleanroom parse: {exc}\n")
            return results.EXIT_SETUP
    out_dir = args.out if args.out is not None else args.log.parent
    # Re-parsing a run's own log keeps what the run recorded about itself.
    run = results.previous_run(out_dir)
    model_file = args.log.parent / model.MODEL_FILE
    model_ok = True
    ran = emulators.find((run or {}).get("emulator"))
    dirs = results.boot_dirs(out_dir, boots)
    written = []
    for res, boot_dir in zip(boots, dirs):
        boot_run = run
        if model_file.is_file() or (ran is not None and ran.model_plugin):
            joined = model.join_file(res.records, model_file)  # a qemu-model run's log: join its model again
            boot_run = dict(run or {}, model=joined.run)
            res.problems.extend(joined.problems)
            model_ok = model_ok and joined.ok
        written.append(results.write_results(boot_dir, res, str(args.log), boot_run))
    for line in results.boots_summary(boots, dirs):
        out.write(line + "\n")
    for json_path, csv_path in written:
        out.write(f"wrote {json_path} and {csv_path}\n")
    status = results.boots_exit_status(boots)
    return results.EXIT_DAMAGED if status == results.EXIT_OK and not model_ok else status


def _out_dir(args: argparse.Namespace, label: str) -> tuple[Path, bool]:
    """--out, or a new results directory of this run's own (created here); whether it is new."""
    if args.out is not None:
        return args.out, False
    base = os.environ.get(RESULTS_ENV)
    return runner.new_results_dir(Path(base) if base else runner.repo_root() / "results", label), True


def _not_started(message: str, out_dir: Path, is_new: bool, err: TextIO) -> int:
    """A run that could not start: say why; a results directory made for it goes again."""
    if is_new:
        runner.discard_results_dir(out_dir)
    err.write(message + "\n")
    return results.EXIT_SETUP


def _check_duration(args: argparse.Namespace, emu: emulators.Emulator, memory: int,
                    err: TextIO, times: int = 1, sweep: tuple[float | None, float] | None = None) -> tuple[bool, float]:
    """Print the duration estimate (of `times` runs of the command line: an A/B's boots; `sweep`: the
    budget and added share of the processes runs=auto may add, sweep.py); (may start, silence limit for
    the run)."""
    silence = args.silence if args.silence is not None else runner.DEFAULT_SILENCE_S
    # the multi-CPU benchmarks' k sweeps: the CPUs a hosted run gets (none counted for workers that share
    # CPUs, whose time is the scheduler's)
    allowed = len(os.sched_getaffinity(0))
    cpus = 1 if not emu.hosted or args.oversubscribe else (
        min(args.cpus, allowed) if args.cpus else emulators.cmdline_cpus(args.cmdline, allowed) or 1)
    try:
        p = estimate.plan(args.cmdline, hosted=emu.hosted, cpus=cpus)
    except estimate.CmdlineError:
        return True, silence  # the kernel will reject the command line itself
    except defaults.DefaultsError as exc:
        err.write(f"cleanroom run: not started: no duration estimate: {exc}\n")
        return False, silence
    est = estimate.estimate(p, args.emulator, memory)
    if est is None and p.unmodelled() and estimate.speed_of(args.emulator) is not None and not args.quiet:
        err.write(f"no duration estimate: {estimate.unmodelled_text(p.unmodelled())} "
                  f"(docs/REPORT.md, \"The duration estimate of run\")\n")
    if est is not None and times > 1:
        est = replace(est, seconds=est.seconds * times,
                      seconds_min=est.seconds_min * times if est.seconds_min is not None else None)
    if est is not None and sweep is not None and est.rounds is not None:
        est = est.with_sweep(*sweep)
    if est is not None:
        long = est.seconds > estimate.LIMIT_S and emu.refuses_long
        if long or (est.seconds >= 30 and not args.quiet):
            err.write(est.text(args.emulator) + "\n")
        if long and not args.yes:
            err.write(f"cleanroom run: not started: the estimate exceeds {estimate.LIMIT_S / 60:.0f} minutes; "
                      f"add --yes to run it anyway, or lower reps=, sizes=/maxsize= or runs=\n")
            return False, silence
    if args.silence is None:
        silence = _silence_for_cases(p, args, memory, err)
    return True, silence


def _silence_for_cases(p: estimate.Plan, args: argparse.Namespace, memory: int, err: TextIO) -> float:
    """The default silence limit, raised when one case may take longer than it allows."""
    cases = estimate.case_seconds(p, args.emulator, memory)
    if not cases:
        return runner.DEFAULT_SILENCE_S
    bench, case_s = max(cases.items(), key=lambda item: item[1])
    silence = estimate.silence_for(case_s, runner.DEFAULT_SILENCE_S)
    if silence > runner.DEFAULT_SILENCE_S and not args.quiet:
        err.write(f"silence limit raised to {silence:.0f} s for this run (longest case estimated at "
                  f"{estimate.duration_text(case_s)}, in {bench}; --silence chooses)\n")
    return silence


def _boots(args: argparse.Namespace, emu: emulators.Emulator) -> int:
    """How many boots (processes) the run is (--boots' help); ValueError for a bad $CLEANROOM_BOOTS."""
    in_line = emulators.cmdline_replicas(args.cmdline)
    if args.boots is not None:  # with replicas=N in the line: some of N boots, the rest joined later
        return args.boots
    if in_line is not None:
        return in_line
    one = (emu.tsc.exact or args.oversubscribe or args.screendump is not None or args.qr_pages is not None
           or (emu.needs_iso and args.cmdline is None))
    if one:
        return 1
    env = os.environ.get(BOOTS_ENV)
    if env is not None:
        if not env.isdigit() or int(env) < 1:
            raise ValueError(f"${BOOTS_ENV}={env!r}: a whole number of boots, 1 or more")
        return int(env)
    return emulators.DEFAULT_BOOTS


def _run_spec(args: argparse.Namespace, emu: emulators.Emulator, err: TextIO,
              command: str = "run") -> emulators.RunSpec | None:
    """What run's (and ab's) options ask for; None after saying what does not apply."""
    if emu.hosted and args.memory is not None:
        err.write(f"cleanroom {command}: --memory does not apply to {emu.name}\n")
        return None
    if args.cpus is not None and not emu.smp:
        err.write(f"cleanroom {command}: --cpus does not apply to {emu.name} (it applies to: "
                  f"{', '.join(e.name for e in emulators.EMULATORS if e.smp)})\n")
        return None
    memory = args.memory if args.memory is not None else emulators.DEFAULT_MEMORY_MB
    return emulators.RunSpec(
        emulator=args.emulator, kernel=args.kernel, iso=args.iso, cmdline=args.cmdline,
        cpu=args.cpu, memory=memory, qemu_args=list(args.qemu_arg), binary=args.emulator_binary,
        hosted=args.hosted, host_cpu=args.host_cpu, cpus=args.cpus, oversubscribe=args.oversubscribe,
        serial=args.serial,
        screendump=args.screendump, model=args.model, plugin=args.plugin, qr_pages=args.qr_pages)


def _user_code(args: argparse.Namespace, side: str = "") -> list[usercode.UserCode]:
    """The side's code (side "b_": B's): the snippet assembled, the switch routine and the lock built; UserCodeError
    before anything boots."""
    def given(name: str) -> Any:
        return getattr(args, f"{side}{name}", None)

    flag = "--" + side.replace("_", "-")
    codes: list[usercode.UserCode] = []
    if given("asm") is not None or given("asm_file") is not None:
        codes.append(usercode.snippet(given("asm"), given("asm_file"), given("asm_setup")))
    elif given("asm_setup") is not None:
        raise usercode.UserCodeError(f"{flag}asm-setup needs {flag}asm or {flag}asm-file")
    if given("switch_file") is not None:
        codes.append(usercode.primitive(given("switch_file"), usercode.KIND_SWITCH, given("switch_as") or ""))
    elif given("switch_as") is not None:
        raise usercode.UserCodeError(f"{flag}switch-as needs {flag}switch-file")
    if given("lock_file") is not None:
        codes.append(usercode.primitive(given("lock_file"), usercode.KIND_LOCK))
    return codes


def _with_user_code(spec: emulators.RunSpec, codes: list[usercode.UserCode], where: Path) -> emulators.RunSpec:
    """The spec with the code's modules (written into where) and what results.json keeps of them."""
    if not codes:
        return spec
    return replace(spec, modules=tuple(usercode.write_module(c, where) for c in codes),
                   user_code=usercode.infos(codes))


def cmd_run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from . import sweep
    emu = emulators.get(args.emulator)  # argparse took it from the table's names
    try:
        codes = _user_code(args)
    except usercode.UserCodeError as exc:
        err.write(f"cleanroom run: {exc}\n")
        return results.EXIT_SETUP
    if args.cmdline is None:
        args.cmdline = usercode.default_cmdline(codes)
    budget = None
    if not emu.tsc.exact:  # a real clock: budget=Ns is the whole run's, spent by the host (sweep.py)
        args.cmdline, budget = sweep.take_budget(args.cmdline)
    spec = _run_spec(args, emu, err)
    if spec is None:
        return results.EXIT_SETUP
    memory = spec.memory
    try:
        boots = _boots(args, emu)
    except ValueError as exc:
        err.write(f"cleanroom run: {exc}\n")
        return results.EXIT_SETUP
    may_start, silence = _check_duration(args, emu, HOSTED_MEMORY_MB if emu.hosted else memory, err,
                                         sweep=(budget, sweep.DEFAULT_ADDED_SHARE) if boots > 1 else None)
    if not may_start:
        return results.EXIT_SETUP
    limits = runner.Limits(silence=silence, timeout=args.timeout)
    out_dir, is_default = _out_dir(args, args.emulator)
    progress = Progress.for_stream(err, args.quiet)

    def started(path: Path) -> None:
        if is_default:
            runner.point_latest(path)

    try:
        spec = _with_user_code(spec, codes, out_dir)
        more = sweep.Sweep(budget, runner.replica_word(emu)) if boots > 1 else None
        outcome = runner.run_emulator(spec, out_dir, limits, progress, on_start=started, boots=boots, more=more)
    except emulators.SetupError as exc:
        return _not_started(f"cleanroom run: {exc}", out_dir, is_default, err)
    tallies = sweep.stamp(out_dir, outcome.run) if more is not None else []
    runner.print_outcome(outcome, out, err)
    for line in tallies:
        out.write("\n".join(textwrap.wrap(f"decided: {line}", WIDTH, subsequent_indent="    ")) + "\n")
    status = results.boots_exit_status(outcome.boots, outcome.cut_short)
    # the model's samples not matching the results is damage, like a missing record
    return results.EXIT_DAMAGED if status == results.EXIT_OK and not outcome.model_ok else status


def cmd_ab(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    import uuid
    emu = emulators.get(args.emulator)
    alone = [f"--{name.replace('_', '-')}" for name in ("screendump", "qr_pages", "oversubscribe") if getattr(args, name)]
    if alone:
        err.write(f"cleanroom ab: {', '.join(alone)} applies to a run of its own (cleanroom run), not to an A/B\n")
        return results.EXIT_SETUP
    try:
        codes = _user_code(args)
        b_codes = usercode.merged(codes, _user_code(args, "b_"))  # B's own, else A's, kind by kind
    except usercode.UserCodeError as exc:
        err.write(f"cleanroom ab: {exc}\n")
        return results.EXIT_SETUP
    if args.cmdline is None:
        args.cmdline = usercode.default_cmdline(codes or b_codes)
    spec = _run_spec(args, emu, err, "ab")
    if spec is None:
        return results.EXIT_SETUP
    b_spec = replace(spec, cmdline=args.b_cmdline if args.b_cmdline is not None else spec.cmdline,
                     kernel=args.b_kernel or spec.kernel, iso=args.b_iso or spec.iso, hosted=args.b_hosted or spec.hosted)
    pairs = args.boots or (1 if emu.tsc.exact else emulators.DEFAULT_PAIRS)
    memory = HOSTED_MEMORY_MB if emu.hosted else spec.memory
    silences = []
    for cmdline in dict.fromkeys((spec.cmdline, b_spec.cmdline)):
        may_start, silence = _check_duration(argparse.Namespace(**{**vars(args), "cmdline": cmdline}), emu, memory,
                                             err, times=pairs * (2 if spec.cmdline == b_spec.cmdline else 1))
        if not may_start:
            return results.EXIT_SETUP
        silences.append(silence)
    limits = runner.Limits(silence=max(silences), timeout=args.timeout)
    out_dir, is_new = _out_dir(args, f"ab-{args.emulator}")
    sides = (out_dir / "a", out_dir / "b")
    progress = Progress.for_stream(err, args.quiet)
    try:
        spec, b_spec = _with_user_code(spec, codes, sides[0]), _with_user_code(b_spec, b_codes, sides[1])
        outcomes = runner.run_in_turn((spec, b_spec), sides, limits, progress, pairs, uuid.uuid4().hex)
    except emulators.SetupError as exc:
        return _not_started(f"cleanroom ab: {exc}", out_dir, is_new, err)
    status = results.EXIT_OK
    for letter, outcome in zip(runner.TURN_SIDES, outcomes):
        if outcome is None:  # what A's first boot measured stays in a/: it ended without results
            err.write(f"cleanroom ab: B was not run: A's first {runner.replica_word(emu)} did not end done ok "
                      f"with results (see {sides[0]})\n")
            return status
        out.write(f"{letter}: ")
        runner.print_outcome(outcome, out, err)
        status = max(status, results.boots_exit_status(outcome.boots, outcome.cut_short))
    if status != results.EXIT_OK:
        return status
    out.write("\n")
    return cmd_compare(argparse.Namespace(a=sides[0], b=sides[1], more=[], ref=None, html=None, plots=False,
                                          out=out_dir / "compare", paired=False), out, err)  # the token pairs them


def cmd_capture(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    out_dir, is_default = _out_dir(args, "serial")
    progress = Progress.for_stream(err, args.quiet)
    limits = runner.Limits(silence=args.silence, timeout=args.timeout, silence_before_first=False)

    def announce(text: str) -> None:
        if not args.quiet:
            err.write(text + "\n")
            err.flush()

    try:
        outcome = runner.capture_port(args.port, args.baud, out_dir, limits, progress, announce)
    except emulators.SetupError as exc:
        return _not_started(f"cleanroom capture: {exc}", out_dir, is_default, err)
    if is_default:
        runner.point_latest(out_dir)
    runner.print_outcome(outcome, out, err)
    return results.boots_exit_status(outcome.boots, outcome.cut_short)


def cmd_decode_photos(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from .records import qrdecode
    missing = [p for p in args.images if not p.is_file()]
    if missing:
        err.write(f"cleanroom decode-photos: no such file: {', '.join(str(p) for p in missing)}\n")
        return results.EXIT_SETUP
    out_dir, is_default = _out_dir(args, "photos")
    try:
        decoded = qrdecode.decode_photos(list(args.images), out_dir)
    except qrdecode.DecoderMissing as exc:
        return _not_started(f"cleanroom decode-photos: {exc}", out_dir, is_default, err)
    if is_default:
        runner.point_latest(out_dir)
    asm, res = decoded.assembly, decoded.result
    read = sum(1 for r in decoded.reads if r.chunks)
    codes = f"{len(asm.have)} of {asm.total} codes" if asm.total is not None else "no code"
    out.write(f"images: {len(decoded.reads)}, {read} with a code; {codes}; log: "
              f"{len(asm.log)} of {asm.log_len if asm.log_len is not None else '?'} bytes"
              f"{'' if asm.complete else ' (incomplete)'}\n")
    for line in results.boots_summary([res], [out_dir]):
        out.write(line + "\n")
    out.write(f"wrote {out_dir / results.SERIAL_LOG}, {out_dir / results.RESULTS_JSON} and "
              f"{out_dir / results.RESULTS_CSV}\n")
    return results.exit_status(res, cut_short=not asm.complete)


def cmd_report(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from .records import model
    from .reports import frame as report
    try:
        rs = results.load(args.path, args.boot)
    except (OSError, ValueError) as exc:
        err.write(f"cleanroom report: {exc}\n")
        return results.EXIT_SETUP
    rs.figures = args.figures
    if args.figures == "model" and not model.has_model(rs.records):
        err.write(f"cleanroom report: --figures model: {args.path} has no model figures "
                  f"(a run with --emulator qemu-model has them)\n")
        return results.EXIT_SETUP
    out_dir = args.out if args.out is not None else rs.path.parent
    if args.out is None and args.boot is not None and out_dir.name != f"boot-{args.boot}":
        out_dir = out_dir / f"boot-{args.boot}"  # boot K of a log: its files apart from the log's
    # stdout is the report itself (with --full, exactly report.txt); what was written goes to stderr
    out.write(report.render(rs, full=args.full, report_txt=out_dir / report.REPORT_TXT))
    try:
        written = report.write_outputs(rs, out_dir, plots=not args.no_plots)
    except OSError as exc:
        return _cannot_write("report", f"into {out_dir}", exc, err)
    plots = [p for p in written if p.suffix == ".png"]
    named = [str(p.relative_to(out_dir)) for p in written if p.suffix != ".png"]
    err.write(f"wrote {len(written)} files into {out_dir}: " + ", ".join(named)
              + (f" and {len(plots)} plots in {plots[0].parent.relative_to(out_dir)}/" if plots else "") + "\n")
    return 0


def _write_checked(command: str, text: str, check: Callable[[str], str | None], refusal: str, dest: Path | None,
                   out: TextIO, err: TextIO) -> int:
    """LAVA's YAML (a job, a device's configuration), checked with LAVA's own schema (check: None when it
    passes, else LAVA's complaint; ImportError without lava_common), to dest or stdout."""
    try:
        refused = check(text)
    except ImportError:
        err.write(f"cleanroom {command}: not checked with LAVA's schema: lava_common cannot be imported (Debian's "
                  "lava-common; tools/setup.sh installs it and puts it on the .venv's path)\n")
    else:
        if refused is not None:
            err.write(f"cleanroom {command}: LAVA's {refusal}: {refused}\n")
            return results.EXIT_SETUP
    if dest is None:
        out.write(text)
        return 0
    try:
        dest.write_text(text, encoding="utf-8")
    except OSError as exc:
        return _cannot_write(command, str(dest), exc, err)
    out.write(f"wrote {dest}\n")
    return 0


def _job_module(args: argparse.Namespace, err: TextIO) -> tuple[bool, str | None]:
    """lava-job's user code: built, written beside --out; (may go on, the URL LAVA downloads it from)."""
    try:
        codes = _user_code(args)
    except usercode.UserCodeError as exc:
        err.write(f"cleanroom lava-job: {exc}\n")
        return False, None
    if not codes:
        return True, args.module_url
    if len(codes) > 1:
        err.write("cleanroom lava-job: one piece of the user's code a job (a snippet, a switch routine or a lock): "
                  "LAVA hands a multiboot kernel one module\n")
        return False, None
    if args.cmdline is None:
        args.cmdline = usercode.default_cmdline(codes)
    if args.out is None:
        err.write("cleanroom lava-job: the user's code needs --out: it is written beside the job (JOB.user.bin)\n")
        return False, None
    module = usercode.write_blob(codes[0].blob(), args.out.parent, args.out.stem + ".user.bin")
    return True, args.module_url or module.absolute().as_uri()


def cmd_lava_job(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from .machines import lavajob
    ok, module_url = _job_module(args, err)
    if not ok:
        return results.EXIT_SETUP
    spec = lavajob.JobSpec(args.device_type, args.cmdline, args.kernel_url, args.iso_url, args.emulator, args.boot,
                           args.job_name, args.notify, args.priority, tuple(args.tag), args.lava_device_type,
                           module_url)
    try:
        job, t = lavajob.build(spec, args.kernel)
        estimate_text = estimate.duration_text(t.estimate_s) if t.estimate_s is not None else "nothing it counts"
        text = lavajob.to_yaml(job, [f"cleanroom lava-job: {job['job_name']}",
                                     f"estimate {estimate_text}; timeouts: test {lavajob.whole_minutes(t.test_s)} "
                                     f"min, a record at least every {lavajob.whole_minutes(t.connection_s)} min, "
                                     f"job {lavajob.whole_minutes(t.job_s)} min"])
    except lavajob.LavaJobError as exc:
        err.write(f"cleanroom lava-job: {exc}\n")
        return results.EXIT_SETUP
    return _write_checked("lava-job", text, lavajob.validate, "schema refuses the job", args.out, out, err)


def cmd_lava_device(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from .machines import lavadevice
    try:
        try:
            text = args.job.read_text(encoding="utf-8")
        except OSError as exc:
            raise lavadevice.LavaDeviceError(f"--job {args.job}: {exc.strerror or exc}") from exc
        job = lavadevice.read_job(text, str(args.job))
        if args.context:
            out.write(lavadevice.context_text(job) + "\n")
            return 0
        dirs = lavadevice.template_dirs(runner.repo_root(), args.templates)
        config = lavadevice.render(job, dirs, args.dictionary, args.device_type)
    except lavadevice.LavaDeviceError as exc:
        err.write(f"cleanroom lava-device: {exc}\n")
        return results.EXIT_SETUP
    return _write_checked("lava-device", config, lavadevice.validate, "device schema refuses the configuration",
                          args.out, out, err)


def cmd_lava_fetch(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from .machines import lavalog
    try:
        fetched = lavalog.fetch(args.source, args.lavacli, args.identity)
    except lavalog.LavaLogError as exc:
        err.write(f"cleanroom lava-fetch: {exc}\n")
        return results.EXIT_SETUP
    out_dir, is_default = _out_dir(args, "lava")
    if is_default:
        runner.point_latest(out_dir)
    device = args.device if args.device is not None else fetched.device
    boots, run = lavalog.write(fetched, out_dir, device)
    for line in results.boots_summary(boots, results.boot_dirs(out_dir, boots)):
        out.write(line + "\n")
    for line in lavalog.summary(run):
        out.write(line + "\n")
    out.write(f"wrote {out_dir / results.SERIAL_LOG}, {out_dir / results.RESULTS_JSON} and "
              f"{out_dir / results.RESULTS_CSV}\n")
    return results.boots_exit_status(boots)


def cmd_stick(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    import tempfile
    try:
        codes = _user_code(args)
    except usercode.UserCodeError as exc:
        err.write(f"cleanroom stick: {exc}\n")
        return results.EXIT_SETUP
    cmdline = args.cmdline if args.cmdline is not None else usercode.default_cmdline(codes)
    if cmdline is None:
        err.write("cleanroom stick: give --cmdline, or the user's code (--asm, --switch-file, --lock-file); "
                  "`make iso` builds the ISO of the built-in menu\n")
        return results.EXIT_SETUP
    with tempfile.TemporaryDirectory(prefix="cleanroom-iso-") as tmp:
        try:
            modules = tuple(usercode.write_module(c, Path(tmp) / "modules") for c in codes)
            iso = emulators.make_iso(args.kernel, emulators.with_exit(cmdline), Path(tmp), modules)
            args.out.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(iso, args.out)
        except emulators.SetupError as exc:
            err.write(f"cleanroom stick: {exc}\n")
            return results.EXIT_SETUP
        except OSError as exc:
            return _cannot_write("stick", str(args.out), exc, err)
    out.write(f"wrote {args.out} ({emulators.with_exit(cmdline)}"
              + (f"; {', '.join(usercode.KIND_NAMES[usercode.kind_of(c)] for c in codes)} as modules" if codes else "")
              + ")\n")
    return results.EXIT_OK


def cmd_check(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from .reports import check
    if len(args.sets) > 2:
        err.write(f"cleanroom check: {len(args.sets)} sets: give BASELINE and RUN, or one A/B directory\n")
        return results.EXIT_SETUP
    try:
        verdict = check.check(args.sets, args.threshold / 100)
    except (OSError, ValueError, check.CheckError) as exc:
        err.write(f"cleanroom check: {exc}\n")
        return results.EXIT_SETUP
    for line in verdict.lines:
        out.write(line + "\n")
    return verdict.status


def cmd_history(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from . import history
    return history.main(args, out, err, lambda argv, o, e: main(["run", *argv], o, e))


def make_run_index(out_dir: Path) -> Path:
    """make run's index.html: each run's machine, its headline answers, and a link to its report.html."""
    from .reports import frame, html
    return html.write_index(out_dir / "index.html", f"cleanroom make run: {out_dir}",
                            [frame.index_part(results.load(out_dir / step.out), step.out, f"{step.out}/{html.PAGE}", step.what)
                             for step in MAKE_RUN_STEPS])


def cmd_make_run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    out_dir, _is_new = _out_dir(args, "make-run")
    for step in MAKE_RUN_STEPS:
        status = main(["run", "--emulator", step.emulator, "--cmdline", getattr(args, step.option),
                       "--out", str(out_dir / step.out), *(["--quiet"] if args.quiet else [])], out, err)
        if status != results.EXIT_OK:
            err.write(f"cleanroom make-run: the {step.out} run ended with status {status}; what it wrote is in "
                      f"{out_dir / step.out}\n")
            return status
    runner.point_latest(out_dir)
    for step in MAKE_RUN_STEPS:
        out.write("\n")
        status = main(["report", str(out_dir / step.out)], out, err)
        if status != results.EXIT_OK:
            return status
    index = make_run_index(out_dir)
    out.write(f"\npages: {index.resolve()}\n")
    return results.EXIT_OK


class _Reader:
    """stdout for a reader that may stop reading (`cleanroom compare A B | head`): once the pipe is closed
    the rest of the output goes nowhere, and the command still finishes its work (its files) and says
    its status, instead of ending in a BrokenPipeError traceback."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def write(self, text: str) -> int:
        try:
            return self.stream.write(text)
        except BrokenPipeError:
            self._gone()
            return len(text)

    def flush(self) -> None:
        try:
            self.stream.flush()
        except BrokenPipeError:
            self._gone()

    def _gone(self) -> None:
        """The reader left: write on into /dev/null, stdout's descriptor too (Python flushes it at exit)."""
        self.stream = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115: for the process' life
        os.dup2(self.stream.fileno(), sys.stdout.fileno())

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


def main(argv: Sequence[str] | None = None, out: TextIO | None = None, err: TextIO | None = None) -> int:
    out = out or _Reader(sys.stdout)  # type: ignore[assignment]
    err = err or sys.stderr
    words = list(sys.argv[1:] if argv is None else argv)
    args = build_parser(words[0] if words and words[0] in COMMANDS else None).parse_args(words)
    handler = {"parse": cmd_parse, "run": cmd_run, "ab": cmd_ab, "capture": cmd_capture, "report": cmd_report,
               "compare": cmd_compare, "decode-photos": cmd_decode_photos, "lava-job": cmd_lava_job,
               "lava-device": cmd_lava_device, "lava-fetch": cmd_lava_fetch, "stick": cmd_stick, "check": cmd_check,
               "history": cmd_history, "make-run": cmd_make_run}[args.command]
    try:
        return handler(args, out, err)
    except KeyboardInterrupt:
        err.write("interrupted\n")
        return 130
