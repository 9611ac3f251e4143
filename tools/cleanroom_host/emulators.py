"""How each emulator is started: command lines, temporary ISOs, bochsrc."""

from __future__ import annotations

import importlib
import os
import shlex
import shutil
import signal
import subprocess
from dataclasses import dataclass, field, replace
from pathlib import Path

from . import model
from .text import not_installed

EMULATORS = ("qemu", "qemu-icount", "iso", "uefi", "bochs", "hosted", "qemu-model")
ISO_EMULATORS = ("iso", "uefi", "bochs")
QEMU_EMULATORS = ("qemu", "qemu-icount", "iso", "uefi", "qemu-model")
# qemu-icount plus the cache/TLB model plugin (docs/MODEL.md), made by `make`
MODEL_EMULATOR = "qemu-model"

OVMF = Path("/usr/share/ovmf/OVMF.fd")
BOCHS_BIOS = Path("/usr/share/bochs/BIOS-bochs-latest")
BOCHS_VGABIOS = Path("/usr/share/vgabios/vgabios.bin")
# Emulated instructions per second: Bochs' virtual clock (and so the PIT the
# kernel calibrates its TSC against) runs at this rate, not at host time.
BOCHS_IPS = 50_000_000

DEFAULT_MEMORY_MB = 128

# --serial: which UART the emulated PC has; the tool reads the log from it.
# com1 is QEMU's default machine. com2: only an ISA UART at 0x2F8 (index 1
# picks QEMU's second COM address and IRQ 3); a `-serial null -serial stdio`
# pair would leave a working COM1 in the machine, which tests nothing. pci:
# no ISA UART, only a PCI 16550 (class 07/00, an I/O BAR), the kind Intel
# AMT serial-over-LAN and PCIe serial cards present.
SERIAL_PORTS = ("com1", "com2", "pci")
SERIAL_CHARDEV = "crlog"

# Debian packages that provide each program or file (tools/setup.sh installs them).
PACKAGES = {
    "qemu-system-i386": "qemu-system-x86",
    "qemu-system-x86_64": "qemu-system-x86",
    "taskset": "util-linux",
    "bochs": "bochs bochsbios vgabios bochs-term",
    "grub-mkrescue": "grub-common grub-pc-bin grub-efi-ia32-bin grub-efi-amd64-bin xorriso mtools",
    str(OVMF): "ovmf",
    str(BOCHS_BIOS): "bochsbios",
    str(BOCHS_VGABIOS): "vgabios",
}


class SetupError(Exception):
    """Something the run needs is missing; the message says how to get it."""


@dataclass
class RunSpec:
    """What the user asked for."""

    emulator: str
    kernel: Path
    iso: Path
    cmdline: str | None = None
    cpu: str | None = None
    memory: int = DEFAULT_MEMORY_MB
    qemu_args: list[str] = field(default_factory=list)
    binary: str | None = None  # replaces the emulator program (tests use a fake)
    hosted: Path = Path("build/hosted/cleanroom-hosted")  # the Linux build (`make hosted`)
    host_cpu: int | None = None  # hosted: the CPU to pin it to (None: the last one allowed)
    serial: str = "com1"  # QEMU: the machine's only UART, which carries the log (SERIAL_PORTS)
    screendump: Path | None = None  # QEMU: save the final screen here (PPM) through QMP
    qr_pages: Path | None = None  # QEMU: save every results QR page here (qr-000.ppm, ...) through QMP
    model: str | None = None  # qemu-model: the preset (--model; None: model.DEFAULT_PRESET)
    plugin: Path = Path("build/cachemodel/libcachemodel.so")  # qemu-model: the plugin (`make`)


@dataclass
class Launch:
    """How to start one run."""

    argv: list[str]
    kernel_cmdline: str | None  # None: the ISO's own default menu entry
    serial_file: Path | None = None  # None: the serial port is the process's stdout
    needs_pty: bool = False  # Bochs' term display needs a terminal
    env: dict[str, str] = field(default_factory=dict)  # added to the environment
    stop_signal: int = signal.SIGTERM  # how to end it early (then SIGKILL)
    keep: list[Path] = field(default_factory=list)  # files to copy into the results
    emulator_log: Path | None = None  # the emulator's own log file, if any
    info: dict[str, object] = field(default_factory=dict)  # recorded in results.json's run
    qmp: Path | None = None  # QEMU's QMP socket (--screendump, --qr-pages), else none
    collect: list[Path] = field(default_factory=list)  # files to copy into the results after the run

    def display(self) -> str:
        return shlex.join(self.argv)


