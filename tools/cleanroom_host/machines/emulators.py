"""The emulators: one row each (EMULATORS, at the end), and how each is started: command lines,
temporary ISOs, bochsrc.

A row says everything the tool knows about one emulator: its name and help line,
the builder that turns a RunSpec into a Launch, its speed for the duration
estimate, whether a long run is refused, what its runs' TSC counts and whether
they can show caches and TLB effects, whether it boots the ISO, whether it is
QEMU (QMP, --serial, --screendump, --qr-pages), and the machine kind of its
results. `run --emulator`'s choices and help, the estimate (estimate.py), the
report's platform (machine.py) and the runner read the rows; adding an emulator
is one row, plus its builder when none of these fits.
"""

from __future__ import annotations

import importlib
import os
import shlex
import shutil
import signal
import subprocess
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable

from ..records import model
from . import usercode
from ..records.kinds import BOCHS, BOCHS_INSTRUCTIONS, HOST_TICKS, HOSTED, INSTRUCTIONS, QEMU_ICOUNT, QEMU_TCG, TICKS, VM, Units
from ..records.text import not_installed

OVMF = Path("/usr/share/ovmf/OVMF.fd")
# The kernel's hardware virtualisation (the kvm_intel or kvm_amd module): QEMU's -accel kvm opens it.
KVM_DEVICE = Path("/dev/kvm")
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
    cpus: int | None = None  # --cpus N: N CPUs (QEMU -smp N, hosted taskset over N) and cpus=N; None: one
    oversubscribe: bool = False  # hosted: --cpus N may exceed the CPUs allowed (workers share them; logic only)
    serial: str = "com1"  # QEMU: the machine's only UART, which carries the log (SERIAL_PORTS)
    screendump: Path | None = None  # QEMU: save the final screen here (PPM) through QMP
    qr_pages: Path | None = None  # QEMU: save every results QR page here (qr-000.ppm, ...) through QMP
    model: str | None = None  # qemu-model: the preset (--model; None: model.DEFAULT_PRESET)
    plugin: Path = Path("build/cachemodel/libcachemodel.so")  # qemu-model: the plugin (`make`)
    modules: tuple[Path, ...] = ()  # the user's code (machines/usercode.py): multiboot modules, hosted files
    user_code: dict[str, Any] | None = None  # its source and where each line's bytes begin (results.json's run)


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


def module_name(i: int) -> str:
    """The i-th module's file on an ISO (and its string for the kernel)."""
    return f"user-{i}.bin"


def grub_cfg(cmdline: str, modules: int = 0) -> str:
    args = " ".join(_grub_quote(t) for t in cmdline.split())
    # the user's code: GRUB loads each module beside the kernel (multiboot2's module tags)
    loads = "".join(f"    module2 /boot/{module_name(i)} {module_name(i)}\n" for i in range(modules))
    # multiboot2, and text mode kept on a BIOS, as iso/grub.cfg says why
    return ("set timeout=0\n"
            "set default=0\n"
            "insmod all_video\n"  # on UEFI the framebuffer the kernel draws on (iso/grub.cfg says why)
            "menuentry \"cleanroom\" {\n"
            f"    multiboot2 /boot/cleanroom.elf {args}\n"
            + loads +
            "    if [ \"$grub_platform\" = pc ]; then set gfxpayload=text; fi\n"
            "    boot\n"
            "}\n")


def make_iso(kernel: Path, cmdline: str, workdir: Path, modules: tuple[Path, ...] = ()) -> Path:
    """Build a GRUB rescue ISO whose only entry boots kernel with cmdline (and the modules beside it)."""
    _need_file(kernel, "kernel", "make")
    _need_program("grub-mkrescue")
    root = workdir / "isodir"
    (root / "boot" / "grub").mkdir(parents=True, exist_ok=True)
    shutil.copyfile(kernel, root / "boot" / "cleanroom.elf")
    for i, module in enumerate(modules):
        shutil.copyfile(module, root / "boot" / module_name(i))
    (root / "boot" / "grub" / "grub.cfg").write_text(grub_cfg(cmdline, len(modules)), encoding="ascii")
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


