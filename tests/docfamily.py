"""The smallest report module as docs/REPORT.md shows it ("Adding a benchmark's report"), read from that page,
for the tests that plant it: a module written only from the docs (test_report_summary: in a copy of the
tool; test_figure_text: its figure)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

REPO = Path(__file__).resolve().parent.parent
REPORT_MD = REPO / "docs" / "REPORT.md"
SECTION = "### Adding a benchmark's report"
PACKAGE = "cleanroom_host.reports"


def source(name: str) -> str:
    """The module's text, its NAME made `name`."""
    section = REPORT_MD.read_text().split(SECTION, 1)[1].split("\n## ", 1)[0]
    assert section.count("```python\n") == 1, f"{REPORT_MD}: {SECTION} shows one module, in a python block"
    return section.split("```python\n", 1)[1].split("```", 1)[0].replace("NAME", name)


def load(name: str) -> ModuleType:
    """The module, imported as reports/NAME.py of the tool would be (sys.modules keeps it: pop it after)."""
    spec = importlib.util.spec_from_loader(f"{PACKAGE}.{name}", loader=None)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    module.__file__ = str(REPO / "tools" / PACKAGE.replace(".", "/") / f"{name}.py")
    sys.modules[spec.name] = module
    exec(compile(source(name), module.__file__, "exec"), module.__dict__)
    return module
