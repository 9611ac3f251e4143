"""A pytest plugin that writes each test's CPU time, its own and its children's (QEMU, Bochs, Chromium, the
hosted build, once reaped), with its wall time: where make test's CPU goes, which --durations (wall time,
inflated by the other workers) does not say (docs/RESULTS.md, "make test").

    PYTHONPATH=tests .venv/bin/python -m pytest -p cpuprof -n 4 -m "not scale and not lab" tests
    python3 tests/cpuprof.py            # the sums by file and the 30 dearest tests

Each worker appends JSON lines to $CPUPROF_OUT-<pid>.jsonl (default /tmp/cpuprof)."""

from __future__ import annotations

import collections
import glob
import json
import os
import resource
import time
from typing import Any, Iterator

import pytest

OUT = os.environ.get("CPUPROF_OUT", "/tmp/cpuprof")


def _cpu() -> tuple[float, float]:
    mine, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return mine.ru_utime + mine.ru_stime, kids.ru_utime + kids.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: Any) -> Iterator[None]:
    own, kids = _cpu()
    began, start = time.time(), time.monotonic()
    yield
    own2, kids2 = _cpu()
    with open(f"{OUT}-{os.getpid()}.jsonl", "a", encoding="utf-8") as fh:
        fh.write(json.dumps({"id": item.nodeid, "self": own2 - own, "children": kids2 - kids,
                             "wall": time.monotonic() - start, "began": began}) + "\n")


def main() -> None:
    rows = [json.loads(line) for name in glob.glob(f"{OUT}-*.jsonl") for line in open(name, encoding="utf-8")]
    total = sum(r["self"] + r["children"] for r in rows)
    print(f"{len(rows)} tests, {total:.0f} CPU-s: {sum(r['self'] for r in rows):.0f} in the workers, "
          f"{sum(r['children'] for r in rows):.0f} in their children")
    by_file: collections.Counter[str] = collections.Counter()
    for r in rows:
        by_file[r["id"].split("::")[0]] += r["self"] + r["children"]
    for name, cpu in by_file.most_common(25):
        print(f"{cpu:7.1f}  {name}")
    print()
    for r in sorted(rows, key=lambda r: -(r["self"] + r["children"]))[:30]:
        print(f"{r['self'] + r['children']:6.1f} CPU-s, {r['wall']:5.1f} s  {r['id']}")


if __name__ == "__main__":
    import signal

    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `| head`: end quietly, as other printing tools do
    main()
