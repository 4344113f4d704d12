"""Load a page in real headless Chromium (Debian's ``chromium``) and see what a person would.

    page = load_page(tmp_path / "report.html")
    assert page.console_errors == []
    assert non_white_fraction(page.screenshot_png) > 0.05

Chromium is driven through the DevTools protocol over a pipe (``--remote-debugging-pipe``:
JSON messages on file descriptors 3 and 4), so no extra package is needed. Console errors
are everything a developer console shows in red: uncaught exceptions, ``console.error``,
and the browser's own log errors (blocked or failed loads, Content-Security-Policy
violations). JavaScript dialogs (``alert``) are recorded and dismissed.

Without Chromium, tests skip; with ``CI=true`` in the environment they fail instead.
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import queue
import shutil
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

__all__ = ["PageResult", "chromium_path", "load_page", "non_white_fraction", "require_chromium"]

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
    "--hide-scrollbars",
    "--remote-debugging-pipe",
)


def chromium_path() -> str | None:
    """The Chromium (or Chrome) executable, or None when none is installed."""
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        found = shutil.which(name)
        if found:
            return found
    return "/usr/bin/chromium" if os.path.exists("/usr/bin/chromium") else None


def require_chromium() -> str:
    """The Chromium path; skips the test without one (fails it when ``CI=true``)."""
    path = chromium_path()
    if path is None:
        reason = "headless Chromium is not installed: apt-get install chromium"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(reason)
        pytest.skip(reason)
    return path


@dataclass
class PageResult:
    """What loading a page showed: errors, a full-page screenshot, the DOM and its text."""

    console_errors: list[str]
    screenshot_png: Path
    dom: str
    text: str = ""
    dialogs: list[str] = field(default_factory=list)
    title: str = ""


class _DevTools:
    """A DevTools protocol session over Chromium's debugging pipe."""

    def __init__(self, proc: subprocess.Popen[bytes], to_chrome: int, from_chrome: int) -> None:
        self.proc = proc
        self._out = os.fdopen(to_chrome, "wb", buffering=0)
        self._in = os.fdopen(from_chrome, "rb", buffering=0)
        self._next_id = 0
        self._replies: dict[int, queue.Queue[dict[str, Any]]] = {}
        self._lock = threading.Lock()
        self.events: queue.Queue[dict[str, Any]] = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        buf = b""
        while True:
            try:
                chunk = self._in.read(65536)
            except (OSError, ValueError):
                break
            if not chunk:
                break
            buf += chunk
            while b"\0" in buf:
                raw, buf = buf.split(b"\0", 1)
                msg = json.loads(raw)
                if "id" in msg:
                    with self._lock:
                        box = self._replies.get(msg["id"])
                    if box is not None:
                        box.put(msg)
                else:
                    self.events.put(msg)
        self.events.put({"method": "__closed__"})

    def send(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        session: str | None = None,
        timeout: float = 30.0,
    ) -> dict[str, Any]:
        with self._lock:
            self._next_id += 1
            msg_id = self._next_id
            box: queue.Queue[dict[str, Any]] = queue.Queue()
            self._replies[msg_id] = box
        msg: dict[str, Any] = {"id": msg_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        self._out.write(json.dumps(msg).encode() + b"\0")
        try:
            reply = box.get(timeout=timeout)
        except queue.Empty:
            raise TimeoutError(f"Chromium did not answer {method} within {timeout} s") from None
        if "error" in reply:
            raise RuntimeError(f"{method} failed: {reply['error']}")
        return reply.get("result", {})

    def close(self) -> None:
        try:
            self.send("Browser.close", timeout=5)
        except Exception:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for f in (self._out, self._in):
            try:
                f.close()
            except OSError:
                pass


def _error_text(event: dict[str, Any]) -> str | None:
    method, params = event.get("method"), event.get("params") or {}
    if method == "Runtime.exceptionThrown":
        details = params.get("exceptionDetails") or {}
        exc = details.get("exception") or {}
        return f"uncaught: {exc.get('description') or details.get('text')}"
    if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
        args = params.get("args") or []
        return "console.error: " + " ".join(
            str(a.get("value", a.get("description", ""))) for a in args
        )
    if method == "Log.entryAdded":
        entry = params.get("entry") or {}
        if entry.get("level") == "error":
            return f"{entry.get('source')}: {entry.get('text')} {entry.get('url') or ''}".strip()
    return None


def _high(fds: tuple[int, int]) -> tuple[int, int]:
    """Move a pipe's ends to fds >= 10, so the shell can put them on 3 and 4 without clashes."""
    moved = tuple(fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10) for fd in fds)
    for fd in fds:
        os.close(fd)
    return moved[0], moved[1]


