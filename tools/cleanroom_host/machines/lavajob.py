"""LAVA job definitions that boot the kernel, and the monitors that make its records LAVA test cases.

LAVA (the engine KernelCI runs on) boots images on QEMU and on fleets of real
x86 machines, reads their serial consoles and keeps the results. A job is YAML:
`deploy` (the kernel or ISO), `boot` (LAVA's `qemu` method, or iPXE or GRUB on
hardware with the commands given here), `test` with `monitors` that turn
console lines into test cases, and an optional `notify`. LAVA's monitor
(lava_dispatcher's TestMonitorAction) waits for each monitor's `start`, then
takes every match of `pattern` as a test case until `end`, the patterns being
Python regular expressions that pexpect compiles with re.DOTALL and searches
in what the serial port has sent, the earliest match first. Two monitors
follow each other (docs/LAB.md):

  cleanroom-selftest  from `hello` to the first progress, result or done record
                      (a zero-width match, so that the next monitor starts there):
                      every `test` record a case named by its name, ok true/false
                      fixed up to pass/fail
  cleanroom           from there to `done`: every `result` record a case named by
                      its bench, case and params (LAVA makes every run of
                      non-word characters an underscore), its median the
                      measurement, its unit the units

Every pattern ends at the record's CRC, so a line that has only partly arrived
never matches: what pexpect reads at a time cannot change what is found. LAVA
checks no CRC; `lava-fetch` reads the serial lines back out of LAVA's log and
checks every record as `parse` does.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..records import kinds
from ..records.text import not_installed
from . import emulators, estimate
from .runner import DEFAULT_SILENCE_S

QEMU_DEVICE = "qemu"  # LAVA's device type that starts QEMU on the dispatcher
PC_DEVICE = "x86"  # LAVA's device type of x86 PCs that boot from the network with iPXE or GRUB
DEVICE_TYPES = (QEMU_DEVICE, PC_DEVICE)
IPXE, GRUB = BOOTS = ("ipxe", "grub")  # x86: how the PC loads the kernel (LAVA's boot methods)
URL_SCHEMES = ("http://", "https://", "file://")  # what LAVA's dispatcher downloads

MONITOR_SELFTEST = "cleanroom-selftest"
MONITOR_RESULTS = "cleanroom"
# A boot's first record.
HELLO = r'@cr1 \{"t":"hello",'
# Where the self-tests are over: before the first progress, result or done record (zero-width, so that
# the results' monitor starts at that very record).
AFTER_SELFTESTS = r'(?=@cr1 \{"t":"(?:progress|result|done)",)'
DONE = r'@cr1 \{"t":"done",'
# The rest of a record's line, up to its CRC: a line that has only partly arrived never matches.
_LINE_END = r'[^\r\n]*\} ~[0-9a-f]{8}'
TEST = r'@cr1 \{"t":"test","seq":\d+,"name":"(?P<test_case_id>[^"]+)","ok":(?P<result>true|false),' + _LINE_END
# bench, case and params are one run of the line (the kernel writes case_no after them; older kernels
# wrote it between case and params, where it becomes part of the name)
RESULT = (r'@cr1 \{"t":"result","seq":\d+,"bench":"(?P<test_case_id>[^"]+","case":"[^"]+"(?:,"case_no":\d+)?'
          r',"params":\{[^{}\r\n]*\})(?:,"case_no":\d+)?,"unit":"(?P<units>[^"]+)"[^\r\n]*?'
          r',"med":(?P<measurement>-?\d+),' + _LINE_END)
OK_RESULTS = {"true": "pass", "false": "fail"}


def monitors() -> list[dict[str, Any]]:
    """The test action's monitors: the self-tests, then the results (see the module's docstring)."""
    return [
        {"name": MONITOR_SELFTEST, "start": HELLO, "end": AFTER_SELFTESTS, "pattern": TEST, "fixupdict": OK_RESULTS},
        {"name": MONITOR_RESULTS, "start": AFTER_SELFTESTS, "end": DONE, "pattern": RESULT},
    ]


class LavaJobError(ValueError):
    """A job that cannot be written as asked; the message says why and what is accepted."""


@dataclass(frozen=True)
class JobSpec:
    """What `lava-job` was asked for."""

    device_type: str  # DEVICE_TYPES
    cmdline: str | None = None
    kernel_url: str | None = None
    iso_url: str | None = None
    emulator: str | None = None  # qemu: the row LAVA's QEMU stands for (default: the tool's default emulator)
    boot: str | None = None  # x86: BOOTS
    job_name: str | None = None
    notify: str | None = None  # a URL LAVA posts the results to when the job has finished
    priority: str = "medium"
    tags: tuple[str, ...] = ()  # LAVA runs the job only on a device with all these tags (one PC: its own)
    lava_device_type: str | None = None  # the job's device_type, when the lab's differs from device_type
    module_url: str | None = None  # the user's code (machines/usercode.py) as a multiboot module LAVA downloads


# The command line goes into QEMU's -append "...", iPXE's and GRUB's command lines: plain tokens only.
_SAFE_TOKEN = re.compile(r"[A-Za-z0-9_=,.:/+-]+")
HARDWARE_MEMORY_MB = 2048  # the estimate's memory for a PC: enough that no size of a sweep is left out
MIN_CONNECTION_S = 300.0  # LAVA waits this long at least for the next record (the boot's first one too)
TEST_MARGIN_S = 300.0  # the test action: twice the estimate (the model is within ~2x), plus this
JOB_MARGIN_S = 900.0  # the job: the test action plus the download, the boot and the power cycle


def whole_minutes(seconds: float) -> int:
    """LAVA's timeouts are whole minutes (at least one): seconds, rounded up."""
    return max(1, math.ceil(seconds / 60))


