#!/bin/bash
# Everything the host tool shows, for a before/after diff of a change that must not alter it: every
# --help, parse/report/report --full of every tests/fixtures and docs/data log (with each written file's
# hash, figures included), and compare (with --plots) of five groups of sets. Same OUT path both times
# (the outputs name their directories):
#   tools/snapshot-outputs.sh /tmp/snap && mv /tmp/snap /tmp/before   # (change)   ... && diff -r /tmp/before /tmp/snap
set -u
OUT=${1:?usage: tools/snapshot-outputs.sh OUTDIR}
REPO=$(cd "$(dirname "$0")/.." && pwd)
T=$REPO/tools/cleanroom
rm -rf "$OUT"
mkdir -p "$OUT/help" "$OUT/runs" "$OUT/cmp"
cd "$REPO" || exit 2
"$T" --help > "$OUT/help/main.txt" 2>&1
for c in parse run capture decode-photos report compare lava-job lava-fetch make-run; do
    "$T" "$c" --help > "$OUT/help/$c.txt" 2>&1
done
one() {
    log=$1 OUT=$2 T=$3
    d=$OUT/runs/$(echo "$log" | tr '/' '_')
    mkdir -p "$d"
    "$T" parse "$log" --out "$d/res" > "$d/parse.txt" 2>&1; echo "rc $?" >> "$d/parse.txt"
    "$T" report "$d/res" > "$d/report.txt" 2>&1; echo "rc $?" >> "$d/report.txt"
    "$T" report "$d/res" --full > "$d/full.txt" 2>&1; echo "rc $?" >> "$d/full.txt"
    (cd "$d/res" && find . -type f | sort | while read -r f; do echo "$f $(md5sum < "$f" | cut -c1-12)"; done) > "$d/files.txt"
}
export -f one
ls tests/fixtures/*.log docs/data/*.log docs/data/*/*.log | xargs -P "$(nproc)" -I{} bash -c "one {} $OUT $T"
R=$OUT/runs
for group in "tests_fixtures_hosted-smp.log docs_data_16cpu-intel-2026-11-27-lent_suite-smp.log" \
             "tests_fixtures_qemu-quick.log tests_fixtures_hosted-workset.log tests_fixtures_qemu-icount-make-run.log" \
             "tests_fixtures_hosted-smplocks-2cpu.log docs_data_16cpu-intel-2026-11-27_smplocks-cpus16.log" \
             "docs_data_hosted-smp-1.log docs_data_hosted-smp-3.log tests_fixtures_hosted-smp-locks.log" \
             "tests_fixtures_qemu-icount-aspace.log docs_data_qemu-aspace.log"; do
    n=$(echo "$group" | md5sum | cut -c1-8)
    sets=()
    for s in $group; do sets+=("$R/$s/res"); done
    mkdir -p "$OUT/cmp/$n"
    "$T" compare "${sets[@]}" --out "$OUT/cmp/$n/out" --plots > "$OUT/cmp/$n/compare.txt" 2>&1
    echo "rc $?" >> "$OUT/cmp/$n/compare.txt"
    (cd "$OUT/cmp/$n" && find out -type f | sort | while read -r f; do echo "$f $(md5sum < "$f" | cut -c1-12)"; done) \
        > "$OUT/cmp/$n/files.txt"
done
