#!/bin/sh
# The multi-CPU checks of issue 28 on a machine with many CPUs, in one go: the
# static hosted build (make hosted: build/hosted, which is all it needs, so a
# lent machine without a compiler runs it as carried), every log and time into
# OUTDIR. Afterwards, anywhere: tools/cleanroom parse OUTDIR/X.log --out DIR &&
# tools/cleanroom report DIR. About 3 to 6 minutes on 16 CPUs, by the duration model; at most
# 9 minutes by the limits below (a lent machine's command may run 10).
#   tools/smp-scale-check.sh OUTDIR
set -u
OUT=${1:?usage: tools/smp-scale-check.sh OUTDIR}
HERE=$(cd "$(dirname "$0")/.." && pwd)
H=$HERE/build/hosted/cleanroom-hosted
P=$HERE/build/hosted/pingpong
[ -x "$H" ] && [ -x "$P" ] || { echo "smp-scale-check: run 'make hosted' first ($H, $P)" >&2; exit 2; }
mkdir -p "$OUT"
{ nproc; lscpu; } > "$OUT/lscpu.txt" 2>&1
uname -a > "$OUT/uname.txt"

# name, a time limit (s), then the command: its output to OUT/name.log, exit status and wall time to
# OUT/times.txt. The most important first: a lent machine's call may end before the last.
timed() {
    name=$1
    limit=$2
    shift 2
    start=$(date +%s%N)
    timeout "$limit" "$@" > "$OUT/$name.log" 2>&1
    rc=$?
    ms=$(( ($(date +%s%N) - start) / 1000000 ))
    echo "$name: exit $rc, $((ms / 1000)).$(printf %03d $((ms % 1000))) s: $*" | tee -a "$OUT/times.txt"
}

# Done means: suite=smp cpus=all ends ok within 3 minutes; with python3 there, the time of each benchmark
# (tools/probes/stamp.py: what `tools/cleanroom run` prints as "time per benchmark") into suite-smp.stamps
if command -v python3 > /dev/null; then
    timed suite-smp 200 python3 "$HERE/tools/probes/stamp.py" "$OUT/suite-smp.records" "$OUT/suite-smp.stamps" \
        "$H" suite=smp cpus=all
    mv "$OUT/suite-smp.records" "$OUT/suite-smp.log"
else
    timed suite-smp 200 "$H" suite=smp cpus=all
fi
# coherence with only each pair's CPUs busy, then an independent CAS ping-pong right after
timed coherence 45 "$H" bench=coherence cpus=all
timed pingpong 30 "$P" 5000
# make run's multi-CPU part (the Makefile's HOSTED_SMP_CMDLINE): under 30 s
timed makerun-smp 60 "$H" bench=coherence,falseshare cpus=all runs=5
# false sharing's steady state: reps and 10 x reps within 20 % (3 runs: a sample of 10 x reps lasts up to
# ~0.6 s at 16 CPUs, and one the OS disturbed is run again)
timed falseshare-r 60 "$H" bench=falseshare cpus=all runs=3 reps=20000
timed falseshare-10r 150 "$H" bench=falseshare cpus=all runs=3 reps=200000