def _minutes(seconds: float) -> dict[str, int]:
    return {"minutes": whole_minutes(seconds)}


def _check(spec: JobSpec) -> None:
    if spec.device_type not in DEVICE_TYPES:
        raise LavaJobError(f"--device-type {spec.device_type!r}: choose one of {', '.join(DEVICE_TYPES)}")
    for token in (spec.cmdline or "").split():
        if not _SAFE_TOKEN.fullmatch(token):
            raise LavaJobError(f"--cmdline token {token!r}: a LAVA job passes only tokens of letters, digits and "
                               f"_=,.:/+- (it goes into QEMU's, iPXE's or GRUB's command line)")
    if spec.module_url is not None and spec.iso_url is not None:
        raise LavaJobError("the user's code with --iso-url: an ISO boots its own menu; give --kernel-url (or none "
                           "on qemu) and the code goes beside the kernel as its module")
    for option, url in (("--kernel-url", spec.kernel_url), ("--iso-url", spec.iso_url),
                        ("--module-url", spec.module_url)):
        if url is not None and not url.startswith(URL_SCHEMES):
            raise LavaJobError(f"{option} {url!r}: LAVA downloads {', '.join(s + '...' for s in URL_SCHEMES)}")
    if spec.device_type == QEMU_DEVICE:
        if spec.boot is not None:
            raise LavaJobError("--boot applies to --device-type x86 (on qemu, LAVA starts QEMU itself)")
        if spec.iso_url is not None and spec.cmdline is not None:
            raise LavaJobError("--cmdline with --iso-url: an ISO boots its own menu's default entry; give "
                               "--kernel-url to pass a command line")
        return
    if spec.emulator is not None:
        raise LavaJobError("--emulator applies to --device-type qemu (x86 is a real PC)")
    if spec.boot not in BOOTS:
        raise LavaJobError(f"--device-type x86 needs --boot: choose one of {', '.join(BOOTS)}")
    if spec.kernel_url is None and spec.iso_url is None:
        raise LavaJobError("--device-type x86 needs --kernel-url or --iso-url: LAVA's dispatcher downloads it and "
                           "serves it to the PC by TFTP")
    if spec.boot == IPXE and spec.iso_url is not None:
        raise LavaJobError("--boot ipxe loads a multiboot kernel (--kernel-url); an ISO needs --boot grub, which "
                           "mounts it (loopback) and boots its kernel")


def _qemu_row(spec: JobSpec) -> emulators.Emulator:
    name = spec.emulator if spec.emulator is not None else emulators.DEFAULT_EMULATOR
    row = emulators.find(name)
    choices = [e.name for e in emulators.EMULATORS if e.loads_kernel]
    if row is None or not row.loads_kernel:
        raise LavaJobError(f"--emulator {name!r}: LAVA's qemu device type can stand for {', '.join(choices)}")
    return row


