"""Stands in for libguestfs's Python binding (Debian's python3-guestfs: 109 packages with a kernel
and an appliance), which lava_dispatcher imports when it starts but uses only to build or change disk
images (deploys of images with overlays, test definitions written into a root filesystem). The jobs
`tools/cleanroom lava-job` writes deploy a kernel or an ISO to tmpfs and never reach it; a job that
does is told so here instead of running on half a library."""

from __future__ import annotations

from typing import NoReturn


def __getattr__(name: str) -> NoReturn:
    if name.startswith("__"):  # what the import system and introspection look for
        raise AttributeError(name)
    raise ImportError(f"guestfs.{name}: libguestfs is not installed (tools/lab/stubs/guestfs.py stands in for "
                      f"it): install Debian's python3-guestfs for jobs that build disk images")
