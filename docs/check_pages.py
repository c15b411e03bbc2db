"""Open every page of a built HTML site in headless Chromium, offline, and check it.

Usage::

    python docs/check_pages.py docs/_build/html --screenshots docs/_build/screenshots

Each ``*.html`` file under the site folder is opened from disk (``file://``, as a reader
who opens ``index.html`` would) in Debian's Chromium with the network off, after MathJax
has finished typesetting and the fonts have loaded.  A page fails when

* its visible text (the page title included; code blocks excluded) still shows TeX: a
  control word such as ``\\frac`` or ``\\begin``, a math delimiter ``\\(``, ``$``, or a
  sub- or superscript in braces such as ``e^{``;
* MathJax reports an error (an ``merror``, an undefined macro) or is missing on a page
  with math;
* it links to a file of the site that does not exist, or to an anchor that the target
  page does not have;
* an image, style sheet or script does not load, the page asks for anything from the
  network, or a script throws.

The landing page and the T1 claim page are kept as full-page screenshots
(``--screenshots``).  Exit status: 0 every page passed (or no Chromium was found, which is
said, unless ``--require-browser``), 1 a page failed, 2 bad usage.

The browser is driven over the Chrome DevTools protocol through a pipe
(``--remote-debugging-pipe``: JSON messages separated by NUL bytes on file descriptors 3
and 4), so no port is opened and nothing but the standard library is needed.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import fcntl
import json
import os
import re
import select
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

BROWSERS = ("chromium", "chromium-browser", "google-chrome")
"""Executables looked for on PATH (``$CHROMIUM`` names another)."""

# Run as ``python -c _WIRE_PIPES READ WRITE BROWSER ARGS...``: the pipes onto fds 3 and 4,
# then the browser in this process.
_WIRE_PIPES = (
    "import os, sys\n"
    "os.dup2(int(sys.argv[1]), 3)\n"
    "os.dup2(int(sys.argv[2]), 4)\n"
    "os.execvp(sys.argv[3], sys.argv[3:])\n"
)

BROWSER_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--disable-extensions",
    "--hide-scrollbars",
    "--mute-audio",
    # No host name resolves: a page that reaches for a CDN gets nothing.
    "--host-resolver-rules=MAP * ~NOTFOUND",
    "--remote-debugging-pipe",
)

SCREENSHOTS = {"index.html": "landing.png", "theory/claims/T1.html": "T1.png"}
"""Pages kept as screenshots, and the file each one is saved as."""

WIDTH, HEIGHT = 1280, 900
"""The window: wide enough for the sidebar to show, as on a laptop."""

PAGE_TIMEOUT = 60.0
"""Seconds a page may take to load and typeset."""

SCREENSHOT_MAX_HEIGHT = 8000
"""Longer pages are cut here in screenshots."""

RAW_TEX = re.compile(
    r"\\[A-Za-z]+"  # a control word: \frac, \begin, \left
    r"|\\[()\[\]]"  # MathJax's delimiters \( \) \[ \], left untypeset
    r"|\$"  # dollar math
    r"|[_^]\{"  # a TeX sub- or superscript in braces: e^{-δ/θ}
)
"""What raw TeX looks like in a page's visible text."""

LOCAL_SCHEMES = ("file:", "data:", "about:", "blob:")
"""URL schemes a page may load from without a network."""

INSPECT = r"""
(async () => {
  const report = {title: document.title, mathjax: "none", mathErrors: [], texts: [],
                  images: [], links: [], anchors: []};
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) {
    await MathJax.startup.promise;
    report.mathjax = "done";
    for (const item of MathJax.startup.document.math) {
      const mml = MathJax.startup.toMML(item.root);
      if (mml.includes("<merror")) {
        const match = mml.match(/data-mjx-error="([^"]*)"/);
        report.mathErrors.push((match ? match[1] : "merror") + " in " + item.math);
      } else if (mml.includes('mathcolor="red"')) {
        report.mathErrors.push("undefined control sequence in " + item.math);
      }
    }
  } else if (document.querySelector('script[src*="mathjax" i]')) {
    report.mathjax = "not loaded";
  }
  report.mathElements = document.querySelectorAll(".math").length;
  await document.fonts.ready;
  report.images = await Promise.all([...document.images].map(img => {
    img.loading = "eager";
    return img.decode().then(() => [img.src, true], () => [img.src, false]);
  }));
  // Code is shown as code (a signature's defaults too); formulas as MathJax renders them.
  const hidden = "script, style, noscript, template, pre, code, kbd, samp, textarea, "
               + ".sig, mjx-container";
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const element = node.parentElement;
    if (!element || element.closest(hidden)) continue;
    if (!element.checkVisibility({checkOpacity: true, checkVisibilityCSS: true})) continue;
    const text = node.textContent.trim();
    if (text) report.texts.push(text);
  }
  report.links = [...document.querySelectorAll("a[href]")].map(a => a.href);
  report.anchors = [...document.querySelectorAll("[id], a[name]")]
    .map(e => e.id || e.getAttribute("name"));
  report.height = Math.ceil(document.documentElement.scrollHeight);
  return JSON.stringify(report);
})()
"""
"""Run in each page once it has loaded: waits for MathJax and the images, then reports."""


