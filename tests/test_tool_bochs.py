"""Bochs' term display draws into a pseudo-terminal of its own when Bochs has its
debugger; `run` must drain it, or Bochs blocks once a few KiB of screen are drawn."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "fixtures"))

import synth_workset  # noqa: E402
from booting import installed  # noqa: E402


def test_bochs_screen_terminal_is_drained(tmp_path: Path, fixtures_dir: Path, cleanroom_tool: Path) -> None:
    installed("grub-mkrescue")
    kernel = tmp_path / "cleanroom.elf"
    kernel.write_bytes(b"\x7fELF fake")
    log = tmp_path / "play.log"
    log.write_bytes(synth_workset.log())
    env = dict(os.environ, FAKE_LOG=str(log), FAKE_SCREEN=str(1 << 20))
    out = tmp_path / "o"
    p = subprocess.run([sys.executable, str(cleanroom_tool), "run", "--emulator", "bochs", "--cmdline", "suite=quick",
                        "--kernel", str(kernel), "--emulator-binary", str(fixtures_dir / "fake_emulator.py"),
                        "--out", str(out), "--silence", "10", "--quiet"],
                       capture_output=True, text=True, env=env, timeout=600, stdin=subprocess.DEVNULL)
    assert p.returncode == 0, p.stdout + p.stderr  # 4 (hung: no record for 10 s) when the screen is not drained
    assert (out / "serial.log").read_bytes() == log.read_bytes()
