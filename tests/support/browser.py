"""A headless Chromium driven over the DevTools protocol on a pipe (no websocket, no extra dependency).

Chromium started with ``--remote-debugging-pipe`` reads NUL-terminated JSON commands on
file descriptor 3 and writes replies and events on descriptor 4.
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import json
import os
import select
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from support.waiting import BOUND

FLAGS = (
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
    "--mute-audio",
    "--hide-scrollbars",
    "--remote-debugging-pipe",
)


def find_chromium() -> str | None:
    """The Chromium binary ($MDAD_CHROMIUM, else chromium or chromium-browser on the PATH)."""
    return os.environ.get("MDAD_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")


@dataclass
class PageCheck:
    """What the browser saw: image sizes, console errors and uncaught exceptions, a screenshot."""

    images: list[dict]
    errors: list[str]
    screenshot: bytes
    title: str
    text: str = ""
    log: list[str] = field(default_factory=list)
    measured: object = None  # the value of ``check_page``'s ``measure`` expression


class Chromium:
    """One headless browser; use as a context manager."""

    def __init__(self, binary: str, profile: Path, timeout: float = BOUND):
        self.timeout = timeout
        to_child_r, self._to_child = os.pipe()
        self._from_child, from_child_w = os.pipe()
        hi_r = fcntl.fcntl(to_child_r, fcntl.F_DUPFD, 10)
        hi_w = fcntl.fcntl(from_child_w, fcntl.F_DUPFD, 10)

        def wire_pipes():  # in the child: the protocol's descriptors 3 (commands in) and 4 (replies out)
            os.dup2(hi_r, 3)
            os.dup2(hi_w, 4)

        profile.mkdir(parents=True, exist_ok=True)
        self._stderr_path = profile / "chromium-stderr.log"
        with open(self._stderr_path, "wb") as stderr:  # a file, not a pipe: a chatty browser must never block
            self.proc = subprocess.Popen(
                [binary, *FLAGS, f"--user-data-dir={profile}", "about:blank"],
                preexec_fn=wire_pipes,
                close_fds=False,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=stderr,
            )
        for fd in (to_child_r, from_child_w, hi_r, hi_w):
            os.close(fd)
        self._buffer = b""
        self._next_id = 0
        self.events: list[dict] = []

    def __enter__(self) -> Chromium:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        for fd in (self._to_child, self._from_child):
            with contextlib.suppress(OSError):
                os.close(fd)
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    # ---- protocol -------------------------------------------------------------------
    def _read_message(self, deadline: float) -> dict:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"Chromium did not answer in {self.timeout:.0f} s")
            ready, _, _ = select.select([self._from_child], [], [], left)
            if ready:
                chunk = os.read(self._from_child, 1 << 20)
                if not chunk:
                    raise RuntimeError("Chromium closed the DevTools pipe: " + self._stderr_tail())
                self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(message)

    def _stderr_tail(self) -> str:
        return self._stderr_path.read_text(errors="replace")[-2000:]

    def send(self, method: str, params: dict | None = None, session: str | None = None) -> dict:
        """Send one command and wait for its reply (events that arrive meanwhile are kept)."""
        self._next_id += 1
        message = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self._to_child, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + self.timeout
        while True:
            reply = self._read_message(deadline)
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def wait_for(self, method: str, session: str) -> dict:
        deadline = time.monotonic() + self.timeout
        while True:
            for i, event in enumerate(self.events):
                if event.get("method") == method and event.get("sessionId") == session:
                    return self.events.pop(i)
            self.events.append(self._read_message(deadline))

    # ---- the check ------------------------------------------------------------------
    def check_page(self, path: Path, width: int = 1200, height: int = 900, measure: str = "null") -> PageCheck:
        """Open a local file; wait until it and its images are loaded; collect images, errors, a screenshot and
        the value of the JavaScript expression ``measure`` (e.g. the widths of elements)."""
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Log"):
            self.send(f"{domain}.enable", session=session)
        self.send("Emulation.setDeviceMetricsOverride", {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False}, session=session)
        self.send("Page.navigate", {"url": path.resolve().as_uri()}, session=session)
        self.wait_for("Page.loadEventFired", session)
        images = self.send(
            "Runtime.evaluate",
            {
                "expression": "Promise.all(Array.from(document.images).map(img => img.decode().then(() => 0, () => 0)"
                ".then(() => ({alt: img.alt, complete: img.complete, naturalWidth: img.naturalWidth,"
                " naturalHeight: img.naturalHeight}))))",
                "awaitPromise": True,
                "returnByValue": True,
            },
            session=session,
        )["result"]["value"]
        info = self.send("Runtime.evaluate", {"expression": "[document.title, document.body.innerText]", "returnByValue": True}, session=session)[
            "result"
        ]["value"]
        measured = self.send("Runtime.evaluate", {"expression": measure, "returnByValue": True}, session=session)["result"].get("value")
        shot = self.send("Page.captureScreenshot", {"format": "png"}, session=session)["data"]
        errors, log = [], []
        for event in self.events:
            method, params = event.get("method"), event.get("params", {})
            if method == "Runtime.consoleAPICalled":
                text = " ".join(str(a.get("value", a.get("description", ""))) for a in params.get("args", []))
                log.append(f"console.{params.get('type')}: {text}")
                if params.get("type") in ("error", "assert"):
                    errors.append(text)
            elif method == "Runtime.exceptionThrown":
                details = params.get("exceptionDetails", {})
                errors.append(f"{details.get('text', '')} {details.get('exception', {}).get('description', '')}".strip())
            elif method == "Log.entryAdded":
                entry = params.get("entry", {})
                log.append(f"log.{entry.get('level')}: {entry.get('text')}")
                if entry.get("level") == "error":
                    errors.append(f"{entry.get('source')}: {entry.get('text')} {entry.get('url', '')}")
        return PageCheck(images=images, errors=errors, screenshot=base64.b64decode(shot), title=info[0], text=info[1], log=log, measured=measured)


# every table of the page: how wide it is and how wide the page lets it be
TABLE_WIDTHS = """Array.from(document.querySelectorAll('table')).map(t => {
  const box = t.parentElement.classList.contains('table-wrap') ? t.parentElement : t;
  return {head: t.rows[0].innerText.slice(0, 60), width: t.scrollWidth, room: document.body.clientWidth, box: box.clientWidth,
          scrolls: box.scrollWidth > box.clientWidth};
})"""


def tables_fit(chromium: str, report: Path, profile: Path, width: int = 1280) -> list[dict]:
    """The page's tables that do not fit at ``width`` px (wider than the body, or scrolled sideways)."""
    with Chromium(chromium, profile) as browser:
        page = browser.check_page(report, width, 900, measure=TABLE_WIDTHS)
    assert page.errors == [], page.errors
    assert page.measured, "the page has no tables"
    return [t for t in page.measured if t["scrolls"] or t["width"] > t["room"]]
