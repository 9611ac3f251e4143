"""Shared pytest fixtures: where things are in the repository."""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from booting import CACHEMODEL, HOSTED, KERNEL, PEERS64, QUICK_ICOUNT, built, shared_boot, shared_root
from browser import Browser, BrowserError, find_browser, snap_dir

REPO_ROOT = Path(__file__).resolve().parent.parent
TOOLS_DIR = REPO_ROOT / "tools"

# Every run a test starts is one boot (one process) unless the test asks for more (--boots N, or this
# variable in its environment): the tests check shapes, and the replicas' own tests (test_replicas.py,
# test_make_run.py) run them as a user does. Set here, before any test starts a tool.
os.environ["CLEANROOM_BOOTS"] = "1"

# The host tool's package (tools/cleanroom_host) is imported by tests.
if str(TOOLS_DIR) not in sys.path:
    sys.path.insert(0, str(TOOLS_DIR))


# What a test of make test-lab reports (`record_property(LAB_PROPERTY, "...")`), printed after the tests.
LAB_PROPERTY = "lab"


@pytest.hookimpl(tryfirst=True)  # before pytest's own reads --basetemp
def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "scale: the multi-CPU runs at full size (make test-scale, not make test)")
    config.addinivalue_line("markers", "lab: jobs run by LAVA's own dispatcher (make test-lab, not make test)")
    config.addinivalue_line("markers", "early: a test of long wall time (it waits out a bound, or works for 10 s "
                                       "and more) that starts first, at the head of a worker's share")
    # A browser confined as a snap (Ubuntu's chromium) reads no page under /tmp: the tests' files go where it
    # can (browser.snap_dir), unless --basetemp says where. xdist's workers take the same from the controller.
    if config.option.basetemp is None and not hasattr(config, "workerinput"):
        try:
            pages = snap_dir(find_browser())
        except BrowserError:
            pages = None  # the tests that need a browser fail, naming where they looked
        if pages is not None:
            config.option.basetemp = str(pages / "cleanroom-pytest")


@pytest.hookimpl(trylast=True)  # after -m's deselection: the shares are of the tests that run
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The tests marked early first, at the heads of the xdist workers' shares, a file's together (its
    module-scoped fixtures are made once). pytest-xdist's worksteal hands each worker a run of the
    collection in order and later moves the ends of the longest queues to idle workers: a test of 10-25 s
    left near an end finished the run alone, the other CPU idle (12 s of 209 on 2026-11-29), and a test that
    mostly waits (a 10 s bound) is best waited while the others work."""
    early: dict[str, list[pytest.Item]] = {}
    rest: list[pytest.Item] = []
    for item in items:
        if item.get_closest_marker("early"):
            early.setdefault(item.nodeid.split("::")[0], []).append(item)
        else:
            rest.append(item)
    if not early:
        return
    workers = int(getattr(config, "workerinput", {}).get("workercount", 1))
    items[:] = heads_of_shares(list(early.values()), rest, workers)


def pytest_collection_finish(session: pytest.Session) -> None:
    """What collection made (the test modules, their imports, the items) frozen out of the garbage collector's
    sight: it lives to the end, and every full collection walked it again (gc was ~6 % of a worker's CPU; this
    saves about a third of it)."""
    gc.collect()
    gc.freeze()


def heads_of_shares(groups: list[list[Any]], rest: list[Any], workers: int) -> list[Any]:
    """The groups and rest in one list whose worker shares, cut as worksteal's first distribution cuts
    them (each the count still to hand out over the workers yet to serve), each begin with every
    workers-th group."""
    total = sum(map(len, groups)) + len(rest)
    out: list[Any] = []
    taken = 0
    for w in range(workers):
        size = (total - len(out)) // (workers - w)
        heads = [item for group in groups[w::workers] for item in group]
        body = max(0, size - len(heads))
        out += heads + rest[taken:taken + body]
        taken += body
    return out + rest[taken:]


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """The lab's findings (the level each ISO run's done record came at), whichever worker ran the test."""
    said = sorted(str(value) for report in terminalreporter.stats.get("passed", [])
                  for name, value in getattr(report, "user_properties", []) if name == LAB_PROPERTY)
    if said:
        terminalreporter.write_sep("-", "lab")
        for line in said:
            terminalreporter.write_line(line)


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO_ROOT


@pytest.fixture(scope="session")
def fixtures_dir() -> Path:
    return REPO_ROOT / "tests" / "fixtures"


@pytest.fixture(scope="session")
def cleanroom_tool() -> Path:
    """The host tool's entry point (tools/cleanroom)."""
    return TOOLS_DIR / "cleanroom"


# The build outputs make test makes first (`make all iso units hosted`): a test or module that needs one
# asks for its fixture (`pytestmark = pytest.mark.usefixtures("kernel_elf")`), and fails, naming the make
# target, where it is missing: a broken build is never a skip.

@pytest.fixture(scope="session")
def kernel_elf() -> Path:
    """build/cleanroom.elf (`make all`)."""
    return built(KERNEL, "all")


@pytest.fixture(scope="session")
def hosted_elf() -> Path:
    """build/hosted/cleanroom-hosted (`make hosted`)."""
    return built(HOSTED, "hosted")


@pytest.fixture(scope="session")
def peers64_elf() -> Path:
    """build/hosted/cleanroom-peers64, the 64-bit peers helper (`make hosted`)."""
    return built(PEERS64, "hosted")


@pytest.fixture(scope="session")
def cachemodel_plugin() -> Path:
    """build/cachemodel/libcachemodel.so, the QEMU plugin (`make all`)."""
    return built(CACHEMODEL, "all")


@pytest.fixture(scope="session")
def kernel_iso() -> Path:
    """build/cleanroom.iso (`make iso`)."""
    return built(REPO_ROOT / "build" / "cleanroom.iso", "iso")


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    """Headless Chromium (tests/browser.py) for the tests of HTML pages: started at a worker's first test
    that asks for it, shared by that worker's tests, closed at the session's end. Missing Chromium fails
    the test, naming `tools/setup.sh test-packages` (make test runs it)."""
    with Browser() as b:
        yield b


@pytest.fixture(scope="session")
def boots_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where shared boots are kept: one directory for all xdist workers."""
    return shared_root(tmp_path_factory.getbasetemp())


@pytest.fixture(scope="session")
def quick_icount(boots_root: Path) -> tuple[int, dict[str, Any]]:
    """`suite=quick` under qemu-icount, booted once per session: (exit status, results.json)."""
    return shared_boot(boots_root, *QUICK_ICOUNT)
