"""Headless Chromium for the tests of HTML pages: load a file:// page as a reader's browser would, and
say what went wrong in it (console errors, uncaught exceptions, resources that failed to load,
requests that left the machine, broken images, a page wider than the window).

Chromium is driven over its DevTools protocol on the pipe it opens with --remote-debugging-pipe
(JSON messages ending in a NUL byte, requests on its fd 3, answers and events on its fd 4): the
standard library is the whole client, with no WebDriver in between and no port to pick. One
browser serves many pages (starting it is the slow part: ~0.5 s of CPU), each loaded in turn in its
one tab (a tab of its own cost a page a renderer process). The browser is the first of NAMES on PATH
or in /snap/bin (find_browser): Debian's chromium, Ubuntu's chromium snap, Google Chrome.
`tools/setup.sh test-packages` installs one (make test runs it); a test that needs one and finds
none fails, naming where it looked and that set-up.

    with Browser() as browser:                       # or the `browser` fixture (tests/conftest.py)
        page = browser.open(tmp_path / "report.html", width=400, selectors=(".answer",))
        assert page.problems() == []
        assert page.texts[".answer"] == summary_lines
"""

from __future__ import annotations

import fcntl
import json
import os
import select
import shutil
import signal
import tempfile
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# A headless Chromium or Chrome: the first of these names on PATH, or in SNAP_BIN (Ubuntu's chromium is a snap,
# and /snap/bin is not on every PATH: not on make's or sudo's, often not on root's). Each name is looked for
# on PATH and in SNAP_BIN before the next: Ubuntu's chromium-browser is a script that starts the snap.
NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")
SNAP_BIN = Path("/snap/bin")
# A launcher found on PATH, and the browser it starts: Debian's /usr/bin/chromium is a shell script that
# sources /etc/chromium.d (remote extensions, a findmnt of /dev/shm) before it execs its binary.
LAUNCHERS = {Path("/usr/bin/chromium"): Path("/usr/lib/chromium/chromium")}
SETUP_HINT = "tools/setup.sh test-packages installs one (make test runs it first)"

# Hard limits: a page that has not loaded and been read by then is a failure, never a wait.
START_TIMEOUT_S = 30.0
PAGE_TIMEOUT_S = 30.0
CLOSE_TIMEOUT_S = 5.0
# The window's height; its width is each page's (Browser.open).
WINDOW_HEIGHT = 900

# Schemes a page may load from: its own files and what it carries inline. Anything else (http,
# https, ws, ftp) is an external request: a results directory must read offline and alone.
LOCAL_SCHEMES = ("file:", "data:", "blob:", "about:")

FLAGS = (
    "--headless=new",
    "--no-sandbox",                 # as root Chromium refuses to start with its sandbox
    "--remote-debugging-pipe",
    "--disable-gpu",
    "--disable-dev-shm-usage",      # containers often have a small /dev/shm
    "--hide-scrollbars",            # clientWidth is the window's width, with or without a scrollbar
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--disable-breakpad",
    "--mute-audio",
    "--password-store=basic",
    "--use-mock-keychain",
    "--disable-features=Translate,MediaRouter,OptimizationHints,AutofillServerCommunication",
    # Offline: every http(s) request goes to a proxy nobody listens on (loopback included), so it
    # fails at once and shows in Page.failed_requests as well as Page.external_requests.
    "--proxy-server=127.0.0.1:9",
    "--proxy-bypass-list=<-loopback>",
    "--host-resolver-rules=MAP * ~NOTFOUND",
)