# What cleanroom needs of every QEMU machine besides its UART: the exit port the kernel's exit=qemu
# writes (QEMU then exits with (status << 1) | 1), and no reboot (a triple fault ends QEMU).
QEMU_EXIT = ["-no-reboot", "-device", "isa-debug-exit,iobase=0xf4,iosize=0x04"]


# -icount's options, for every path that boots with it (run, ab, make run, LAVA's jobs, the tests): shift=0, one
# TSC tick (1 ns of virtual time) per instruction; sleep=off, virtual time never waits for the host's clock (with
# QEMU's default sleep=on it follows the host's whenever the vCPU waits: six boots of bench=tsc read the PM timer
# at 999999599 or 1000006000 Hz and gave five different logs; with sleep=off eight gave one, docs/REPORT.md,
# Exactness). The RTC: the firmware reads and waits on it, so it runs on virtual time (clock=vm) from a fixed date,
# not the host's (as Bochs' clock: sync=none, time0 below).
ICOUNT_ARGS = ("-icount", "shift=0,sleep=off", "-rtc", "base=2000-01-01T00:00:00,clock=vm")


# Only the devices a run uses: -nodefaults drops QEMU's default floppy, CD-ROM drive, network card and
# parallel port. SeaBIOS probing the empty CD-ROM drive was 0.35 s of every -kernel boot under -icount
# (three quarters of the firmware's time), OVMF's network boot attempt about 1 s of a UEFI boot. The
# VGA card comes back as QEMU's default (std; a --qemu-arg=-vga given later replaces it), the UART from
# serial_args, an ISO's CD-ROM drive from -cdrom.
QEMU_DEVICES = ["-nodefaults", "-vga", "std"]


def _qemu_common(emu: Emulator, spec: RunSpec, qmp: Path | None = None) -> list[str]:
    # --screendump, --qr-pages: a QMP socket to ask for the screen (and press keys) through
    argv = [*QEMU_DEVICES, "-display", "none", *serial_args(spec.serial), "-monitor", "none", *QEMU_EXIT,
            "-m", str(spec.memory)]
    if qmp is not None:
        argv += ["-qmp", f"unix:{qmp},server=on,wait=off"]
    # the row's accelerator (kvm: -accel kvm)
    argv += list(emu.accel)
    cpu = spec.cpu or emu.default_cpu
    if cpu:
        argv += ["-cpu", cpu]
    if spec.cpus:
        argv += ["-smp", str(spec.cpus)]
    return argv + list(spec.qemu_args) + emu.timing_args()


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


def cmdline_cpus(cmdline: str | None, available: int) -> int | None:
    """The CPUs a hosted run's own command line asks for: cpus=N, cpus=all, or suite=smp without
    cpus= (the kernel takes every CPU then too); None: one (cpus=1, or nothing said). A value the
    kernel will refuse is left to it (None here)."""
    tokens = dict(t.split("=", 1) for t in (cmdline or "").split() if "=" in t)
    want = tokens.get("cpus", "all" if tokens.get("suite") == "smp" else "1")
    if want == "all":
        return available if available > 1 else None
    return min(int(want), available) if want.isdigit() and int(want) > 1 else None


REPLICAS_KEY = "replicas"  # lib/config.c's key: this boot is one of N the host merges
# run's boots (hosted: processes) where the clock is real and nothing else says (cli.py's --boots): at 5
# the median's interval over them covers 93.8 %, and compare's Mann-Whitney over 5 and 5 96.8 %; the
# hosted quick suite's budget (lib/defaults.h) is shared among them
DEFAULT_BOOTS = 5
# `cleanroom ab`'s pairs (each side's boots, run in turn) where the clock is real: on the 2-vCPU Intel guest
# of 2026-11-29 a planted 10-35 % slowdown of ctxsw's round robin (delay=2) was resolved in 9 of 10 A/Bs
# (n=4) and 10 of 10 (n=8) at 20 pairs, and an A/A called 0 of 350 cases different (docs/REPORT.md,
# Replicas); the signed-rank interval over 20 covers 95.2 %
DEFAULT_PAIRS = 20


