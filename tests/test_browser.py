"""The headless browser the HTML pages' tests use (tests/browser.py): a clean page reads clean, and
each fault planted in it is found, and only that fault."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from browser import NAMES, Browser, BrowserError, PageImage, find_browser, snap_dir

# A 1x1 PNG, and the same with its data cut short (the browser cannot decode it).
PNG_1X1 = ("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9aw"
           "AAAABJRU5ErkJggg==")
PNG_CUT = PNG_1X1[:24]

# What a report page holds: answer lines, an inline SVG figure, an image, a table and a <pre> wider
# than a phone, each in an overflow-x: auto wrapper (they scroll; the page does not).
GOOD = """<!doctype html>
<html><head><meta charset="utf-8"><title>a clean page</title>
<style>.scroll {{ overflow-x: auto }} table {{ width: 900px }}</style>{head}</head>
<body>
<h1>results</h1>
<p class="answer">switch: 42 cycles</p>
<p class="answer">spin <b>then</b> block: 0.92x</p>
<svg width="240" height="60" viewBox="0 0 240 60"><rect x="5" y="5" width="200" height="40"/></svg>
<img src="data:image/png;base64,{png}" alt="figure">
<div class="scroll"><table><tr><td>a table wider than the window</td></tr></table></div>
<div class="scroll"><pre>{long_line}</pre></div>
{body}
</body></html>
"""


def page(tmp_path: Path, head: str = "", body: str = "", png: str = PNG_1X1) -> Path:
    path = tmp_path / "page.html"
    path.write_text(GOOD.format(head=head, body=body, png=png, long_line="x" * 300))
    return path


def test_a_clean_page_reads_clean_on_a_phone_and_a_desktop(browser: Browser, tmp_path: Path) -> None:
    for width in (400, 1200):
        p = browser.open(page(tmp_path), width=width, selectors=(".answer", ".none"))
        assert p.problems() == []
        assert (p.console, p.exceptions, p.failed_requests, p.external_requests) == ([], [], [], [])
        assert [(i.natural_width, i.natural_height) for i in p.images] == [(1, 1)]
        assert p.svg_widths == [240]
        assert p.client_width == width and not p.overflows and p.wide == []
        assert p.texts == {".answer": ["switch: 42 cycles", "spin then block: 0.92x"], ".none": []}
        assert p.selected == {".answer": "switch: 42 cycles", ".none": None}
        assert len(p.boxes[".answer"]) == 2 and all(0 < w <= width and h > 0 for w, h in p.boxes[".answer"])
        assert p.title == "a clean page"


def test_text_that_cannot_be_selected_or_is_not_drawn_shows(browser: Browser, tmp_path: Path) -> None:
    """What the pages' tests read to say a table is drawn and its text selectable: here neither is."""
    style = "<style>.answer { user-select: none } p.answer + p.answer { display: none }</style>"
    p = browser.open(page(tmp_path, head=style), width=400, selectors=(".answer",))
    assert p.selected[".answer"] == "" and p.boxes[".answer"][1] == (0, 0)


# Each fault planted in the clean page: (head, body, png), a word every problem it causes names, and
# what Page says about it (fields and their values).
IMG_1X1 = PageImage(f"data:image/png;base64,{PNG_1X1}"[:60] + "...(118 chars)", 1, 1)   # a long src is cut
FAULTS = {
    "missing_image": ("", '<img src="missing.png">', PNG_1X1, "missing.png",
                      {"failed_requests": ["missing.png: net::ERR_FILE_NOT_FOUND"],
                       "images": [IMG_1X1, PageImage("missing.png", 0, 0)]}),
    "js_error": ("", "<script>undefined_fn()</script>", PNG_1X1, "undefined_fn",
                 {"exceptions": ["ReferenceError: undefined_fn is not defined (page.html:12)"]}),
    "console_error": ("", '<script>console.error("no data for", "coherence")</script>', PNG_1X1, "coherence",
                      {"console": ["error: no data for coherence (page.html:12)"]}),
    "http_stylesheet": ('<link rel="stylesheet" href="http://example.com/style.css">', "", PNG_1X1, "example.com",
                        {"external_requests": ["http://example.com/style.css"],
                         "failed_requests": ["http://example.com/style.css: net::ERR_PROXY_CONNECTION_FAILED"]}),
    "https_image": ("", '<img src="https://example.com/logo.png">', PNG_1X1, "example.com",
                    {"external_requests": ["https://example.com/logo.png"]}),
    "wide_body": ("", '<div id="too-wide" style="width: 900px">wide</div>', PNG_1X1, "too-wide",
                  {"overflows": True, "wide": ["div#too-wide (900 px wide, right edge at 908 px)"]}),
    # A long path with nowhere to break: its text passes the edge while its element's box does not.
    "unbroken_text": ("", "<h2>A: /home/researcher/" + "runs_of_the_sixteen_cpu_machine/" * 3 + "x.log</h2>",
                      PNG_1X1, "researcher", {"overflows": True}),
    "corrupt_data_image": ("", "", PNG_CUT, PNG_CUT,
                           {"images": [PageImage(f"data:image/png;base64,{PNG_CUT}", 0, 0)], "failed_requests": []}),
}