class BrowserError(RuntimeError):
    """The browser did not start, answered with an error or took too long."""


@dataclass
class PageReport:
    """What a reader would find wrong with one page."""

    page: str
    problems: list[str] = field(default_factory=list)
    links: list[str] = field(default_factory=list)
    anchors: set[str] = field(default_factory=set)
    math_elements: int = 0


def find_browser() -> str | None:
    """The Chromium executable: ``$CHROMIUM`` or the first of :data:`BROWSERS` on PATH."""
    named = os.environ.get("CHROMIUM")
    if named:
        return shutil.which(named)
    for name in BROWSERS:
        found = shutil.which(name)
        if found:
            return found
    return None


def raw_tex(texts: Iterable[str]) -> list[str]:
    """The pieces of visible text that show raw TeX, each with a little context.

    >>> raw_tex(["1/n", r"p = \\frac{1}{n}", "e^{−δ/θ}/n", "costs $5", "plain"])
    ['p = \\\\frac{1}{n}', 'e^{−δ/θ}/n', 'costs $5']
    """
    found = []
    for text in texts:
        match = RAW_TEX.search(text)
        if match:
            start = max(0, match.start() - 30)
            found.append(" ".join(text[start : match.end() + 30].split()))
    return found


class DevTools:
    """A Chromium process driven over the DevTools protocol through a pipe."""

    def __init__(self, executable: str, profile: Path, log: Path) -> None:
        # The browser reads commands on fd 3 and writes answers on fd 4.  Our ends are
        # moved above 10 first, so that putting the child's ends on 3 and 4 cannot
        # overwrite one another.  A small Python child moves them there and execs the
        # browser, not a preexec_fn: a Python function run between fork and exec is
        # unsafe in a threaded process (jax, once imported, warns of a deadlock on every
        # fork).
        commands_read, commands_write = (_high_fd(fd) for fd in os.pipe())
        answers_read, answers_write = (_high_fd(fd) for fd in os.pipe())
        with log.open("wb") as log_file:
            self.process = subprocess.Popen(
                [
                    *(sys.executable, "-c", _WIRE_PIPES, str(commands_read), str(answers_write)),
                    *(executable, *BROWSER_FLAGS, f"--user-data-dir={profile}", "about:blank"),
                ],
                stdin=subprocess.DEVNULL,
                stdout=log_file,
                stderr=log_file,
                pass_fds=(commands_read, answers_write),
            )
        os.close(commands_read)
        os.close(answers_write)
        self._write = commands_write
        self._read = answers_read
        self._buffer = b""
        self._next_id = 0
        self.events: list[dict[str, Any]] = []

    def send(
        self, method: str, params: dict[str, Any] | None = None, session: str | None = None
    ) -> dict[str, Any]:
        """Send one command and return its result; events that arrive meanwhile are kept."""
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        data = json.dumps(message).encode() + b"\0"
        while data:
            data = data[os.write(self._write, data) :]
        deadline = time.monotonic() + PAGE_TIMEOUT
        while True:
            answer = self._receive(deadline)
            if answer.get("id") == self._next_id:
                if "error" in answer:
                    raise BrowserError(f"{method}: {answer['error'].get('message')}")
                result: dict[str, Any] = answer.get("result", {})
                return result
            if "method" in answer:
                self.events.append(answer)

    def wait_for(self, method: str, session: str, timeout: float = PAGE_TIMEOUT) -> None:
        """Wait until an event ``method`` of ``session`` has arrived."""
        deadline = time.monotonic() + timeout
        while not any(e["method"] == method and e.get("sessionId") == session for e in self.events):
            answer = self._receive(deadline)
            if "method" in answer:
                self.events.append(answer)

    def _receive(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise BrowserError(f"no answer from the browser within {PAGE_TIMEOUT:g} s")
            ready, _, _ = select.select([self._read], [], [], left)
            if ready:
                chunk = os.read(self._read, 1 << 20)
                if not chunk:
                    raise BrowserError("the browser closed its pipe (did it crash?)")
                self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        decoded: dict[str, Any] = json.loads(message)
        return decoded

    def close(self) -> None:
        """Ask the browser to quit; kill it if it does not."""
        with contextlib.suppress(BrowserError, OSError):
            self.send("Browser.close")
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        os.close(self._write)
        os.close(self._read)


def _high_fd(fd: int) -> int:
    moved = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10)
    os.close(fd)
    return moved


