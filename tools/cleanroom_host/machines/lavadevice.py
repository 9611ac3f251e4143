"""A LAVA device's configuration for one job, rendered as LAVA's server renders it (`lava-device`).

LAVA's dispatcher (lava-run, a worker) reads a device's configuration as YAML; the server
makes it from the device's dictionary, a Jinja2 template that extends its device type's
(`{% extends 'qemu.jinja2' %}`), rendered with the job's `context:` block as the template's
variables (lava_scheduler_app's Device.load_configuration: a sandboxed Jinja2 environment,
autoescape off, trim_blocks on, the device-type directories on its loader's path). LAVA's
qemu type takes QEMU's program from the context's `arch`: rendered without the job's
context, its command is `qemu-system-` and the job ends in validate. This renders a
dictionary with a job's context the same way, from the device-type templates of Debian's
lava-server (`tools/setup.sh lab-packages` unpacks them), and checks the result with LAVA's
own device schema (lava_common) where it can be imported. For a device on a LAVA server,
its server renders it: `lavacli devices dict get --render --context CONTEXT`, CONTEXT being
what `context_text` writes (docs/LAB.md).
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..records.text import not_installed

# Where lava-server looks for device-type templates (lava_server.settings.common.DEVICE_TYPES_PATHS),
# after the ones `tools/setup.sh lab-packages` unpacks into the repository's .venv.
LAB_TEMPLATES = Path(".venv") / "lava" / "device-types"
SERVER_TEMPLATES = (Path("/etc/lava-server/dispatcher-config/device-types"),
                    Path("/usr/share/lava-server/device-types"))
TEMPLATE_SUFFIX = ".jinja2"
SHOWN_TYPES = 6  # device types an error names when the asked one has no template


class LavaDeviceError(ValueError):
    """A configuration that cannot be rendered as asked; the message says why and what is accepted."""


@dataclass(frozen=True)
class JobContext:
    """What a job gives its device's configuration."""

    device_type: str
    context: dict[str, Any]


def read_job(text: str, name: str) -> JobContext:
    """The device type and context of a job definition (YAML)."""
    try:
        import yaml
    except ImportError as exc:
        raise LavaDeviceError(not_installed("PyYAML")) from exc
    try:
        job = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise LavaDeviceError(f"{name}: not YAML: {exc}") from exc
    if not isinstance(job, dict):
        raise LavaDeviceError(f"{name}: not a LAVA job definition (a mapping with device_type and actions)")
    device_type = job.get("device_type")
    if not isinstance(device_type, str) or not device_type:
        raise LavaDeviceError(f"{name}: the job names no device_type")
    context = job.get("context", {})
    if not isinstance(context, dict):
        raise LavaDeviceError(f"{name}: the job's context is {type(context).__name__}, not a mapping of variables")
    return JobContext(device_type, context)


def context_text(job: JobContext) -> str:
    """The job's context as one line of YAML: lavacli's --context, which the server loads as YAML."""
    import yaml

    return yaml.safe_dump(job.context, default_flow_style=True, width=10**6).strip()


def template_dirs(root: Path, given: Path | None) -> list[Path]:
    """The directories of device-type templates: the one given, else the lab's and the server's there are."""
    if given is not None:
        if not given.is_dir():
            raise LavaDeviceError(f"--templates {given}: not a directory")
        return [given]
    found = [d for d in (root / LAB_TEMPLATES, *SERVER_TEMPLATES) if d.is_dir()]
    if not found:
        raise LavaDeviceError(f"no LAVA device-type templates in {root / LAB_TEMPLATES} or "
                              f"{', '.join(map(str, SERVER_TEMPLATES))}: `tools/setup.sh lab-packages` unpacks "
                              f"Debian's lava-server's, or name a directory with --templates")
    return found


def _check_type(device_type: str, dirs: list[Path]) -> None:
    if any((d / (device_type + TEMPLATE_SUFFIX)).is_file() for d in dirs):
        return
    types = sorted({p.name[:-len(TEMPLATE_SUFFIX)] for d in dirs for p in d.glob("*" + TEMPLATE_SUFFIX)})
    near = difflib.get_close_matches(device_type, types, n=SHOWN_TYPES, cutoff=0.5) or types[:SHOWN_TYPES]
    raise LavaDeviceError(f"device type {device_type!r}: no {device_type}{TEMPLATE_SUFFIX} in "
                          f"{', '.join(map(str, dirs))}; {len(types)} device types there, e.g. {', '.join(near)}")


def render(job: JobContext, dirs: list[Path], dictionary: Path | None = None,
           device_type: str | None = None) -> str:
    """The device's configuration (YAML) for the job: its dictionary (a file, or the one line that
    extends the template of device_type, default the job's) rendered with the job's context as LAVA's
    server renders it."""
    try:
        import jinja2
        from jinja2.sandbox import SandboxedEnvironment
    except ImportError as exc:
        raise LavaDeviceError(not_installed("Jinja2")) from exc
    dtype = device_type or job.device_type
    if dictionary is None:
        _check_type(dtype, dirs)
        source = f"{{% extends '{dtype}{TEMPLATE_SUFFIX}' %}}\n"
    else:  # the dictionary names the template it extends
        try:
            source = dictionary.read_text(encoding="utf-8")
        except OSError as exc:
            raise LavaDeviceError(f"--dictionary {dictionary}: {exc.strerror or exc}") from exc
    env = SandboxedEnvironment(loader=jinja2.FileSystemLoader([str(d) for d in dirs]), autoescape=False,
                               trim_blocks=True)
    try:
        return env.from_string(source).render(**job.context)
    except jinja2.TemplateError as exc:
        raise LavaDeviceError(f"rendering {dictionary or dtype + TEMPLATE_SUFFIX}: {exc}") from exc


def validate(config: str) -> str | None:
    """Check a device configuration with LAVA's own device schema (lava_common.schemas.device): None
    when it passes, else LAVA's complaint. Raises ImportError when lava_common is not there."""
    import yaml
    from lava_common.schemas.device import validate as lava_validate
    from voluptuous import Invalid

    try:
        lava_validate(yaml.safe_load(config))
    except (Invalid, yaml.YAMLError) as exc:
        return str(exc)
    return None
