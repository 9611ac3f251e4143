"""`cleanroom run --emulator hosted`: the Linux build pinned to one CPU (a fake stands in
for it here; tests/test_tool_estimate.py and the hosted fixture cover the real one)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "fixtures"))

import synth_workset  # noqa: E402

LAST_CPU = max(os.sched_getaffinity(0))


def tool(cleanroom_tool: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(cleanroom_tool), *args], capture_output=True, text=True,
                          env=dict(os.environ, **(env or {})), timeout=600, stdin=subprocess.DEVNULL)


@pytest.fixture
def fake(tmp_path: Path, fixtures_dir: Path) -> dict[str, Any]:
    log = tmp_path / "play.log"
    log.write_bytes(synth_workset.log(platform="hosted"))
    info = tmp_path / "info.json"
    return {"log": log, "info": info, "binary": str(fixtures_dir / "fake_emulator.py"),
            "env": {"FAKE_LOG": str(log), "FAKE_INFO": str(info), "CLEANROOM_RESULTS": str(tmp_path / "results")}}


def run_hosted(cleanroom_tool: Path, fake: dict[str, Any], *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return tool(cleanroom_tool, "run", "--emulator", "hosted", "--emulator-binary", fake["binary"], *args,
                env=dict(fake["env"], **env))


def test_hosted_gets_tokens_as_argv_pinned_to_the_last_cpu(cleanroom_tool: Path, fake: dict[str, Any],
                                                            tmp_path: Path) -> None:
    out = tmp_path / "o"
    p = run_hosted(cleanroom_tool, fake, "--cmdline", "bench=workset,ctxsw sizes=0,4K reps=20", "--out", str(out))
    assert p.returncode == 0, p.stdout + p.stderr
    info = json.loads(fake["info"].read_text())
    assert info["argv"] == ["bench=workset,ctxsw", "sizes=0,4K", "reps=20"]  # no exit= added
    assert info["cpus"] == [LAST_CPU]
    assert (out / "serial.log").read_bytes() == fake["log"].read_bytes()
    doc = json.loads((out / "results.json").read_text())
    run = doc["run"]
    assert run["emulator"] == "hosted" and run["host_cpu"] == LAST_CPU
    assert Path(run["command"][0]).name == "taskset" and run["command"][1:3] == ["-c", str(LAST_CPU)]
    assert run["kernel_cmdline"] == "bench=workset,ctxsw sizes=0,4K reps=20"
    assert doc["complete"] and "records: " in p.stdout
    assert run["silence"] == 60 and run["hung"] is False and run["timeout"] is None
    assert list(run["bench_seconds"])[0] == "boot" and {"workset", "ctxsw"} <= set(run["bench_seconds"])
    assert "time per benchmark: boot " in p.stdout


def test_hosted_host_cpu_option(cleanroom_tool: Path, fake: dict[str, Any], tmp_path: Path) -> None:
    p = run_hosted(cleanroom_tool, fake, "--host-cpu", "0", "--out", str(tmp_path / "o"))
    assert p.returncode == 0, p.stderr
    assert json.loads(fake["info"].read_text())["cpus"] == [0]
    p = run_hosted(cleanroom_tool, fake, "--host-cpu", "4096", "--out", str(tmp_path / "o2"))
    assert p.returncode == 5 and "--host-cpu 4096: not a CPU" in p.stderr


def test_hosted_default_results_dir(cleanroom_tool: Path, fake: dict[str, Any], tmp_path: Path) -> None:
    p = run_hosted(cleanroom_tool, fake)
    assert p.returncode == 0, p.stderr
    latest = tmp_path / "results" / "latest"
    assert latest.resolve().name.endswith("-hosted")
    assert json.loads((latest / "results.json").read_text())["run"]["emulator"] == "hosted"


def test_missing_hosted_build_names_make_hosted(cleanroom_tool: Path, fake: dict[str, Any], tmp_path: Path) -> None:
    p = tool(cleanroom_tool, "run", "--emulator", "hosted", "--hosted", str(tmp_path / "none"), env=fake["env"])
    assert p.returncode == 5 and "`make hosted`" in p.stderr
    assert not (tmp_path / "results").exists()


@pytest.mark.parametrize("arg", [["--memory", "64"], ["--cpu", "486"], ["--qemu-arg=-s"]])
def test_emulator_options_do_not_apply_to_hosted(cleanroom_tool: Path, fake: dict[str, Any], tmp_path: Path,
                                                 arg: list[str]) -> None:
    p = run_hosted(cleanroom_tool, fake, *arg, "--out", str(tmp_path / "o"))
    assert p.returncode == 5 and "does not apply to hosted" in p.stderr
    assert not fake["info"].exists()


def test_missing_taskset_names_util_linux(cleanroom_tool: Path, fake: dict[str, Any], tmp_path: Path) -> None:
    empty = tmp_path / "bin"
    empty.mkdir()
    p = run_hosted(cleanroom_tool, fake, "--out", str(tmp_path / "o"), PATH=str(empty))
    assert p.returncode == 5 and "taskset not found" in p.stderr and "util-linux" in p.stderr
