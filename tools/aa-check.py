#!/usr/bin/env python3
"""A/A check: the same command line run as a user runs it, 2 x PAIRS times back to back, each pair
compared with `cleanroom compare`; prints how many cases and derived values each comparison called
different (resolved or exact), which cases, and the share over all pairs. At 95 % coverage noise alone
calls about 5 %; far more means the intervals miss variation between runs (docs/REPORT.md, "Replicas").

    tools/aa-check.py --emulator hosted --cmdline "bench=ctxsw,peers" --pairs 3 --out /tmp/aa
    tools/aa-check.py ... --run-arg=--boots --run-arg=1     # one process a run: the old way
    tools/aa-check.py ... --in-turn                            # each pair one `cleanroom ab` (run in turn)
    tools/aa-check.py ... --b-cmdline "bench=ctxsw delay=2"    # an A/B instead: B runs this

--in-turn makes each pair one `cleanroom ab`: the two sides' processes (boots) in turn, A B B A ..., and
compared pair by pair, so that what the machine does over the seconds of a pair lands on both sides
alike instead of reading as a difference (--run-arg passes on, e.g. --run-arg=--boots --run-arg=10).

Exit status 0; with --max-share S, 1 when the share over all pairs exceeds S (a fraction).
"""

from __future__ import annotations

import argparse
import csv
import subprocess
import sys
import time
from pathlib import Path

TOOL = Path(__file__).resolve().parent / "cleanroom"
# compare.csv's verdict and compare-derived.csv's change that call two runs different
DIFFERENT = {"verdict": ("resolved", "exact"), "change": ("differs",)}


def called(csv_path: Path, column: str) -> tuple[int, int]:
    """(called different, compared) of a compare CSV's verdict (or change) column."""
    with csv_path.open(newline="") as fh:
        words = [row.get(column, "") for row in csv.DictReader(fh)]
    judged = [w for w in words if w]
    return sum(1 for w in judged if w in DIFFERENT[column]), len(judged)


def run(emulator: str, cmdline: str, out: Path, extra: list[str]) -> float:
    start = time.monotonic()
    proc = subprocess.run([sys.executable, str(TOOL), "run", "--emulator", emulator, "--cmdline", cmdline,
                           "--out", str(out), "--quiet", *extra], capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"aa-check: the run into {out} ended with status {proc.returncode}:\n{proc.stderr}")
    return time.monotonic() - start


def in_turn(emulator: str, cmdlines: tuple[str, str], out: Path, extra: list[str]) -> float:
    """One `cleanroom ab` of the two command lines into out (a/, b/, compare/)."""
    start = time.monotonic()
    proc = subprocess.run([sys.executable, str(TOOL), "ab", "--emulator", emulator, "--cmdline", cmdlines[0],
                           "--b-cmdline", cmdlines[1], "--out", str(out), "--quiet", *extra],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"aa-check: the A/B into {out} ended with status {proc.returncode}:\n{proc.stderr}")
    return time.monotonic() - start


def different_cases(csv_path: Path) -> list[str]:
    """The cases compare.csv called different: "case params" without the params every row shares."""
    with csv_path.open(newline="") as fh:
        rows = [r for r in csv.DictReader(fh) if r.get("verdict") in DIFFERENT["verdict"]]
    return [f"{r['case']} {' '.join(w for w in r['params'].split() if w.split('=')[0] in ('n', 'switch', 'shape'))}"
            for r in rows]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--emulator", default="hosted")
    ap.add_argument("--cmdline", required=True)
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--out", type=Path, required=True, help="a directory for the runs (aa-1a, aa-1b, ...)")
    ap.add_argument("--run-arg", action="append", default=[], help="an argument added to every run")
    ap.add_argument("--max-share", type=float, help="exit 1 when more than this fraction is called different")
    ap.add_argument("--in-turn", action="store_true", help="each pair one `cleanroom ab`: the sides in turn")
    ap.add_argument("--b-cmdline", help="B's command line (an A/B; default: A's, an A/A)")
    args = ap.parse_args()
    total = [0, 0]
    b_cmdline = args.b_cmdline or args.cmdline
    for k in range(1, args.pairs + 1):
        a, b = args.out / f"aa-{k}a", args.out / f"aa-{k}b"
        if args.in_turn:
            secs = in_turn(args.emulator, (args.cmdline, b_cmdline), args.out / f"ab-{k}", args.run_arg)
            cmp_dir = args.out / f"ab-{k}" / "compare"
        else:
            secs = run(args.emulator, args.cmdline, a, args.run_arg) + run(args.emulator, b_cmdline, b, args.run_arg)
            cmp_dir = args.out / f"compare-{k}"
            proc = subprocess.run([sys.executable, str(TOOL), "compare", str(a), str(b), "--out", str(cmp_dir)],
                                  capture_output=True, text=True)
            if proc.returncode != 0:
                raise SystemExit(f"aa-check: compare {a} {b} failed:\n{proc.stderr}")
        cases = called(cmp_dir / "compare.csv", "verdict")
        derived_csv = cmp_dir / "compare-derived.csv"
        derived = called(derived_csv, "change") if derived_csv.is_file() else (0, 0)
        total[0] += cases[0] + derived[0]
        total[1] += cases[1] + derived[1]
        named = different_cases(cmp_dir / "compare.csv")
        print(f"pair {k}: cases {cases[0]} of {cases[1]} called different, derived {derived[0]} of "
              f"{derived[1]} ({secs:.1f} s for the two runs){': ' + ', '.join(named) if named else ''}", flush=True)
    share = total[0] / total[1] if total[1] else 0.0
    print(f"all pairs: {total[0]} of {total[1]} called different ({100 * share:.1f} %)")
    return 1 if args.max_share is not None and share > args.max_share else 0


if __name__ == "__main__":
    sys.exit(main())
