"""Live progress from `progress` records: a bar on a terminal, lines otherwise."""

from __future__ import annotations

import shutil
from typing import TextIO

from ..records.protocol import Record


class Progress:
    """Shows progress on a stream; mode is 'bar', 'lines' or 'quiet'."""

    def __init__(self, stream: TextIO, mode: str) -> None:
        self.stream = stream
        self.mode = mode
        self.records = 0
        self.benches: list[str] = []
        self._drawn = False
        self._last: tuple[str, object, object] = ("", None, None)

    @classmethod
    def for_stream(cls, stream: TextIO, quiet: bool) -> "Progress":
        if quiet:
            return cls(stream, "quiet")
        try:
            tty = stream.isatty()
        except (AttributeError, ValueError):
            tty = False
        return cls(stream, "bar" if tty else "lines")

    def record(self, rec: Record) -> None:
        self.records += 1
        if rec.get("t") != "progress":
            if self.mode == "bar" and self._drawn and self.records % 16 == 0:
                self._redraw_count()
            return
        bench = str(rec.get("bench"))
        done, total = rec.get("done"), rec.get("total")
        new = bench not in self.benches
        if new:
            self.benches.append(bench)
        if self.mode == "lines" and new:
            self.stream.write(f"progress: {bench} ({total} cases)\n")
            self.stream.flush()
        elif self.mode == "bar":
            self._bar(bench, done, total)

    def _bar(self, bench: str, done: object, total: object) -> None:
        self._last = (bench, done, total)
        frac = 0.0
        if isinstance(done, int) and isinstance(total, int) and total > 0:
            frac = min(max(done / total, 0.0), 1.0)
        cols = shutil.get_terminal_size((80, 24)).columns
        tail = f" {frac * 100:3.0f}% {bench} {done}/{total} ({self.records} records)"
        width = max(10, min(40, cols - len(tail) - 3))
        fill = int(round(frac * width))
        line = "[" + "#" * fill + "." * (width - fill) + "]" + tail
        self.stream.write("\r" + line[: cols - 1] + "\x1b[K")
        self.stream.flush()
        self._drawn = True

    def _redraw_count(self) -> None:
        bench, done, total = self._last
        self._bar(bench, done, total)

    def message(self, text: str) -> None:
        """A line of its own, not overwritten by the bar."""
        if self.mode == "quiet":
            return
        self.finish()
        self.stream.write(text + "\n")
        self.stream.flush()

    def finish(self) -> None:
        if self._drawn:
            self.stream.write("\n")
            self.stream.flush()
            self._drawn = False