def cmdline_replicas(cmdline: str | None) -> int | None:
    """replicas=N as the command line gives it (None: not given, or a value the kernel will refuse)."""
    tokens = dict(t.split("=", 1) for t in (cmdline or "").split() if "=" in t)
    want = tokens.get(REPLICAS_KEY, "")
    return int(want) if want.isdigit() and int(want) >= 1 else None


def with_replicas(cmdline: str | None, n: int) -> str:
    """The command line told it is one of n replicas (unless it says so itself)."""
    line = cmdline or ""
    if cmdline_replicas(line) is not None:
        return line
    return f"{line} {REPLICAS_KEY}={n}".strip()


def prepare_hosted(spec: RunSpec) -> Launch:
    """The Linux build, pinned with taskset to one CPU (--cpus N: to N of them, the last N
    this process may use, the first of them the benchmark's own); tokens become argv."""
    if spec.cpu is not None:
        raise SetupError("--cpu does not apply to hosted (it runs on the host's CPU)")
    allowed = sorted(os.sched_getaffinity(0))
    if spec.cpus is None and spec.host_cpu is None:
        spec = replace(spec, cpus=cmdline_cpus(spec.cmdline, len(allowed)))
    if spec.cpus:
        if spec.host_cpu is not None:
            raise SetupError("--host-cpu and --cpus: choose one (--cpus N takes the last N CPUs allowed)")
        if spec.cpus > len(allowed) and not spec.oversubscribe:
            raise SetupError(f"--cpus {spec.cpus}: this process may use {len(allowed)} CPU(s) "
                             f"({', '.join(map(str, allowed))}); --oversubscribe runs {spec.cpus} workers over "
                             "them, to check the logic (no timing)")
        cpus = allowed[-spec.cpus:]
        cpu_list = ",".join(map(str, cpus))
        return _hosted_launch(spec, cpu_list, {"host_cpus": cpus})
    cpu = spec.host_cpu if spec.host_cpu is not None else allowed[-1]
    if cpu not in allowed:
        raise SetupError(f"--host-cpu {cpu}: not a CPU this process may use ({', '.join(map(str, allowed))})")
    return _hosted_launch(spec, str(cpu), {"host_cpu": cpu})


def _hosted_launch(spec: RunSpec, cpu_list: str, info: dict[str, object]) -> Launch:
    taskset = _need_program("taskset")
    if spec.binary:
        prog = _program(spec, spec.binary)
    else:
        _need_file(spec.hosted, "hosted build", "make hosted")
        prog = str(spec.hosted)
    tokens = (spec.cmdline or "").split()
    env = {usercode.HOSTED_MODULES_ENV: ":".join(str(m.absolute()) for m in spec.modules)} if spec.modules else {}
    return Launch([taskset, "-c", cpu_list, prog, *tokens], " ".join(tokens), info=info, env=env)


# --- the builders: RunSpec -> Launch ------------------------------------------------

def run_hosted(emu: Emulator, spec: RunSpec, workdir: Path) -> Launch:
    """hosted: the Linux build, pinned to one CPU (no guest, no ISO, no final screen)."""
    return prepare_hosted(replace(spec, hosted=spec.hosted.absolute()))


def _final_screen(emu: Emulator, spec: RunSpec, workdir: Path) -> tuple[RunSpec, Path | None, str]:
    """--screendump and --qr-pages: the kernel halts at done (exit=halt unless the user chose
    an exit), so the screen is still there when QMP asks for it. Returns the spec
    (--qr-pages adds qr=on unless the user chose), the QMP socket (None: none) and
    the exit= to add when the command line names none."""
    qmp: Path | None = None
    exit_default = "auto"
    if spec.screendump is not None:
        if not emu.qemu:
            raise SetupError(f"--screendump needs QEMU ({', '.join(qemu_names())}), not {emu.name}")
        if emu.needs_iso and spec.cmdline is None:
            raise SetupError("--screendump with the built ISO: give --cmdline (its menu entries exit at done, "
                             "before the screen could be saved)")
        qmp = workdir.absolute() / QMP_SOCKET
        exit_default = "halt"
    if spec.qr_pages is not None:
        if spec.screendump is not None:
            raise SetupError("--qr-pages and --screendump: choose one (the QR pages are the final screens)")
        if emu.needs_iso and spec.cmdline is None:
            raise SetupError("--qr-pages with the built ISO: give --cmdline (its menu entries exit at done, "
                             "before the codes are shown)")
        qmp = workdir.absolute() / QMP_SOCKET
        exit_default = "halt"
        spec = replace(spec, cmdline=with_default(spec.cmdline, "qr", "on"))
    if qmp is not None:
        _need_module("qemu.qmp", "qemu.qmp")
    return spec, qmp, exit_default