# Runs in the page once it has loaded: everything Page holds that the page itself knows.
PROBE_JS = r"""
async (selectors) => {
  await document.fonts.ready;
  const root = document.documentElement;
  const vw = root.clientWidth;
  const short = (s) => s.length > 80 ? `${s.slice(0, 60)}...(${s.length} chars)` : s;
  const images = [...document.images].map((i) => ({
    src: short(i.getAttribute('src') || ''), naturalWidth: i.naturalWidth, naturalHeight: i.naturalHeight}));
  const svgs = [...document.querySelectorAll('svg')].filter((s) => !s.parentElement.closest('svg'))
    .map((s) => s.getBoundingClientRect().width);
  // The outermost elements whose right edge passes the window's, not counting what lies inside an
  // element that scrolls or clips by itself (overflow-x other than visible: a wide table in its
  // overflow-x: auto wrapper): those make the page as a whole scroll sideways.
  const named = (e) => e.tagName.toLowerCase() + (e.id ? `#${e.id}` : '') +
    (e.classList.length ? `.${[...e.classList].join('.')}` : '');
  const extent = (r) => ` (${Math.round(r.width)} px wide, right edge at ${Math.round(r.right)} px)`;
  const wide = [];
  // Text overflows its element's box without widening the box (a long path with nowhere to break):
  // each text node's own extent is measured too, and named by its element and its first words.
  const range = document.createRange();
  const walk = (el, parentWide) => {
    for (const c of el.childNodes) {
      if (c.nodeType === Node.TEXT_NODE) {
        if (parentWide || !c.textContent.trim()) continue;
        range.selectNodeContents(c);
        const r = range.getBoundingClientRect();
        if (r.width > 0 && r.right > vw + 0.5)
          wide.push(`text "${short(c.textContent.trim())}" in ${named(el)}${extent(r)}`);
        continue;
      }
      if (c.nodeType !== Node.ELEMENT_NODE) continue;
      const r = c.getBoundingClientRect();
      const isWide = r.width > 0 && r.right > vw + 0.5;
      if (isWide && !parentWide) wide.push(named(c) + extent(r));
      if (getComputedStyle(c).overflowX === 'visible') walk(c, isWide || parentWide);
    }
  };
  walk(root, false);
  const texts = {}, boxes = {}, selected = {};
  const selection = window.getSelection();
  for (const sel of selectors) {
    const found = [...document.querySelectorAll(sel)];
    texts[sel] = found.map((e) => e.innerText.trim());
    boxes[sel] = found.map((e) => { const r = e.getBoundingClientRect(); return [r.width, r.height]; });
    // What a reader selecting the first match gets (nothing where user-select forbids it).
    selection.removeAllRanges();
    if (found.length) selection.selectAllChildren(found[0]);
    selected[sel] = found.length ? selection.toString().trim() : null;
    selection.removeAllRanges();
  }
  return {scrollWidth: root.scrollWidth, clientWidth: vw, images, svgs, wide, texts, boxes, selected,
          title: document.title};
}
"""


class BrowserError(AssertionError):
    """Chromium failed to start, answer, or load a page in time (an AssertionError: a test that meets
    one fails, with Chromium's stderr in the message)."""


def find_browser(path: str | None = None, snap_bin: Path = SNAP_BIN) -> Path:
    """The first of NAMES on `path` (default: $PATH) or in snap_bin, the browser itself where it is a known
    launcher (LAUNCHERS); BrowserError naming what was looked for, and where, when there is none."""
    dirs = os.environ.get("PATH", "") if path is None else path
    search = os.pathsep.join(d for d in (dirs, str(snap_bin)) if d)
    for name in NAMES:
        found = shutil.which(name, path=search)
        if found is not None:
            binary = LAUNCHERS.get(Path(found), Path(found))
            return binary if binary.exists() else Path(found)
    raise BrowserError(f"no headless Chromium or Chrome: none of {', '.join(NAMES)} on PATH ({dirs or 'empty'}) "
                       f"or in {snap_bin}; {SETUP_HINT}")


def snap_dir(binary: Path, snap_bin: Path = SNAP_BIN) -> Path | None:
    """Where a browser confined as a snap can read pages, None for any other: a snap sees neither /tmp nor
    hidden files, but always its own directory, ~/snap/NAME/common (the tests' files go there:
    tests/conftest.py)."""
    if binary.parent != snap_bin:
        return None
    return Path.home() / "snap" / binary.name / "common"


