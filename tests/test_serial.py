"""Serial ports found, not assumed (issue 12): the kernel finds COM1-COM4
and PCI 16550 UARTs, serial= picks among them, hello names what was used,
and a machine whose records reach no port says so on its screen.

`run --serial com2|pci` gives the emulated PC only that UART and reads the
log from it, so a complete log proves the kernel found and used it."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from booting import KERNEL, TOOL_CMD, TOOL_SAFETY_NET_S, boot, connect_when_listening, done, of_type
from cleanroom_host.machines import emulators

needs_kernel = pytest.mark.usefixtures("kernel_elf")

CHEAP = "bench=tsc runs=2 warmup=0"


def serial_of(res: dict[str, Any]) -> dict[str, Any]:
    return of_type(res, "hello")[0]["serial"]


def port(res: dict[str, Any], kind: str) -> dict[str, Any]:
    [p] = [p for p in serial_of(res)["ports"] if p["kind"] == kind]
    return p


def assert_complete(rc: int, res: dict[str, Any]) -> None:
    assert rc == 0
    assert res["complete"] and res["corrupt"] == 0 and not res["missing"]
    assert done(res)["status"] == "ok"


def test_serial_option_gives_the_machine_only_that_uart() -> None:
    assert emulators.serial_args("com1") == ["-serial", "stdio"]
    com2 = emulators.serial_args("com2")
    assert com2[:2] == ["-serial", "none"] and any(a.startswith("isa-serial,index=1,") for a in com2)
    pci = emulators.serial_args("pci")
    assert pci[:2] == ["-serial", "none"] and any(a.startswith("pci-serial,chardev=") for a in pci)
    spec = emulators.RunSpec(emulator="bochs", kernel=KERNEL, iso=KERNEL, serial="com2")
    with pytest.raises(emulators.SetupError, match="--serial does not apply to bochs"):
        emulators.prepare(spec, Path("/nonexistent"))


@needs_kernel
@pytest.mark.parametrize("machine", ["com2"])  # com1 is every other boot test's machine
def test_the_only_com_port_carries_the_log(tmp_path: Path, machine: str) -> None:
    rc, res = boot(tmp_path, "qemu", CHEAP, "--serial", machine)
    assert_complete(rc, res)
    s = serial_of(res)
    base = {"com1": "0x3f8", "com2": "0x2f8"}[machine]
    assert s["choice"] == "auto" and s["used"] == [base]
    assert port(res, machine)["works"] and port(res, machine)["used"] and port(res, machine)["port"] == base
    absent = [p for p in s["ports"] if p["kind"] in ("com1", "com2", "com3", "com4") and p["kind"] != machine]
    assert len(absent) == 3 and not any(p["works"] or p["used"] for p in absent)
    assert all("no UART" in p["problem"] for p in absent)


@needs_kernel
@pytest.mark.parametrize("emulator", ["qemu", "iso"])
def test_a_pci_uart_alone_carries_the_log(tmp_path: Path, emulator: str) -> None:
    rc, res = boot(tmp_path, emulator, CHEAP, "--serial", "pci")
    assert_complete(rc, res)
    s = serial_of(res)
    pci = port(res, "pci")
    assert pci["works"] and pci["used"] and pci["source"] == "pci"
    assert len(pci["pci"].split(":")) == 2 and int(pci["port"], 16) >= 0x1000  # the firmware's I/O BAR
    assert s["used"] == [pci["port"]] and s["pci_scanned"]
    assert not any(p["works"] for p in s["ports"] if p["kind"] != "pci")


@needs_kernel
def test_serial_names_a_port_by_number(tmp_path: Path) -> None:
    rc, res = boot(tmp_path, "qemu", CHEAP + " serial=0x2f8", "--serial", "com2")
    assert_complete(rc, res)
    assert serial_of(res)["choice"] == "0x2f8" and serial_of(res)["used"] == ["0x2f8"]
    assert of_type(res, "config")[0]["cfg"]["serial"] == "0x2f8"


@needs_kernel
def test_bad_serial_value_is_a_config_error(tmp_path: Path) -> None:
    rc, res = boot(tmp_path, "qemu", "suite=selftest serial=com9")
    [err] = [e for e in of_type(res, "error") if e["code"] == "cmdline"]
    assert err["token"] == "serial=com9"
    assert err["accepted"].startswith("auto|com1|com2|com3|com4|pci|none|0xPORT")
    assert done(res)["status"] == "config" and rc == 2


def read_screen(qmp: Any, dump: Path) -> str:
    """The VGA text screen, through QMP's pmemsave (the 80x25 cells at 0xB8000)."""
    qmp.write(json.dumps({"execute": "pmemsave",
                          "arguments": {"val": 0xB8000, "size": 80 * 25 * 2, "filename": str(dump)}}) + "\n")
    qmp.flush()
    while "return" not in (reply := json.loads(qmp.readline())):
        assert "error" not in reply, reply
    cells = dump.read_bytes()
    return "\n".join(cells[row * 160:(row + 1) * 160:2].decode("latin-1").rstrip() for row in range(25))