def boot_kernel(emu: Emulator, spec: RunSpec, workdir: Path) -> Launch:
    """QEMU's own multiboot loader: -kernel KERNEL -append CMDLINE (-icount where the row's TSC
    counts instructions; the model plugin where it models caches)."""
    spec, qmp, exit_default = _final_screen(emu, spec, workdir)
    prog = _program(spec, "qemu-system-i386")
    _need_file(spec.kernel, "kernel", "make")
    plugin = _model_plugin(spec, workdir) if emu.model_plugin else None
    cmdline = with_exit(spec.cmdline, exit_default)
    argv = [prog, "-kernel", _kernel_here(spec.kernel, workdir), "-append", cmdline] + _qemu_common(emu, spec, qmp)
    if spec.modules:  # QEMU's multiboot loader takes -initrd's files as modules (a comma in a path doubled)
        argv += ["-initrd", ",".join(str(m.absolute()).replace(",", ",,") for m in spec.modules)]
    info: dict[str, object] = {"kernel": str(spec.kernel)}
    if plugin is None:
        return Launch(argv, cmdline, qmp=qmp, info=info)
    option, out = plugin
    return Launch(argv + ["-plugin", option], cmdline, qmp=qmp, collect=[out], info=info)


# QEMU's multiboot loader puts -kernel's path at the head of the command line the kernel gets (and parses, and
# sends back in its hello record): under -icount a longer path is more instructions before the TSC calibration,
# which moves where the PM timer's ticks fall. The kernel goes in by this name, a link in the run's directory
# (where QEMU runs), so that a boot does not depend on where its kernel lies (a worktree, a CI job's checkout).
KERNEL_LINK = "cleanroom.elf"


def _kernel_here(kernel: Path, workdir: Path) -> str:
    """KERNEL_LINK in workdir, pointing at the kernel; QEMU's -kernel argument (the emulator runs in workdir)."""
    (workdir / KERNEL_LINK).symlink_to(kernel)
    return KERNEL_LINK


def boot_kvm(emu: Emulator, spec: RunSpec, workdir: Path) -> Launch:
    """QEMU's multiboot loader under KVM (the row's -accel kvm -cpu host): the kernel on this machine's
    own CPU. Refused before anything starts when there is no KVM to open."""
    if not os.access(KVM_DEVICE, os.R_OK | os.W_OK):
        why = "does not exist" if not KVM_DEVICE.exists() else "is not readable and writable by this user"
        raise SetupError(f"--emulator {emu.name} needs {KVM_DEVICE}, which {why}: hardware virtualisation (VT-x or "
                         f"AMD-V) on in the firmware, the kvm_intel or kvm_amd module loaded, and this user in the "
                         f"group that owns {KVM_DEVICE} (usually kvm)")
    return boot_kernel(emu, spec, workdir)


@dataclass
class IsoBoot:
    """What an ISO boot starts from: the built ISO as is, or a temporary one carrying --cmdline."""

    spec: RunSpec
    qmp: Path | None
    iso: Path
    cmdline: str | None  # None: the ISO's own default menu entry
    keep: list[Path]  # the temporary ISO's grub.cfg