@dataclass(frozen=True)
class PageImage:
    src: str                # the src attribute as written (a long data: URI shortened)
    natural_width: int      # 0: the image did not load or did not decode
    natural_height: int


@dataclass(frozen=True)
class Page:
    """What a loaded page showed, at a window `width` CSS px wide."""
    path: Path
    width: int
    title: str
    console: list[str]              # console messages of level error or warning: "error: text (where)"
    exceptions: list[str]           # uncaught JS exceptions: "ReferenceError: x is not defined (where)"
    failed_requests: list[str]      # "missing.png: net::ERR_FILE_NOT_FOUND" (beside the page: relative)
    external_requests: list[str]    # every requested URL not file:, data:, blob: or about:
    images: list[PageImage]         # every <img>, in document order
    svg_widths: list[float]         # every outermost inline <svg>'s rendered width, CSS px
    scroll_width: int               # document.documentElement.scrollWidth
    client_width: int               # document.documentElement.clientWidth (= width)
    wide: list[str]                 # the outermost elements past the window's right edge outside any scroller
    texts: dict[str, list[str]] = field(default_factory=dict)   # selector -> each match's innerText
    boxes: dict[str, list[tuple[float, float]]] = field(default_factory=dict)  # selector -> each match's drawn size
    selected: dict[str, str | None] = field(default_factory=dict)  # selector -> the text selecting its first match gives

    @property
    def overflows(self) -> bool:
        """The page as a whole scrolls sideways (what scrolls inside its own box does not count)."""
        return self.scroll_width > self.client_width

    def problems(self) -> list[str]:
        """Everything wrong with the page, one line each: [] for a page that loads cleanly, offline,
        with every image decoded, every inline SVG drawn, and no sideways scroll at this width."""
        out = [f"console {m}" for m in self.console]
        out += [f"uncaught {e}" for e in self.exceptions]
        out += [f"failed to load {r}" for r in self.failed_requests]
        out += [f"external request {u}" for u in self.external_requests]
        out += [f"image {i.src!r} has no natural width (not loaded or not decoded)"
                for i in self.images if i.natural_width == 0]
        out += [f"inline svg #{n} drawn 0 px wide" for n, w in enumerate(self.svg_widths) if w <= 0]
        if self.overflows:
            out.append(f"scrolls sideways at {self.width} px: {self.scroll_width} px wide"
                       f" ({', '.join(self.wide) or 'no single element found'})")
        return out


def _where(url: str | None, line: int | None) -> str:
    if not url:
        return ""
    name = url.rsplit("/", 1)[-1] if url.startswith("file:") else url
    return f" ({name}:{line + 1})" if line is not None else f" ({name})"


