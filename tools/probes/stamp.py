"""Runs a command, its output to a log unchanged, and notes when each benchmark's records began and the
run ended (seconds from the start), for a machine without the host tool (tools/smp-scale-check.sh): what
`tools/cleanroom run` would print as its "time per benchmark" line. Standard library only.
    python3 tools/probes/stamp.py LOG STAMPS COMMAND..."""

import re
import subprocess
import sys
import time

BENCH = re.compile(rb'"t":"(?:result|progress|skip)","seq":\d+,"bench":"([a-z0-9_]+)"')


def main() -> int:
    log, stamps, cmd = sys.argv[1], sys.argv[2], sys.argv[3:]
    start = time.monotonic()
    seen: list[tuple[str, float]] = []
    with open(log, "wb") as out, subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT) as p:
        assert p.stdout is not None
        for line in p.stdout:
            out.write(line)
            m = BENCH.search(line)
            if m and (not seen or seen[-1][0] != m.group(1).decode()):
                seen.append((m.group(1).decode(), time.monotonic() - start))
        rc = p.wait()
    end = time.monotonic() - start
    with open(stamps, "w") as f:
        for i, (bench, t) in enumerate(seen):
            f.write(f"{bench} {(seen[i + 1][1] if i + 1 < len(seen) else end) - t:.1f} s (from {t:.1f} s)\n")
        f.write(f"total {end:.1f} s, exit {rc}\n")
    return rc


if __name__ == "__main__":
    sys.exit(main())