class Tab:
    """One page target of the browser, offline, in a laptop-sized window."""

    def __init__(self, browser: DevTools) -> None:
        self.browser = browser
        target = browser.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = browser.send("Target.attachToTarget", {"targetId": target, "flatten": True})[
            "sessionId"
        ]
        for domain in ("Page", "Runtime", "Network"):
            self.send(f"{domain}.enable")
        self.send(
            "Network.emulateNetworkConditions",
            {"offline": True, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1},
        )
        self.send(
            "Emulation.setDeviceMetricsOverride",
            {"width": WIDTH, "height": HEIGHT, "deviceScaleFactor": 1, "mobile": False},
        )

    def send(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        return self.browser.send(method, params, self.session)

    def open(self, url: str) -> tuple[dict[str, Any], list[str]]:
        """Load ``url``, run :data:`INSPECT` in it; return its report and load problems."""
        browser = self.browser
        browser.events = [e for e in browser.events if e.get("sessionId") != self.session]
        answer = self.send("Page.navigate", {"url": url})
        if answer.get("errorText"):
            return {}, [f"does not open: {answer['errorText']}"]
        browser.wait_for("Page.loadEventFired", self.session)
        evaluated = self.send(
            "Runtime.evaluate",
            {"expression": INSPECT, "awaitPromise": True, "returnByValue": True},
        )
        if "exceptionDetails" in evaluated:
            return {}, [f"the page inspection failed: {_exception_text(evaluated)}"]
        report: dict[str, Any] = json.loads(evaluated["result"]["value"])
        events = [e for e in browser.events if e.get("sessionId") == self.session]
        return report, load_problems(events)

    def screenshot(self, path: Path, height: int) -> None:
        """Save the whole page (up to :data:`SCREENSHOT_MAX_HEIGHT` pixels) as a PNG."""
        clip = {"x": 0, "y": 0, "width": WIDTH, "height": min(height, SCREENSHOT_MAX_HEIGHT)}
        shot = self.send(
            "Page.captureScreenshot",
            {"format": "png", "captureBeyondViewport": True, "clip": {**clip, "scale": 1}},
        )
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(shot["data"]))


def _exception_text(payload: dict[str, Any]) -> str:
    details = payload.get("exceptionDetails", {})
    exception = details.get("exception", {})
    return str(exception.get("description") or details.get("text") or "unknown error")


def load_problems(events: Sequence[dict[str, Any]]) -> list[str]:
    """Failed loads, network requests and script errors among one page's events."""
    problems = []
    urls = {}
    for event in events:
        method, params = event["method"], event.get("params", {})
        if method == "Network.requestWillBeSent":
            url = params["request"]["url"]
            urls[params["requestId"]] = url
            if not url.startswith(LOCAL_SCHEMES):
                problems.append(f"asks the network for {url}")
        elif method == "Network.loadingFailed" and not params.get("canceled"):
            url = urls.get(params["requestId"], "?")
            if url.startswith(LOCAL_SCHEMES):
                problems.append(f"cannot load {url} ({params.get('errorText')})")
        elif method == "Runtime.exceptionThrown":
            problems.append(f"script error: {_exception_text(params)}")
        elif method == "Runtime.consoleAPICalled" and params.get("type") == "error":
            text = " ".join(str(a.get("value", a.get("description", ""))) for a in params["args"])
            problems.append(f"console error: {text}")
    return problems


