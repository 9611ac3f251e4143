"""bench=peers' switch and handoff cases in both widths: the 32-bit hosted build
measures its own (glibc swapcontext in both shapes, an NPTL handoff) and asks the
64-bit helper build/hosted/cleanroom-peers64 (hosted/peers64/) for cleanroom's switches
ported to x86-64, Boost.Context's jump_fcontext, swapcontext and NPTL, one timed
run per sample. Shapes and signs only: no speed is asserted."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from booting import TOOL_SAFETY_NET_S, boot, done, of_type
from test_hosted import HOSTED

PEERS64 = HOSTED.parent / "cleanroom-peers64"
PEERS_RUN = "bench=peers reps=2000 runs=3"

# case -> (bits, shapes): every switch and handoff case of bench=peers
SHAPED = {
    "switch_ucontext": (32, {"symmetric", "asymmetric"}),
    "handoff_pthread": (32, {"symmetric"}),
    "switch_callee64": (64, {"symmetric", "asymmetric"}),
    "switch_jump64": (64, {"symmetric", "asymmetric"}),
    "switch_popjmp64": (64, {"symmetric", "asymmetric"}),
    "switch_boost": (64, {"symmetric", "asymmetric"}),
    "switch_ucontext64": (64, {"symmetric", "asymmetric"}),
    "handoff_pthread64": (64, {"symmetric"}),
}
REMOTE = {case for case, (bits, _shapes) in SHAPED.items() if bits == 64}

pytestmark = pytest.mark.usefixtures("hosted_elf")


def peers(res: dict[str, Any]) -> list[dict[str, Any]]:
    return [r for r in of_type(res, "result") if r["bench"] == "peers"]


@pytest.fixture(scope="module")
def peers_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    rc, res = boot(tmp_path_factory.mktemp("peers64"), "hosted", PEERS_RUN)
    assert rc == 0 and done(res)["status"] == "ok"
    return res


def test_make_hosted_builds_the_helper_beside_the_hosted_build() -> None:
    assert PEERS64.is_file(), "`make hosted` builds build/hosted/cleanroom-peers64 too"
    head = PEERS64.read_bytes()[:5]
    assert head[:4] == b"\x7fELF" and head[4] == 2  # ELFCLASS64


def helper(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(PEERS64), *args], input=stdin, capture_output=True, text=True,
                          timeout=TOOL_SAFETY_NET_S)


@pytest.mark.usefixtures("peers64_elf")
def test_helper_line_protocol() -> None:
    requests = [f"run {system} {shape} 1000" for system in ("callee", "jump", "popjmp", "boost", "ucontext")
                for shape in ("symmetric", "asymmetric")]
    requests += ["run pthread symmetric 200", "run pthread asymmetric 200", "run nosuch symmetric 10",
                 "run boost sideways 10", "run callee symmetric 3", "hello", "quit", "run callee symmetric 10"]
    proc = helper(stdin="".join(r + "\n" for r in requests))
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("peers64 1 boost ")  # the greeting: protocol 1 and Boost's version
    replies = lines[1:]
    assert len(replies) == len(requests) - 2  # nothing after quit
    for reply in replies[:11]:
        word, ticks = reply.split()
        assert word == "ok" and int(ticks) > 0, reply
    assert replies[11].startswith("error ") and "pthread has one shape" in replies[11]
    assert replies[12].startswith("error unknown system")
    assert replies[13].startswith("error unknown shape")
    assert replies[14].startswith("error switches must be even")
    assert replies[15] == "error cannot parse the request"


@pytest.mark.usefixtures("peers64_elf")
def test_helper_by_hand() -> None:
    proc = helper("boost", "asymmetric", "2000")
    assert proc.returncode == 0 and "ticks per switch" in proc.stdout
    assert helper("boost").returncode == 2
    assert helper("nosuch", "symmetric", "10").returncode == 1


def test_every_shaped_case_in_both_widths(peers_run: dict[str, Any]) -> None:
    got: dict[str, set[str]] = {}
    for r in peers(peers_run):
        if r["case"] not in SHAPED:
            continue
        bits, _shapes = SHAPED[r["case"]]
        p = r["params"]
        assert p["bits"] == bits and p["switches"] == r["per"] > 0, r
        assert r["med"] > 0 and r["min"] > 0, r  # total ticks per switch: nothing subtracted, never 0
        assert r["min"] <= r["med"] <= r["max"] and r["n"] == 3
        assert p["impl"]
        got.setdefault(r["case"], set()).add(p["shape"])
    assert got == {case: shapes for case, (_bits, shapes) in SHAPED.items()}, \
        [s for s in of_type(peers_run, "skip") if s["what"] in SHAPED]
    assert not [e for e in of_type(peers_run, "error") if e.get("code") == "peers64"]
    boost = next(r for r in peers(peers_run) if r["case"] == "switch_boost")
    assert boost["params"]["impl"].startswith("Boost.Context ") and boost["params"]["impl"].endswith(" jump_fcontext")
    # the shapes of one system are measured in turn: their records follow one another
    cases = [r["case"] for r in peers(peers_run)]
    for case, (_bits, shapes) in SHAPED.items():
        first = cases.index(case)
        assert cases[first:first + len(shapes)] == [case] * len(shapes)


def test_switch_fiber_is_total_ticks(peers_run: dict[str, Any]) -> None:
    """The comparison's cleanroom switch is the whole loop over its switches: never a rounded-away 0."""
    fiber = next(r for r in peers(peers_run) if r["case"] == "switch_fiber")
    assert fiber["min"] > 0


def test_without_the_helper_every_64_bit_case_is_a_named_skip(tmp_path: Path) -> None:
    lonely = tmp_path / "alone" / "cleanroom-hosted"
    lonely.parent.mkdir()
    shutil.copy2(HOSTED, lonely)
    rc, res = boot(tmp_path, "hosted", "bench=peers reps=200 runs=2", "--hosted", str(lonely))
    assert rc == 0 and done(res)["status"] == "ok"
    skips = {s["what"]: s["why"] for s in of_type(res, "skip") if s["bench"] == "peers"}
    assert REMOTE <= set(skips)
    for case in REMOTE:
        why = skips[case]
        assert str(lonely.parent / "cleanroom-peers64") in why and "missing" in why and "make hosted" in why, why
    results = peers(res)
    assert not [r for r in results if r["case"] in REMOTE]
    # the 32-bit side runs as before, both shapes of swapcontext included
    assert {r["params"]["shape"] for r in results if r["case"] == "switch_ucontext"} == {"symmetric", "asymmetric"}
    assert any(r["case"] == "handoff_pthread" for r in results)
    assert all(r["med"] > 0 for r in results if r["case"] in SHAPED)


def test_a_helper_that_does_not_greet_is_a_named_skip(tmp_path: Path) -> None:
    where = tmp_path / "odd"
    where.mkdir()
    shutil.copy2(HOSTED, where / "cleanroom-hosted")
    fake = where / "cleanroom-peers64"
    fake.write_text("#!/bin/sh\nexit 3\n")
    fake.chmod(0o755)
    rc, res = boot(tmp_path, "hosted", "bench=peers reps=200 runs=2", "--hosted", str(where / "cleanroom-hosted"))
    assert rc == 0 and done(res)["status"] == "ok"
    skips = {s["what"]: s["why"] for s in of_type(res, "skip") if s["bench"] == "peers"}
    assert all("ended before its greeting" in skips[case] and "status 3" in skips[case] for case in REMOTE), skips