class _Chromium:
    """One Chromium process and its DevTools pipe: send a command, read until its answer, keep the
    events that came meanwhile."""

    def __init__(self, binary: Path) -> None:
        if not binary.exists():
            raise BrowserError(f"{binary} not found: {SETUP_HINT}")
        self.dir = Path(tempfile.mkdtemp(prefix="cleanroom-chromium-"))
        self.stderr_path = self.dir / "stderr"
        to_chrome_r, to_chrome_w = os.pipe()
        from_chrome_r, from_chrome_w = os.pipe()
        # Above 4, so that the spawn's dup2 onto 3 and 4 never meets one of them already there.
        high = [fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10) for fd in (to_chrome_r, from_chrome_w)]
        for fd in (to_chrome_r, from_chrome_w):
            os.close(fd)
        env = dict(os.environ, HOME=str(self.dir))
        argv = [str(binary), *FLAGS, f"--user-data-dir={self.dir / 'profile'}", "about:blank"]
        try:
            self.pid = os.posix_spawn(str(binary), argv, env, setsid=True, file_actions=[
                (os.POSIX_SPAWN_OPEN, 0, "/dev/null", os.O_RDONLY, 0),
                (os.POSIX_SPAWN_OPEN, 1, str(self.stderr_path), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644),
                (os.POSIX_SPAWN_OPEN, 2, str(self.stderr_path), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644),
                (os.POSIX_SPAWN_DUP2, high[0], 3),
                (os.POSIX_SPAWN_DUP2, high[1], 4),
            ])
        except OSError as exc:
            for fd in (to_chrome_w, from_chrome_r):
                os.close(fd)
            shutil.rmtree(self.dir, ignore_errors=True)
            raise BrowserError(f"{binary} cannot be started ({exc}): {SETUP_HINT}") from None
        finally:
            for fd in high:
                os.close(fd)
        self.out = to_chrome_w
        self.inp = from_chrome_r
        self.buf = b""
        self.next_id = 0
        self.events: list[dict[str, Any]] = []
        self.alive = True
        self.tab: str | None = None  # the session of the tab pages load in (Browser._tab)

    def stderr_tail(self, chars: int = 3000) -> str:
        """The end of Chromium's stderr, without its complaints that it has no D-Bus (none in a container
        or CI; it tries several times a start)."""
        try:
            lines = self.stderr_path.read_text(errors="replace").splitlines()
        except OSError:
            return "(no stderr)"
        text = "\n".join(line for line in lines if "dbus" not in line.lower())
        return text[-chars:].strip() or "(nothing but D-Bus complaints)"

    def fail(self, what: str) -> BrowserError:
        return BrowserError(f"chromium: {what}\n--- chromium's stderr (last lines) ---\n{self.stderr_tail()}")

    def send(self, method: str, params: dict[str, Any] | None = None, session: str | None = None) -> int:
        self.next_id += 1
        msg: dict[str, Any] = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        data = json.dumps(msg).encode() + b"\0"
        try:
            while data:
                data = data[os.write(self.out, data):]
        except BrokenPipeError:
            raise self.fail(f"exited before {method}") from None
        return self.next_id

    def _read_message(self, deadline: float, waiting_for: str) -> dict[str, Any]:
        while b"\0" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise self.fail(f"no answer in time while waiting for {waiting_for}")
            ready, _, _ = select.select([self.inp], [], [], left)
            if ready:
                chunk = os.read(self.inp, 1 << 16)
                if not chunk:
                    raise self.fail(f"exited while waiting for {waiting_for}")
                self.buf += chunk
        raw, self.buf = self.buf.split(b"\0", 1)
        return json.loads(raw)

    def wait_answer(self, ident: int, deadline: float, what: str) -> dict[str, Any]:
        while True:
            msg = self._read_message(deadline, what)
            if msg.get("id") == ident:
                if "error" in msg:
                    raise self.fail(f"{what} failed: {msg['error'].get('message')}")
                return msg.get("result", {})
            if "method" in msg:
                self.events.append(msg)

    def call(self, method: str, params: dict[str, Any] | None, session: str | None, deadline: float) -> dict[str, Any]:
        return self.wait_answer(self.send(method, params, session), deadline, method)

    def wait_event(self, method: str, session: str, deadline: float) -> None:
        if any(e["method"] == method and e.get("sessionId") == session for e in self.events):
            return
        while True:
            msg = self._read_message(deadline, method)
            if "method" in msg:
                self.events.append(msg)
                if msg["method"] == method and msg.get("sessionId") == session:
                    return

    def take_events(self, session: str) -> list[dict[str, Any]]:
        """The tab's events; the rest (the browser's own: the tab attached) are dropped, since one tab is
        open."""
        mine = [e for e in self.events if e.get("sessionId") == session]
        self.events = []
        return mine

    def _reaped(self, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while True:
            try:
                pid, _ = os.waitpid(self.pid, os.WNOHANG)
            except ChildProcessError:
                return True
            if pid:
                return True
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.01)

    def close(self, kill: bool = False) -> None:
        """Ask Chromium to quit, and kill its process group if it has not within CLOSE_TIMEOUT_S; or, with
        kill, kill it at once (a browser that failed a page: a hung renderer would hold up its quitting)."""
        if not self.alive:
            return
        self.alive = False
        if not kill:
            try:
                self.send("Browser.close")
            except BrowserError:
                kill = True
        for fd in (self.out, self.inp):
            os.close(fd)
        if kill or not self._reaped(CLOSE_TIMEOUT_S):
            os.killpg(self.pid, signal.SIGKILL)
            self._reaped(CLOSE_TIMEOUT_S)
        # Its helpers (renderer, zygote, crashpad) are in its session: none outlives it.
        try:
            os.killpg(self.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        shutil.rmtree(self.dir, ignore_errors=True)


class Browser:
    """Headless Chromium, started once and used for many pages (open); close() (or the with block)
    ends it. A page that fails (a timeout, a crash) closes this Chromium; the next open starts another."""

    def __init__(self, binary: Path | None = None) -> None:
        self.binary = binary if binary is not None else find_browser()
        self.chrome: _Chromium | None = None
        self._start()

    def _start(self) -> _Chromium:
        chrome = _Chromium(self.binary)
        try:
            chrome.call("Browser.getVersion", None, None, time.monotonic() + START_TIMEOUT_S)
        except BrowserError:
            chrome.close(kill=True)
            raise
        self.chrome = chrome
        return chrome

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self, kill: bool = False) -> None:
        if self.chrome:
            self.chrome.close(kill)
            self.chrome = None

    @property
    def pid(self) -> int | None:
        """The Chromium process's id (its helpers are in its process group), None when none runs."""
        return self.chrome.pid if self.chrome else None

    def open(self, path: Path, width: int = 1200, selectors: Sequence[str] = (),
             timeout_s: float = PAGE_TIMEOUT_S) -> Page:
        """Load `path` (an HTML file) in the tab, `width` CSS px wide, wait for its load event, read it
        (for each CSS selector in `selectors`: every match's innerText and drawn size, and the text that
        selecting the first match gives); all of it within timeout_s, else BrowserError."""
        path = Path(path).resolve()
        if not path.is_file():
            raise BrowserError(f"{path}: no such page")
        chrome = self.chrome or self._start()
        try:
            return self._open(chrome, path, width, list(selectors), time.monotonic() + timeout_s)
        except BrowserError:
            # A browser that missed a limit or died is not trusted with the next page.
            self.close(kill=True)
            raise

    def _tab(self, chrome: _Chromium, deadline: float) -> str:
        """The session of the one tab every page of this Chromium loads in, made for the first: a tab of
        its own cost each page a renderer process, half of its CPU (0.42 against 0.21 CPU-s a report page
        on the 2-vCPU guest, 2026-11-29)."""
        if chrome.tab is None:
            target = chrome.call("Target.createTarget", {"url": "about:blank"}, None, deadline)["targetId"]
            session = chrome.call("Target.attachToTarget", {"targetId": target, "flatten": True}, None,
                                  deadline)["sessionId"]
            # Sent together, answered in order: one round trip for the tab's set-up.
            setup = [chrome.send(m, None, session) for m in ("Runtime.enable", "Log.enable", "Network.enable",
                                                              "Page.enable")]
            for ident in setup:
                chrome.wait_answer(ident, deadline, "the tab's set-up")
            chrome.tab = session
        return chrome.tab

    def _open(self, chrome: _Chromium, path: Path, width: int, selectors: list[str], deadline: float) -> Page:
        session = self._tab(chrome, deadline)
        # The events from here on are this page's: the last page was read when its load event had fired and
        # its fonts were ready (a page still at work then, on a timer, would leave its events to the next;
        # leaving it for about:blank first cost a renderer process again). On a failure the tab is left as
        # it is: open() closes this Chromium.
        chrome.take_events(session)
        try:
            chrome.call("Emulation.setDeviceMetricsOverride",
                        {"width": width, "height": WINDOW_HEIGHT, "deviceScaleFactor": 1, "mobile": False},
                        session, deadline)
            self._load(chrome, session, path.as_uri(), deadline)
            probe = chrome.call("Runtime.evaluate", {
                "expression": f"({PROBE_JS})({json.dumps(selectors)})",
                "awaitPromise": True, "returnByValue": True}, session, deadline)
            if "exceptionDetails" in probe:
                details = probe["exceptionDetails"]
                raise BrowserError(f"{path}: reading the page failed: "
                                   f"{details.get('exception', {}).get('description') or details.get('text')}")
            seen = probe["result"]["value"]
        finally:
            events = chrome.take_events(session)
        return _page(path, width, seen, events)

    @staticmethod
    def _load(chrome: _Chromium, session: str, url: str, deadline: float) -> None:
        """Navigates the tab to url and waits for its load event."""
        nav = chrome.call("Page.navigate", {"url": url}, session, deadline)
        if nav.get("errorText"):
            raise chrome.fail(f"{url}: navigation failed: {nav['errorText']}")
        chrome.wait_event("Page.loadEventFired", session, deadline)