def load_page(
    html_path: str | os.PathLike[str],
    *,
    width: int = 1200,
    height: int = 900,
    settle_seconds: float = 0.5,
    timeout: float = 60.0,
) -> PageResult:
    """Open ``html_path`` in headless Chromium; the screenshot is of the whole page.

    Chromium's profile, log and the screenshot live in a folder beside the page (a test's
    ``tmp_path``, which pytest cleans up), not in the system's temporary folder."""
    exe = require_chromium()
    page = Path(html_path).resolve()
    workdir = Path(tempfile.mkdtemp(prefix="chromium-", dir=page.parent))
    to_r, to_w = _high(os.pipe())  # we write, Chromium reads fd 3
    from_r, from_w = _high(os.pipe())  # Chromium writes fd 4, we read

    log = open(workdir / "chromium.log", "wb")  # noqa: SIM115 - closed when Chromium ends
    # Chromium talks on fds 3 and 4; bash (dash only knows fds 0-9) puts our pipe ends
    # there, then becomes Chromium
    redirect = f'exec "$0" "$@" 3<&{to_r} 4>&{from_w} {to_r}<&- {from_w}>&-'
    proc = subprocess.Popen(
        [
            shutil.which("bash") or "/bin/bash",
            "-c",
            redirect,
            exe,
            *FLAGS,
            f"--user-data-dir={workdir / 'profile'}",
            "about:blank",
        ],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=log,
        pass_fds=(to_r, from_w),
    )
    os.close(to_r)
    os.close(from_w)
    dt = _DevTools(proc, to_w, from_r)
    errors: list[str] = []
    dialogs: list[str] = []
    try:
        target = dt.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = dt.send("Target.attachToTarget", {"targetId": target, "flatten": True})[
            "sessionId"
        ]
        for domain in ("Runtime", "Log", "Page"):
            dt.send(f"{domain}.enable", session=session)
        dt.send(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
            session=session,
        )
        dt.send("Page.navigate", {"url": page.as_uri()}, session=session)
        deadline = time.monotonic() + timeout
        loaded_at: float | None = None
        while True:
            now = time.monotonic()
            if now > deadline:
                raise TimeoutError(f"{page} did not finish loading within {timeout} s")
            if loaded_at is not None and now - loaded_at >= settle_seconds:
                break
            try:
                event = dt.events.get(timeout=0.1)
            except queue.Empty:
                continue
            method = event.get("method")
            if method == "__closed__":
                raise RuntimeError("Chromium exited while loading the page")
            if method == "Page.loadEventFired" and loaded_at is None:
                loaded_at = time.monotonic()
            elif method == "Page.javascriptDialogOpening":
                dialogs.append(str((event.get("params") or {}).get("message")))
                dt.send("Page.handleJavaScriptDialog", {"accept": True}, session=session)
            text = _error_text(event)
            if text:
                errors.append(text)

        def evaluate(expression: str) -> Any:
            result = dt.send(
                "Runtime.evaluate",
                {"expression": expression, "returnByValue": True},
                session=session,
            )
            return (result.get("result") or {}).get("value")

        dom = evaluate("document.documentElement.outerHTML") or ""
        text = evaluate("document.body ? document.body.innerText : ''") or ""
        title = evaluate("document.title") or ""
        metrics = dt.send("Page.getLayoutMetrics", session=session)
        size = metrics.get("cssContentSize") or metrics.get("contentSize") or {}
        full_height = int(min(max(size.get("height", height), 1), 16000))
        shot = dt.send(
            "Page.captureScreenshot",
            {
                "format": "png",
                "captureBeyondViewport": True,
                "clip": {"x": 0, "y": 0, "width": width, "height": full_height, "scale": 1},
            },
            session=session,
        )
        png = workdir / "screenshot.png"
        png.write_bytes(base64.b64decode(shot["data"]))
        while True:  # errors that arrived while we looked
            try:
                late = _error_text(dt.events.get_nowait())
            except queue.Empty:
                break
            if late:
                errors.append(late)
    finally:
        dt.close()
        log.close()
        shutil.rmtree(workdir / "profile", ignore_errors=True)  # keep the screenshot only
    return PageResult(
        console_errors=errors, screenshot_png=png, dom=dom, text=text, dialogs=dialogs, title=title
    )


def non_white_fraction(png_path: str | os.PathLike[str], *, threshold: float = 0.92) -> float:
    """The share of pixels in a PNG that are not (near) white: 0 for a blank page."""
    import matplotlib.image as mpimg
    import numpy as np

    image = mpimg.imread(str(png_path))[..., :3]
    return float(np.mean(np.any(image < threshold, axis=-1)))