def _options(argv: list[str]) -> list[str]:
    """QEMU options as LAVA's extra_options lists them: each flag with its value, one item each."""
    out: list[str] = []
    for arg in argv:
        if arg.startswith("-") or not out:
            out.append(arg)
        else:
            out[-1] += " " + arg
    return out


@dataclass(frozen=True)
class Timeouts:
    """The job's timeouts, from the duration estimate (estimate.py)."""

    estimate_s: float | None  # the run's estimate (None: nothing the model counts)
    test_s: float
    connection_s: float  # the longest wait for the next record: the longest case
    job_s: float


def timeouts(cmdline: str, row: emulators.Emulator, memory_mb: int) -> Timeouts:
    try:
        p = estimate.plan(cmdline)
    except estimate.CmdlineError as exc:
        raise LavaJobError(f"--cmdline: {exc}") from exc
    est = estimate.estimate(p, row.name, memory_mb)
    run_s = est.seconds if est is not None else row.speed.boot_s
    longest = estimate.longest_case(p, row.name, memory_mb) or 0.0
    connection = max(MIN_CONNECTION_S, estimate.silence_for(longest, DEFAULT_SILENCE_S))
    test = max(2 * run_s + TEST_MARGIN_S, connection)
    return Timeouts(est.seconds if est is not None else None, test, connection, test + JOB_MARGIN_S)


# LAVA's qemu device type: the arch picks qemu-system-i386, whose guest gets `-cpu core2duo` unless the
# job's context names a cpu. The rows run QEMU's own default model unless they name one (kvm: host), so
# the job names the same: a core2duo (MTRRs, MCE banks, its brand) makes other records than the row's.
QEMU_ARCH = "i386"
QEMU_DEFAULT_CPU = "qemu32"  # qemu-system-i386's model when no -cpu is given


# The labels of a tmpfs deploy's images: LAVA puts each downloaded file's path where its {label} stands
# (USER_IMAGE: the user's code, QEMU's multiboot loader's module by -initrd).
KERNEL_IMAGE, ISO_IMAGE, USER_IMAGE = "kernel", "iso", "user"
# What a qemu job that boots an ISO runs (its metadata's cleanroom.cmdline): GRUB's menu picks it.
ISO_DEFAULT_ENTRY = "the ISO's default entry"


def _tmpfs_deploy(spec: JobSpec, cmdline: str, kernel: Path) -> dict[str, Any]:
    if spec.iso_url is not None:
        image = {ISO_IMAGE: {"url": spec.iso_url, "image_arg": f"-cdrom {{{ISO_IMAGE}}} -boot d"}}
    else:
        url = spec.kernel_url or kernel.absolute().as_uri()
        image = {KERNEL_IMAGE: {"url": url, "image_arg": f'-kernel {{{KERNEL_IMAGE}}} -append "{cmdline}"'}}
        if spec.module_url is not None:
            image[USER_IMAGE] = {"url": spec.module_url, "image_arg": f"-initrd {{{USER_IMAGE}}}"}
    return {"to": "tmpfs", "timeout": _minutes(300), "images": image}


def _pc_commands(spec: JobSpec, cmdline: str) -> list[str]:
    """iPXE or GRUB commands that load the kernel from the dispatcher's TFTP server ({SERVER_IP} and
    {KERNEL} are LAVA's, filled in when the job runs)."""
    # the user's code: LAVA serves it as the ramdisk ({RAMDISK}), loaded as the kernel's multiboot module
    if spec.boot == IPXE:
        module = ["module tftp://{SERVER_IP}/{RAMDISK}"] if spec.module_url is not None else []
        return ["dhcp", f"kernel tftp://{{SERVER_IP}}/{{KERNEL}} {cmdline}", *module, "boot"]
    if spec.iso_url is not None:
        return ["net_bootp", "loopback cleanroom (tftp,{SERVER_IP})/{KERNEL}",
                f"multiboot (cleanroom)/boot/cleanroom.elf {cmdline}", "boot"]
    module = ["module (tftp,{SERVER_IP})/{RAMDISK}"] if spec.module_url is not None else []
    return ["net_bootp", f"multiboot (tftp,{{SERVER_IP}})/{{KERNEL}} {cmdline}", *module, "boot"]