def _iso_boot(emu: Emulator, spec: RunSpec, workdir: Path) -> IsoBoot:
    spec, qmp, exit_default = _final_screen(emu, spec, workdir)
    if spec.cmdline is None:
        if spec.modules:
            raise SetupError("the user's code with the built ISO: give --cmdline (a temporary ISO carries the code)")
        _need_file(spec.iso, "ISO", "make iso")
        return IsoBoot(spec, qmp, spec.iso, None, [])
    cmdline = with_exit(spec.cmdline, exit_default)
    iso = make_iso(spec.kernel, cmdline, workdir, spec.modules)
    return IsoBoot(spec, qmp, iso, cmdline, [workdir / "isodir" / "boot" / "grub" / "grub.cfg"])


def boot_iso_bios(emu: Emulator, spec: RunSpec, workdir: Path) -> Launch:
    """GRUB under SeaBIOS: qemu-system-i386 -cdrom ISO -boot d."""
    b = _iso_boot(emu, spec, workdir)
    prog = _program(b.spec, "qemu-system-i386")
    return Launch([prog, "-cdrom", str(b.iso), "-boot", "d"] + _qemu_common(emu, b.spec, b.qmp), b.cmdline,
                  keep=b.keep, qmp=b.qmp)


def boot_iso_uefi(emu: Emulator, spec: RunSpec, workdir: Path) -> Launch:
    """GRUB under OVMF: qemu-system-x86_64 -bios OVMF -cdrom ISO."""
    b = _iso_boot(emu, spec, workdir)
    prog = _program(b.spec, "qemu-system-x86_64")
    _need_file(OVMF, "OVMF firmware")
    return Launch([prog, "-bios", str(OVMF), "-cdrom", str(b.iso)] + _qemu_common(emu, b.spec, b.qmp),
                  b.cmdline, keep=b.keep, qmp=b.qmp)


def boot_bochs(emu: Emulator, spec: RunSpec, workdir: Path) -> Launch:
    """Bochs booting the ISO, its term display under a pseudo-terminal, COM1 into a file."""
    b = _iso_boot(emu, spec, workdir)
    prog = _program(b.spec, "bochs")
    if not b.spec.binary:
        _need_file(BOCHS_BIOS, "Bochs BIOS")
        _need_file(BOCHS_VGABIOS, "VGA BIOS")
    serial = workdir / "bochs-serial.out"
    rc = workdir / "bochsrc"
    rcfile = workdir / "bochs.rc"
    rc.write_text(bochsrc(b.iso, serial, workdir / "bochs.log", b.spec.memory, b.spec.cpu), encoding="ascii")
    rcfile.write_text(BOCHS_RC, encoding="ascii")
    serial.write_bytes(b"")
    # Bochs ignores SIGTERM while it runs; its serial file is already written.
    return Launch([prog, "-q", "-f", str(rc), "-rc", str(rcfile)], b.cmdline,
                  serial_file=serial, needs_pty=True, env={"TERM": "vt100"},
                  stop_signal=signal.SIGKILL, keep=b.keep + [rc], emulator_log=workdir / "bochs.log")


# --- the table ---------------------------------------------------------------------

@dataclass(frozen=True)
class Speed:
    """Measured costs of one emulator on the reference host (the duration estimate, estimate.py)."""

    bytes_per_s: float  # rep stosd zeroing throughput, 1 MiB buffers, paging off and on
    refill_s: float  # fixed cost of one refill call (size 0)
    switch_s: float  # one fiber switch
    boot_s: float  # boot to done with nothing measured
    lock_rep_s: float  # one rep of the whole locks benchmark (all its cases)
    aspace_rep_s: float = 0.0  # one rep of every aspace case but workset_threads
    thread_switch_s: float = 0.0  # one ring-3 thread switch between address spaces


def slowed(speed: Speed, factor: float) -> Speed:
    """An emulator's costs, each `factor` times as long."""
    return Speed(speed.bytes_per_s / factor, speed.refill_s * factor, speed.switch_s * factor,
                 speed.boot_s * factor, speed.lock_rep_s * factor, speed.aspace_rep_s * factor,
                 speed.thread_switch_s * factor)