def _page(path: Path, width: int, seen: dict[str, Any], events: Iterable[dict[str, Any]]) -> Page:
    """A Page from the probe's answer and the tab's events."""
    console: list[str] = []
    exceptions: list[str] = []
    failed: list[str] = []
    external: list[str] = []
    urls: dict[str, str] = {}
    for ev in events:
        method, p = ev["method"], ev.get("params", {})
        if method == "Runtime.consoleAPICalled" and p.get("type") in ("error", "warning", "assert"):
            text = " ".join(str(a.get("value", a.get("description", ""))) for a in p.get("args", []))
            frame = (p.get("stackTrace") or {}).get("callFrames") or [{}]
            console.append(f"{p['type']}: {text}{_where(frame[0].get('url'), frame[0].get('lineNumber'))}")
        elif method == "Log.entryAdded" and p["entry"].get("level") in ("error", "warning"):
            e = p["entry"]
            console.append(f"{e['level']}: {e.get('text', '')}{_where(e.get('url'), e.get('lineNumber'))}")
        elif method == "Runtime.exceptionThrown":
            d = p["exceptionDetails"]
            text = (d.get("exception") or {}).get("description") or d.get("text", "")
            exceptions.append(f"{text.splitlines()[0] if text else '?'}{_where(d.get('url'), d.get('lineNumber'))}")
        elif method == "Network.requestWillBeSent":
            url = p["request"]["url"]
            urls[p["requestId"]] = url
            if not url.startswith(LOCAL_SCHEMES) and url not in external:
                external.append(url)
        elif method == "Network.loadingFailed":
            url = urls.get(p["requestId"], "?")
            failed.append(f"{_short(url, path.parent)}: {p.get('blockedReason') or p.get('errorText', '?')}")
    return Page(
        path=path, width=width, title=seen["title"], console=console, exceptions=exceptions,
        failed_requests=failed, external_requests=external,
        images=[PageImage(i["src"], i["naturalWidth"], i["naturalHeight"]) for i in seen["images"]],
        svg_widths=seen["svgs"], scroll_width=seen["scrollWidth"], client_width=seen["clientWidth"],
        wide=seen["wide"], texts=seen["texts"], boxes={k: [tuple(b) for b in v] for k, v in seen["boxes"].items()},
        selected=seen["selected"])


def _short(url: str, base: Path) -> str:
    """url as a message shows it: a file beside the page by its relative path, a long URL cut."""
    here = base.as_uri() + "/"
    if url.startswith(here):
        return url[len(here):]
    return url if len(url) <= 100 else f"{url[:80]}...({len(url)} chars)"



if __name__ == "__main__":  # tools/setup.sh asks whether there is a browser: its path, or why not
    try:
        print(find_browser())
    except BrowserError as exc:
        print(exc)
        raise SystemExit(1)