@pytest.mark.parametrize("fault", FAULTS)
def test_a_planted_fault_is_found_and_only_it(browser: Browser, tmp_path: Path, fault: str) -> None:
    head, body, png, word, says = FAULTS[fault]
    p = browser.open(page(tmp_path, head, body, png), width=400)
    problems = p.problems()
    assert problems and all(word in line for line in problems), problems
    assert {name: getattr(p, name) for name in says} == says


def test_pages_loaded_in_turn_in_one_tab_keep_their_own_problems(browser: Browser, tmp_path: Path) -> None:
    """A page with several faults, a clean page, the faulty one again (one tab loads them all): the clean
    page reads clean, and the faulty one gives the same problems both times, each fault's among them."""
    faulty = ("missing_image", "js_error", "console_error", "https_image")
    (tmp_path / "bad").mkdir()
    bad = page(tmp_path / "bad", "".join(FAULTS[k][0] for k in faulty), "".join(FAULTS[k][1] for k in faulty))
    first = sorted(browser.open(bad, width=400).problems())  # the two requests fail in either order
    assert browser.open(page(tmp_path), width=400).problems() == []
    assert sorted(browser.open(bad, width=400).problems()) == first
    assert all(any(FAULTS[k][3] in line for line in first) for k in faulty), first


def test_a_page_that_never_loads_fails_in_time_and_the_next_page_loads(browser: Browser, tmp_path: Path) -> None:
    # Its script is a FIFO nobody writes: the page waits for it forever, using no CPU.
    os.mkfifo(tmp_path / "never.js")
    hung = tmp_path / "hung.html"
    hung.write_text('<!doctype html><body><script src="never.js"></script></body>')
    with pytest.raises(BrowserError, match=r"no answer in time(.|\n)*chromium's stderr"):
        browser.open(hung, timeout_s=1.0)
    assert browser.pid is None   # killed; the next page starts another
    assert browser.open(page(tmp_path)).problems() == []


def test_a_missing_chromium_names_the_set_up(tmp_path: Path) -> None:
    with pytest.raises(BrowserError, match=r"not found.*tools/setup\.sh test-packages"):
        Browser(binary=tmp_path / "chromium")


def fake_browser(where: Path, name: str) -> Path:
    where.mkdir(parents=True, exist_ok=True)
    path = where / name
    path.write_text("#!/bin/sh\nexit 0\n")
    path.chmod(0o755)
    return path


def test_the_browser_is_found_by_any_of_its_names_on_path_or_in_snap_bin(tmp_path: Path) -> None:
    """A Chrome on PATH is found; a chromium snap (in /snap/bin, not on PATH) comes before it, and is the one
    whose pages must lie where a snap can read them."""
    chrome = fake_browser(tmp_path / "bin", "google-chrome")
    assert find_browser(path=str(tmp_path / "bin"), snap_bin=tmp_path / "snap" / "bin") == chrome
    assert snap_dir(chrome, snap_bin=tmp_path / "snap" / "bin") is None
    snap = fake_browser(tmp_path / "snap" / "bin", "chromium")
    assert find_browser(path=str(tmp_path / "bin"), snap_bin=tmp_path / "snap" / "bin") == snap
    assert snap_dir(snap, snap_bin=tmp_path / "snap" / "bin") == Path.home() / "snap" / "chromium" / "common"


def test_no_browser_is_named_with_where_it_was_looked_for_and_the_set_up(tmp_path: Path) -> None:
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "chromium").write_text("not executable")
    with pytest.raises(BrowserError) as failed:
        find_browser(path=str(tmp_path / "bin"), snap_bin=tmp_path / "snap")
    said = str(failed.value)
    assert all(name in said for name in NAMES) and str(tmp_path / "bin") in said and str(tmp_path / "snap") in said
    assert "tools/setup.sh test-packages" in said