# What a row's runs can show of caches and of the TLB.
NONE = "not modelled"  # an emulator: every access costs the same
MODELLED = "modelled"  # the cache/TLB model plugin prices every access (docs/MODEL.md)
REAL = "real (this CPU's)"

Builder = Callable[["Emulator", RunSpec, Path], Launch]


@dataclass(frozen=True)
class Emulator:
    """One emulator: everything the tool knows about it (see the module's docstring)."""

    name: str  # --emulator NAME, results.json's run.emulator, results/<time>-NAME
    help: str  # one line of `run --help`
    build: Builder  # how a run starts: RunSpec -> Launch
    speed: Speed  # the duration estimate's costs
    kind: str  # the machine kind of its results (kinds.py)
    tsc: Units  # what one TSC tick of its runs is
    caches: str = NONE  # NONE, MODELLED or REAL
    tlb: str = NONE
    refuses_long: bool = True  # a run estimated over estimate.LIMIT_S needs --yes
    needs_iso: bool = False  # boots the ISO: the built one, or a temporary one carrying --cmdline
    qemu: bool = False  # QEMU: --qemu-arg, --serial, --screendump and --qr-pages apply
    smp: bool = False  # --cpus N applies (the machine gets N CPUs, the kernel cpus=N)
    accel: tuple[str, ...] = ()  # QEMU: the accelerator's options (none: TCG, QEMU's own translator)
    default_cpu: str | None = None  # QEMU -cpu when --cpu names none (none: QEMU's default model)
    # what the emulator prints on stderr when it has stopped the guest for good but keeps running
    # (KVM's "internal error"): the run ends at once and says so, instead of waiting out the silence limit
    stops: tuple[str, ...] = ()
    advice: tuple[tuple[str, str], ...] = ()  # (text on stderr, what to do about it) for a run that failed

    def timing_args(self) -> list[str]:
        """QEMU options that make its TSC what the row says: under -icount (ICOUNT_ARGS) one tick per instruction,
        and a boot a function of the kernel, its command line and its machine alone."""
        return list(ICOUNT_ARGS) if self.qemu and self.tsc == INSTRUCTIONS else []

    @property
    def loads_kernel(self) -> bool:
        """QEMU's own multiboot loader boots the kernel ELF (-kernel, -append), no firmware menu or plugin:
        what LAVA's qemu device type can run too (lava-job --emulator)."""
        return self.qemu and not self.needs_iso and not self.model_plugin

    def advice_for(self, stderr: str) -> list[str]:
        """What to do about what the emulator said, for each known problem it names."""
        return [what for text, what in self.advice if text in stderr]

    @property
    def model_plugin(self) -> bool:
        """It runs the cache/TLB model plugin: --model and --plugin apply, results get `model` figures."""
        return self.caches == MODELLED

    @property
    def hosted(self) -> bool:
        """The hosted build: a Linux process, no guest (no --memory), the hosted build's defaults."""
        return self.kind == HOSTED

    def shows(self) -> str:
        """What its runs can show, for --help: the unit of the TSC, caches and TLB."""
        seen = f"caches and TLB {self.caches}" if self.caches == self.tlb else f"caches {self.caches}, TLB {self.tlb}"
        return f"TSC unit: {self.tsc.name}; {seen}"

    def launch(self, spec: RunSpec, workdir: Path) -> Launch:
        if spec.oversubscribe:
            if not self.hosted:
                raise SetupError(f"--oversubscribe applies to hosted only (a {self.name} machine gets one vCPU per "
                                 "CPU: --cpus N)")
            if spec.cpus is None:
                raise SetupError("--oversubscribe needs --cpus N: the workers to run over the CPUs allowed")
            spec = replace(spec, cmdline=with_default(spec.cmdline, "oversubscribe", "1"))
        if spec.cpus is not None:
            if not self.smp:
                raise SetupError(f"--cpus does not apply to {self.name} (it applies to: "
                                 f"{', '.join(e.name for e in EMULATORS if e.smp)})")
            spec = replace(spec, cmdline=with_default(spec.cmdline, "cpus", str(spec.cpus)))
        return self.build(self, spec, workdir)