def page_problems(report: dict[str, Any]) -> list[str]:
    """What a reader would see wrong in one page's :data:`INSPECT` report."""
    problems = [f"shows raw TeX: {piece!r}" for piece in raw_tex([report["title"]])]
    problems += [f"shows raw TeX: {piece!r}" for piece in raw_tex(report["texts"])]
    if report["mathElements"] and report["mathjax"] != "done":
        problems.append(f"has math ({report['mathElements']} formulas) but MathJax did not run")
    problems += [f"MathJax error: {error}" for error in report["mathErrors"]]
    problems += [f"image does not load: {src}" for src, ok in report["images"] if not ok]
    return problems


def link_problems(site: Path, reports: Sequence[PageReport]) -> None:
    """Add to each report the links that lead to no file or anchor of the site."""
    anchors = {(site / r.page).resolve(): r.anchors for r in reports}
    for report in reports:
        for href in sorted(set(report.links)):
            parts = urlsplit(href)
            if parts.scheme != "file":
                continue  # the web is not checked: the network is off
            target = Path(unquote(parts.path)).resolve()
            if not target.exists():
                report.problems.append(f"broken link: {href}")
            elif parts.fragment and target in anchors:
                fragment = unquote(parts.fragment)
                if fragment not in anchors[target]:
                    report.problems.append(f"broken link: {href} (no such anchor)")


def check_site(
    site: Path, browser: str, screenshots: Path | None = None, pages: Sequence[str] = ()
) -> list[PageReport]:
    """Open every page of ``site`` (or only ``pages``) in ``browser`` and check it."""
    names = list(pages) or sorted(p.relative_to(site).as_posix() for p in site.rglob("*.html"))
    reports = []
    with tempfile.TemporaryDirectory(prefix="check-pages-") as scratch:
        devtools = DevTools(browser, Path(scratch) / "profile", Path(scratch) / "browser.log")
        try:
            tab = Tab(devtools)
            for name in names:
                page = PageReport(name)
                found, page.problems = tab.open((site / name).resolve().as_uri())
                if found:
                    page.problems += page_problems(found)
                    page.links = found["links"]
                    page.anchors = set(found["anchors"])
                    page.math_elements = found["mathElements"]
                    if screenshots is not None and name in SCREENSHOTS:
                        tab.screenshot(screenshots / SCREENSHOTS[name], found["height"])
                reports.append(page)
        finally:
            devtools.close()
    link_problems(site, reports)
    return reports


def main(argv: Sequence[str] | None = None) -> int:
    """Check a built site; print one line per page with a problem and a summary."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("site", type=Path, help="the built HTML folder (holds index.html)")
    parser.add_argument("--screenshots", type=Path, metavar="DIR", help="where to keep PNGs")
    parser.add_argument(
        "--require-browser", action="store_true", help="fail (exit 2) when Chromium is absent"
    )
    args = parser.parse_args(argv)
    if not (args.site / "index.html").is_file():
        print(f"check_pages: site: no index.html in {args.site}", file=sys.stderr)
        return 2
    browser = find_browser()
    if browser is None:
        note = "check_pages: Chromium not found (apt-get install chromium); pages not checked"
        print(note, file=sys.stderr)
        return 2 if args.require_browser else 0
    start = time.perf_counter()
    reports = check_site(args.site, browser, args.screenshots)
    failed = [r for r in reports if r.problems]
    for report in failed:
        for problem in report.problems:
            print(f"{report.page}: {problem}")
    formulas = sum(r.math_elements for r in reports)
    print(
        f"check_pages: {len(reports) - len(failed)} of {len(reports)} pages pass "
        f"({formulas} formulas typeset, offline, {time.perf_counter() - start:.1f} s)"
    )
    missing = []
    if args.screenshots is not None:
        saved = [name for name in SCREENSHOTS.values() if (args.screenshots / name).is_file()]
        missing = [page for page in SCREENSHOTS if not (args.site / page).is_file()]
        print(f"check_pages: screenshots {', '.join(saved)} in {args.screenshots}")
        for page in missing:
            print(f"{page}: not in the site, so no screenshot of it")
    return 1 if failed or missing else 0


if __name__ == "__main__":
    sys.exit(main())