@needs_kernel
def test_a_missing_port_ends_the_run_and_says_so_on_screen(tmp_path: Path) -> None:
    """serial=com1 on a machine with only COM2: no record can arrive, the run
    still ends (the kernel halts with its summary; we quit QEMU once the
    screen shows it), and the screen says why nothing came and what exists.
    qr=off: with no port, qr=auto would page results QR codes over the
    summary (tests/test_qr.py reads those). The tool's silence limit (600 s,
    far beyond the run's second) ends the wait should the screen never show
    the summary."""
    sock, dump = tmp_path / "qmp.sock", tmp_path / "screen.bin"
    proc = subprocess.Popen(
        [*TOOL_CMD, "run", "--emulator", "qemu", "--serial", "com2", "--cmdline", CHEAP + " paging=off serial=com1 qr=off exit=halt",
         "--out", str(tmp_path / "out"), "--quiet", "--silence", "600",
         "--qemu-arg=-qmp", f"--qemu-arg=unix:{sock},server=on,wait=off"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL)
    try:
        conn = connect_when_listening(sock, proc, TOOL_SAFETY_NET_S)
        qmp = conn.makefile("rw")
        qmp.readline()  # the greeting
        qmp.write('{"execute": "qmp_capabilities"}\n')
        qmp.flush()
        qmp.readline()
        # The kernel halts for good once done; the screen then stays as it is.
        # Bounded by the tool, which stops a silent run after --silence.
        while "done: status" not in (screen := read_screen(qmp, dump)) and proc.poll() is None:
            time.sleep(0.1)
        qmp.write('{"execute": "quit"}\n')
        qmp.flush()
        out, err = proc.communicate(timeout=TOOL_SAFETY_NET_S)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert "these records were not delivered: no working serial port" in screen, screen
    assert "COM1 0x3f8 (standard): no UART" in screen
    assert "COM2 0x2f8" in screen and "works, not chosen by serial=" in screen
    assert "PCI: no 16550-compatible UART" in screen
    assert "records: 0 good" in out, (out, err)
    assert os.path.getsize(tmp_path / "out" / "serial.log") == 0


def records_of(log: Path) -> list[dict[str, Any]]:
    import zlib
    out = []
    for line in log.read_bytes().decode(errors="replace").splitlines():
        if line.startswith("@cr1 "):
            body, crc = line[5:].rsplit(" ~", 1)
            assert zlib.crc32(body.encode()) == int(crc, 16)
            out.append(json.loads(body))
    return out


def qemu_with(tmp_path: Path, devices: list[str], cmdline: str) -> None:
    """QEMU with COM1 to a file and the given extra devices (their chardevs as files too)."""
    argv = ["qemu-system-i386", "-m", "64", "-no-reboot", "-display", "none",
            "-device", "isa-debug-exit,iobase=0xf4,iosize=0x04",
            "-serial", f"file:{tmp_path / 'com1.log'}", *devices,
            "-kernel", str(KERNEL), "-append", cmdline + " exit=qemu"]
    assert subprocess.run(argv, capture_output=True, timeout=TOOL_SAFETY_NET_S).returncode == 1


@needs_kernel
def test_every_port_of_a_two_port_pci_card_carries_the_log(tmp_path: Path) -> None:
    """Issue 23: a multi-port card lost every port but its first I/O BAR's. QEMU's
    pci-serial-2x keeps two UARTs behind BAR 0, 8 bytes apart (lib/uartclock.c's table):
    both carry the whole log, and the rate of a card in the table is `known`."""
    a, b = tmp_path / "a.log", tmp_path / "b.log"
    qemu_with(tmp_path, ["-chardev", f"file,id=a,path={a}", "-chardev", f"file,id=b,path={b}",
                         "-device", "pci-serial-2x,chardev1=a,chardev2=b"], CHEAP)
    recs = records_of(a)
    assert recs and recs == records_of(b) and recs[-1]["t"] == "done"
    pci = [p for p in recs[0]["serial"]["ports"] if p["kind"] == "pci"]
    assert [int(p["port"], 16) - int(pci[0]["port"], 16) for p in pci] == [0, 8]
    assert all(p["used"] and p["rate"] == "known" and p["model"] == "QEMU pci-serial-2x" for p in pci)
    assert all(p["rate"] == "standard" and p["clock_hz"] == 1843200 for p in recs[0]["serial"]["ports"]
               if p["kind"] == "com1")


@needs_kernel
def test_a_pci_uarts_clock_is_set_or_refused_by_serial_clock(tmp_path: Path) -> None:
    """serial_clock= gives the PCI UARTs' clock: 14.7456 MHz sets divisor 8 (rate `set`);
    3.90625 MHz (an Oxford card's 62.5 MHz / 16) cannot make 115200 within 2 %: that port is
    never driven, named with the reason, and COM1 still carries the log."""
    qemu_with(tmp_path, ["-chardev", f"file,id=p,path={tmp_path / 'p.log'}", "-device", "pci-serial,chardev=p"],
              CHEAP + " serial_clock=14745600")
    [pci] = [p for p in records_of(tmp_path / "com1.log")[0]["serial"]["ports"] if p["kind"] == "pci"]
    assert pci["rate"] == "set" and pci["clock_hz"] == 14745600 and pci["used"]
    qemu_with(tmp_path, ["-chardev", f"file,id=p,path={tmp_path / 'q.log'}", "-device", "pci-serial,chardev=p"],
              CHEAP + " serial_clock=3906250")
    recs = records_of(tmp_path / "com1.log")
    [pci] = [p for p in recs[0]["serial"]["ports"] if p["kind"] == "pci"]
    assert pci["port"] is None and not pci["used"] and "not reachable" in pci["problem"]
    assert recs[-1]["t"] == "done"