# Measured 2026-11-22 on a 2-CPU AMD EPYC VM, QEMU 7.2.22 (Debian), Bochs 2.7
# (Debian), with `cleanroom run` of: bench=workset sizes=1M reps=1000 (Bochs:
# 50) runs=2 warmup=0 paging=both for bytes/s; sizes=0 reps=2000000 (Bochs:
# 200000) for the refill and switch costs (split by the cycles of single vs
# multi); sizes=0 reps=1 runs=1 for the boot; bench=locks reps=10000 runs=1
# warmup=0 paging=off for the locks. See docs/REPORT.md.
# aspace (2026-11-23, same machine): bench=aspace paging=on sizes=0 reps=2000
# (Bochs: 500) runs=1 warmup=0, the wall time less the boot over 2 rounds;
# the thread switch from workset_threads' own cycles at size 0 under TCG
# (QEMU drops its software TLB at every CR3 load), taken for all emulators.
# locks (2026-11-23, after the LiteThreads handshake went to a tenth of the
# steps): bench=locks reps=10000 runs=1 warmup=0 paging=off, the locks time of
# the run's bench_seconds over 10000 reps (iso and uefi scaled as qemu).
ICOUNT_SPEED = Speed(1.0e9, 37e-9, 8e-9, 2.0, 27e-6, 560e-6, 4e-6)
# qemu-model (qemu-icount plus the cache/TLB plugin): every cost of qemu-icount times this factor
# (the plugin's callback on every memory access). Measured (docs/MODEL.md, Speed): the quick workset,
# paging=both, 6.1 s under qemu-icount and 29.9 s under qemu-model on the development machine.
MODEL_SLOWDOWN = 4.9

# The hosted build's speed, from its own records (cycles / tsc.hz) of sizes=0,1M,24M
# reps=200 and sizes=0 reps=2000000: real hardware, so it varies most
# between hosts. Used only to raise the silence limit, never to refuse.
HOSTED_SPEED = Speed(1.1e11, 11e-9, 3.7e-9, 0.2, 3.2e-6)
# kvm: the kernel on the host's own CPU, so the hosted build's costs (a real CPU) stand for it, with
# TCG's aspace figures (the hosted build runs no aspace) as an upper bound. Not measured under a
# hardware KVM: the development machine's /dev/kvm is a software hypervisor (docs/REPORT.md).
KVM_SPEED = replace(HOSTED_SPEED, boot_s=0.5, aspace_rep_s=190e-6, thread_switch_s=4e-6)