def with_default(cmdline: str | None, key: str, value: str) -> str:
    """Append key=value unless the command line already sets key= (the user's choice wins)."""
    tokens = (cmdline or "").split()
    if not any(t.startswith(f"{key}=") for t in tokens):
        tokens.append(f"{key}={value}")
    return " ".join(tokens)


def with_exit(cmdline: str | None, default: str = "auto") -> str:
    """Append exit=<default> unless the command line already picks an exit."""
    return with_default(cmdline, "exit", default)


# QMP socket in the run's temporary directory (--screendump, --qr-pages).
QMP_SOCKET = "qmp.sock"


def _need_module(module: str, package: str) -> None:
    """A pinned Python package the run needs (SetupError before anything starts)."""
    try:
        importlib.import_module(module)
    except ImportError as exc:
        raise SetupError(not_installed(package)) from exc


def _need_program(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        pkg = PACKAGES.get(name, name)
        raise SetupError(f"{name} not found: install the Debian package(s) {pkg} "
                         f"(tools/setup.sh installs them)")
    return path


def _need_file(path: Path, what: str, build: str | None = None) -> None:
    if path.is_file():
        return
    if build is not None:
        raise SetupError(f"{what} {path} not found: build it with `{build}`")
    pkg = PACKAGES.get(str(path))
    hint = f": install the Debian package {pkg} (tools/setup.sh installs it)" if pkg else ""
    raise SetupError(f"{what} {path} not found{hint}")


def _program(spec: RunSpec, default: str) -> str:
    if spec.binary:
        if shutil.which(spec.binary) is None:
            raise SetupError(f"emulator binary {spec.binary} not found")
        return spec.binary
    _need_program(default)
    return default


def _grub_quote(token: str) -> str:
    """Quote one command-line token for grub.cfg (GRUB removes the quotes)."""
    safe = all(c.isalnum() or c in "=,._-+:/@%" for c in token)
    return token if safe and token else "'" + token.replace("'", "'\\''") + "'"


def grub_cfg(cmdline: str) -> str:
    args = " ".join(_grub_quote(t) for t in cmdline.split())
    # multiboot2, and text mode kept on a BIOS, as iso/grub.cfg says why
    return ("set timeout=0\n"
            "set default=0\n"
            "insmod all_video\n"  # on UEFI the framebuffer the kernel draws on (iso/grub.cfg says why)
            "menuentry \"cleanroom\" {\n"
            f"    multiboot2 /boot/cleanroom.elf {args}\n"
            "    if [ \"$grub_platform\" = pc ]; then set gfxpayload=text; fi\n"
            "    boot\n"
            "}\n")


def make_iso(kernel: Path, cmdline: str, workdir: Path) -> Path:
    """Build a GRUB rescue ISO whose only entry boots kernel with cmdline."""
    _need_file(kernel, "kernel", "make")
    _need_program("grub-mkrescue")
    root = workdir / "isodir"
    (root / "boot" / "grub").mkdir(parents=True, exist_ok=True)
    shutil.copyfile(kernel, root / "boot" / "cleanroom.elf")
    (root / "boot" / "grub" / "grub.cfg").write_text(grub_cfg(cmdline), encoding="ascii")
    iso = workdir / "cleanroom.iso"
    proc = subprocess.run(["grub-mkrescue", "-o", str(iso), str(root)],
                          stdin=subprocess.DEVNULL, capture_output=True, timeout=300)
    if proc.returncode != 0 or not iso.is_file():
        err = proc.stderr.decode("utf-8", "replace").strip()
        raise SetupError(f"grub-mkrescue failed (exit {proc.returncode}):\n{err}\n"
                         f"it needs grub-pc-bin, grub-efi-ia32-bin, grub-efi-amd64-bin, "
                         f"xorriso and mtools (tools/setup.sh installs them)")
    return iso


def bochsrc(iso: Path, serial: Path, log: Path, memory: int, cpu: str | None) -> str:
    cpu_line = "cpu: count=1, ips=%d, reset_on_triple_fault=0" % BOCHS_IPS
    if cpu:
        cpu_line = f"cpu: model={cpu}, count=1, ips={BOCHS_IPS}, reset_on_triple_fault=0"
    return "\n".join([
        f"megs: {memory}",
        f"romimage: file={BOCHS_BIOS}",
        f"vgaromimage: file={BOCHS_VGABIOS}",
        "ata0: enabled=1, ioaddr1=0x1f0, ioaddr2=0x3f0, irq=14",
        f"ata0-master: type=cdrom, path={iso}, status=inserted",
        "boot: cdrom",
        f"com1: enabled=1, mode=file, dev={serial}",
        "display_library: term",
        "mouse: enabled=0",
        cpu_line,
        # A fixed start time and no host-time sync: runs repeat exactly.
        "clock: sync=none, time0=946684800",
        f"log: {log}",
        "panic: action=fatal",
        "error: action=report",
        "info: action=report",
        "debug: action=ignore",
        "",
    ])


# Debugger commands: continue; should the simulation ever stop back in the
# debugger (it does at the end of a run), quit instead of reading the tty.
BOCHS_RC = "c\nquit\n"


def serial_args(port: str) -> list[str]:
    """QEMU arguments that give the machine only this UART, on the tool's stdin/stdout."""
    if port == "com1":
        return ["-serial", "stdio"]
    chardev = ["-chardev", f"stdio,id={SERIAL_CHARDEV}"]
    if port == "com2":
        return ["-serial", "none", *chardev, "-device", f"isa-serial,index=1,chardev={SERIAL_CHARDEV}"]
    if port == "pci":
        return ["-serial", "none", *chardev, "-device", f"pci-serial,chardev={SERIAL_CHARDEV}"]
    raise SetupError(f"unknown serial port {port!r}; choose one of {', '.join(SERIAL_PORTS)}")


def _qemu_common(spec: RunSpec, qmp: Path | None = None) -> list[str]:
    # --screendump, --qr-pages: a QMP socket to ask for the screen (and press keys) through
    argv = ["-display", "none", *serial_args(spec.serial), "-monitor", "none", "-no-reboot",
            "-device", "isa-debug-exit,iobase=0xf4,iosize=0x04", "-m", str(spec.memory)]
    if qmp is not None:
        argv += ["-qmp", f"unix:{qmp},server=on,wait=off"]
    if spec.cpu:
        argv += ["-cpu", spec.cpu]
    return argv + list(spec.qemu_args)


def _model_plugin(spec: RunSpec, workdir: Path) -> tuple[str, Path]:
    """qemu-model: -plugin's argument (the plugin, the kernel's mailbox, the output file, the preset)
    and the output file the plugin writes (docs/MODEL.md)."""
    preset = spec.model if spec.model is not None else model.DEFAULT_PRESET
    plugin = spec.plugin.absolute()
    try:
        model.check_preset(preset)
        _need_file(plugin, "cache model plugin", "make")
        mailbox = model.mailbox_address(spec.kernel)
    except model.ModelError as exc:
        raise SetupError(str(exc)) from exc
    out = workdir.absolute() / model.MODEL_FILE
    return model.plugin_option(plugin, mailbox, out, preset), out


def last_cpu() -> int:
    """The highest-numbered CPU this process may run on."""
    return max(os.sched_getaffinity(0))


def prepare_hosted(spec: RunSpec) -> Launch:
    """The Linux build, pinned to one CPU with taskset; tokens become argv."""
    if spec.cpu is not None:
        raise SetupError("--cpu does not apply to hosted (it runs on the host's CPU)")
    allowed = sorted(os.sched_getaffinity(0))
    cpu = spec.host_cpu if spec.host_cpu is not None else allowed[-1]
    if cpu not in allowed:
        raise SetupError(f"--host-cpu {cpu}: not a CPU this process may use ({', '.join(map(str, allowed))})")
    taskset = _need_program("taskset")
    if spec.binary:
        prog = _program(spec, spec.binary)
    else:
        _need_file(spec.hosted, "hosted build", "make hosted")
        prog = str(spec.hosted)
    tokens = (spec.cmdline or "").split()
    return Launch([taskset, "-c", str(cpu), prog, *tokens], " ".join(tokens), info={"host_cpu": cpu})


def prepare(spec: RunSpec, workdir: Path) -> Launch:
    """Check what the run needs, build any temporary ISO, return the launch."""
    emu = spec.emulator
    # The emulator runs in workdir: every path it is given must be absolute.
    spec = replace(spec, kernel=spec.kernel.absolute(), iso=spec.iso.absolute())
    if emu not in EMULATORS:
        raise SetupError(f"unknown emulator {emu!r}; choose one of {', '.join(EMULATORS)}")
    if spec.qemu_args and emu not in QEMU_EMULATORS:
        raise SetupError(f"--qemu-arg does not apply to {emu}")
    if spec.serial != "com1" and emu not in QEMU_EMULATORS:
        raise SetupError(f"--serial does not apply to {emu} (it has COM1 only)")
    if spec.model is not None and emu != MODEL_EMULATOR:
        raise SetupError(f"--model applies only to --emulator {MODEL_EMULATOR}, not {emu}")
    if spec.qr_pages is not None and emu not in QEMU_EMULATORS:
        raise SetupError(f"--qr-pages needs QEMU ({', '.join(QEMU_EMULATORS)}), not {emu}")
    if emu == "hosted":
        return prepare_hosted(replace(spec, hosted=spec.hosted.absolute()))
    # --screendump: the kernel halts at done (exit=halt unless the user chose
    # an exit), so the screen is still there when QMP asks for it.
    qmp: Path | None = None
    exit_default = "auto"
    if spec.screendump is not None:
        if emu not in QEMU_EMULATORS:
            raise SetupError(f"--screendump needs QEMU ({', '.join(QEMU_EMULATORS)}), not {emu}")
        if emu in ISO_EMULATORS and spec.cmdline is None:
            raise SetupError("--screendump with the built ISO: give --cmdline (its menu entries exit at done, "
                             "before the screen could be saved)")
        qmp = workdir.absolute() / QMP_SOCKET
        exit_default = "halt"
    # --qr-pages: the same, and the kernel shows its QR codes (qr=on unless the user chose)
    if spec.qr_pages is not None:
        if spec.screendump is not None:
            raise SetupError("--qr-pages and --screendump: choose one (the QR pages are the final screens)")
        if emu in ISO_EMULATORS and spec.cmdline is None:
            raise SetupError("--qr-pages with the built ISO: give --cmdline (its menu entries exit at done, "
                             "before the codes are shown)")
        qmp = workdir.absolute() / QMP_SOCKET
        exit_default = "halt"
        spec = replace(spec, cmdline=with_default(spec.cmdline, "qr", "on"))  # --qr-pages

    if qmp is not None:
        _need_module("qemu.qmp", "qemu.qmp")
    if emu in ("qemu", "qemu-icount", MODEL_EMULATOR):
        prog = _program(spec, "qemu-system-i386")
        _need_file(spec.kernel, "kernel", "make")
        plugin = _model_plugin(spec, workdir) if emu == MODEL_EMULATOR else None
        cmdline = with_exit(spec.cmdline, exit_default)
        argv = [prog, "-kernel", str(spec.kernel), "-append", cmdline] + _qemu_common(spec, qmp)
        if emu in ("qemu-icount", MODEL_EMULATOR):
            argv += ["-icount", "shift=0"]
        if plugin is None:
            return Launch(argv, cmdline, qmp=qmp)
        option, out = plugin
        return Launch(argv + ["-plugin", option], cmdline, qmp=qmp, collect=[out])

    # ISO boots: the built ISO as is, or a temporary one carrying --cmdline.
    iso_cmdline: str | None = None
    keep: list[Path] = []
    if spec.cmdline is None:
        _need_file(spec.iso, "ISO", "make iso")
        iso = spec.iso
    else:
        iso_cmdline = with_exit(spec.cmdline, exit_default)
        iso = make_iso(spec.kernel, iso_cmdline, workdir)
        keep.append(workdir / "isodir" / "boot" / "grub" / "grub.cfg")

    if emu == "iso":
        prog = _program(spec, "qemu-system-i386")
        return Launch([prog, "-cdrom", str(iso), "-boot", "d"] + _qemu_common(spec, qmp), iso_cmdline,
                      keep=keep, qmp=qmp)
    if emu == "uefi":
        prog = _program(spec, "qemu-system-x86_64")
        _need_file(OVMF, "OVMF firmware")
        return Launch([prog, "-bios", str(OVMF), "-cdrom", str(iso)] + _qemu_common(spec, qmp), iso_cmdline,
                      keep=keep, qmp=qmp)

    # bochs
    prog = _program(spec, "bochs")
    if not spec.binary:
        _need_file(BOCHS_BIOS, "Bochs BIOS")
        _need_file(BOCHS_VGABIOS, "VGA BIOS")
    serial = workdir / "bochs-serial.out"
    rc = workdir / "bochsrc"
    rcfile = workdir / "bochs.rc"
    rc.write_text(bochsrc(iso, serial, workdir / "bochs.log", spec.memory, spec.cpu), encoding="ascii")
    rcfile.write_text(BOCHS_RC, encoding="ascii")
    serial.write_bytes(b"")
    # Bochs ignores SIGTERM while it runs; its serial file is already written.
    return Launch([prog, "-q", "-f", str(rc), "-rc", str(rcfile)], iso_cmdline,
                  serial_file=serial, needs_pty=True, env={"TERM": "vt100"},
                  stop_signal=signal.SIGKILL, keep=keep + [rc], emulator_log=workdir / "bochs.log")