def build(spec: JobSpec, kernel: Path) -> tuple[dict[str, Any], Timeouts]:
    """The job definition (and its timeouts) for spec; kernel: the ELF a qemu job without a URL boots
    (as a file:// URL, for lava-run on this machine)."""
    _check(spec)
    qemu = spec.device_type == QEMU_DEVICE
    # the rows' costs: QEMU's as LAVA runs it, a PC's those of the row that runs on a real CPU
    row = _qemu_row(spec) if qemu else emulators.of_kind(kinds.VM)
    assert row is not None
    cmdline = emulators.with_exit(spec.cmdline, "qemu" if qemu else "halt")
    t = timeouts(cmdline, row, emulators.DEFAULT_MEMORY_MB if qemu else HARDWARE_MEMORY_MB)
    where = f"{spec.device_type} ({row.name})" if qemu else f"x86 ({spec.boot})"
    # an ISO in QEMU boots its menu's default entry: the job passes no command line, so names none
    shown = ISO_DEFAULT_ENTRY if qemu and spec.iso_url is not None else cmdline
    job: dict[str, Any] = {
        "job_name": spec.job_name or f"cleanroom ({shown}) on {where}"[:200],
        "device_type": spec.lava_device_type or spec.device_type,
        "visibility": "public",
        "priority": spec.priority,
        "timeouts": {"job": _minutes(t.job_s), "connections": {"lava-test-monitor": _minutes(t.connection_s)}},
        "metadata": {"cleanroom.cmdline": shown,
                     "cleanroom.estimate": estimate.duration_text(t.estimate_s) if t.estimate_s else "none"},
    }
    if qemu:
        # LAVA's qemu device type adds -cpu host -enable-kvm unless no_kvm; -nographic puts COM1 on its console
        job["metadata"]["cleanroom.emulator"] = row.name
        job["context"] = {"arch": QEMU_ARCH, "cpu": row.default_cpu or QEMU_DEFAULT_CPU, "no_kvm": not row.accel,
                          "memory": emulators.DEFAULT_MEMORY_MB,
                          "extra_options": _options(emulators.QEMU_EXIT + row.timing_args())}
        deploy = _tmpfs_deploy(spec, cmdline, kernel)
        boot: dict[str, Any] = {"method": "qemu", "media": "tmpfs", "timeout": _minutes(120)}
    else:
        deploy = {"to": "tftp", "timeout": _minutes(600), "kernel": {"url": spec.kernel_url or spec.iso_url}}
        if spec.module_url is not None:  # as it is: no overlay or modules of LAVA's go into it
            deploy["ramdisk"] = {"url": spec.module_url, "install_overlay": False, "install_modules": False}
        boot = {"method": spec.boot, "commands": _pc_commands(spec, cmdline), "timeout": _minutes(900)}
    job["actions"] = [{"deploy": deploy}, {"boot": boot},
                      {"test": {"timeout": _minutes(t.test_s), "monitors": monitors()}}]
    if spec.tags:
        job["tags"] = list(spec.tags)
    if spec.notify is not None:
        job["notify"] = {"criteria": {"status": "finished"},
                         "callbacks": [{"url": spec.notify, "method": "POST", "dataset": "results",
                                        "content-type": "json"}]}
    return job, t


def to_yaml(job: dict[str, Any], header: list[str]) -> str:
    """The job as LAVA reads it (YAML), after comment lines."""
    try:
        import yaml
    except ImportError as exc:
        raise LavaJobError(not_installed("PyYAML")) from exc
    body = yaml.safe_dump(job, sort_keys=False, default_flow_style=False, width=1000)
    return "".join(f"# {line}\n" for line in header) + body


def validate(text: str) -> str | None:
    """Check a job's YAML with LAVA's own schema (lava_common.schemas, Debian's lava-common, which
    tools/setup.sh puts on the .venv's path): None when it passes, else LAVA's complaint. Raises
    ImportError when lava_common is not there."""
    import yaml
    from lava_common.schemas import validate as lava_validate
    from voluptuous import Invalid

    try:
        lava_validate(yaml.safe_load(text), strict=True)
    except Invalid as exc:
        return str(exc)
    return None