# In the order `run --help` lists them.
EMULATORS: tuple[Emulator, ...] = (
    Emulator("qemu", "qemu-system-i386 -kernel KERNEL -append CMDLINE (TCG)", boot_kernel,
             Speed(3.7e9, 22e-9, 22e-9, 0.3, 17e-6, 190e-6, 4e-6), QEMU_TCG, HOST_TICKS, qemu=True, smp=True),
    Emulator("qemu-icount", "the same with -icount shift=0,sleep=off (TSC counts instructions; boots repeat byte for "
                            "byte)",
             boot_kernel, ICOUNT_SPEED, QEMU_ICOUNT, INSTRUCTIONS, qemu=True, smp=True),
    Emulator("kvm", "qemu-system-i386 -accel kvm -cpu host (needs /dev/kvm): the kernel on this machine's own "
                    "CPU, with EPT's two-dimensional page walks and the host's interrupts around it; --cpu replaces "
                    "host", boot_kvm,
             KVM_SPEED, VM, TICKS, caches=REAL, tlb=REAL, refuses_long=False, qemu=True, smp=True,
             accel=("-accel", "kvm"), default_cpu="host", stops=("KVM internal error",),
             advice=(("failed to set MSR 0x10a", "QEMU could not give the guest the host's IA32_ARCH_CAPABILITIES "
                                                 "MSR (KVM nested in a VM, or a software hypervisor): try --cpu "
                                                 "host,-arch-capabilities"),
                     ("emulation failure", "KVM could not emulate an instruction of the kernel (a software "
                                           "hypervisor, or nested KVM): this KVM cannot run the whole suite; "
                                           "--emulator hosted measures this CPU instead"))),
    Emulator("iso", "qemu-system-i386 -cdrom ISO: GRUB under SeaBIOS", boot_iso_bios,
             Speed(3.7e9, 21e-9, 22e-9, 0.6, 16e-6, 190e-6, 4e-6), QEMU_TCG, HOST_TICKS, needs_iso=True, qemu=True,
             smp=True),
    Emulator("uefi", f"qemu-system-x86_64 -bios {OVMF} -cdrom ISO: GRUB under OVMF", boot_iso_uefi,
             Speed(3.6e9, 19e-9, 19e-9, 3.6, 20e-6, 190e-6, 4e-6), QEMU_TCG, HOST_TICKS, needs_iso=True, qemu=True,
             smp=True),
    Emulator("bochs", "Bochs booting the ISO (term display under a pseudo-terminal)", boot_bochs,
             Speed(2.1e8, 455e-9, 94e-9, 1.4, 96e-6, 3.2e-3, 4e-6), BOCHS, BOCHS_INSTRUCTIONS, needs_iso=True),
    Emulator("hosted", "build/hosted/cleanroom-hosted (`make hosted`), a Linux build of the benchmarks, pinned "
                       "with taskset -c to one CPU; CMDLINE tokens become its argv", run_hosted,
             HOSTED_SPEED, HOSTED, TICKS, caches=REAL, tlb=REAL, refuses_long=False, smp=True),
    Emulator("qemu-model", "qemu-icount plus the cache/TLB model plugin (build/cachemodel/libcachemodel.so, "
                           "`make`): --model picks the preset; each result gets `model` figures (modelled cycles, "
                           "misses; docs/MODEL.md), model.jsonl is kept", boot_kernel,
             slowed(ICOUNT_SPEED, MODEL_SLOWDOWN), QEMU_ICOUNT, INSTRUCTIONS, caches=MODELLED, tlb=MODELLED,
             qemu=True),
)
DEFAULT_EMULATOR = EMULATORS[0].name


def names() -> tuple[str, ...]:
    """Every emulator's name, in the table's order (`run --emulator`'s choices)."""
    return tuple(e.name for e in EMULATORS)


def qemu_names() -> tuple[str, ...]:
    return tuple(e.name for e in EMULATORS if e.qemu)


def find(name: object) -> Emulator | None:
    """The row of this name; None for anything else (results.json's "serial", a missing name)."""
    return next((e for e in EMULATORS if e.name == name), None)


def get(name: str) -> Emulator:
    """The row of this name; a SetupError naming the accepted ones for anything else."""
    emu = find(name)
    if emu is None:
        raise SetupError(f"unknown emulator {name!r}; choose one of {', '.join(names())}")
    return emu


def of_kind(kind: str) -> Emulator | None:
    """The first row whose results are of this machine kind (rows of one kind agree on the unit
    of the TSC and on whether the caches are real: tests/test_emulator_table.py checks it)."""
    return next((e for e in EMULATORS if e.kind == kind), None)


def prepare(spec: RunSpec, workdir: Path) -> Launch:
    """Check what the run needs, build any temporary ISO, return the launch."""
    emu = get(spec.emulator)
    # The emulator runs in workdir: every path it is given must be absolute.
    spec = replace(spec, kernel=spec.kernel.absolute(), iso=spec.iso.absolute())
    if spec.qemu_args and not emu.qemu:
        raise SetupError(f"--qemu-arg does not apply to {emu.name}")
    if spec.serial != "com1" and not emu.qemu:
        raise SetupError(f"--serial does not apply to {emu.name} (it has COM1 only)")
    if spec.model is not None and not emu.model_plugin:
        models = " or ".join(e.name for e in EMULATORS if e.model_plugin)
        raise SetupError(f"--model applies only to --emulator {models}, not {emu.name}")
    if spec.qr_pages is not None and not emu.qemu:
        raise SetupError(f"--qr-pages needs QEMU ({', '.join(qemu_names())}), not {emu.name}")
    return emu.launch(spec, workdir)
