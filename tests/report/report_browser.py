"""Headless Chromium driven over the DevTools protocol on a pipe (``--remote-debugging-pipe``: NUL-separated
JSON on fds 3/4), so no websocket client is needed. Records console errors, exceptions, dialogs and every
request a page makes."""

from __future__ import annotations

import base64
import contextlib
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

CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--disable-extensions", "--disable-default-apps",
         "--mute-audio", "--hide-scrollbars", "--remote-debugging-pipe")


def _above_four(fd: int) -> int:
    import fcntl

    high = fcntl.fcntl(fd, fcntl.F_DUPFD, 10)
    os.close(fd)
    return high


def find_chromium() -> str | None:
    return next((path for name in CHROMIUM_NAMES if (path := shutil.which(name))), None)


@dataclass
class PageLog:
    console_errors: list[str] = field(default_factory=list)
    exceptions: list[str] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)


class Browser:
    """One Chromium process; :meth:`open` loads a page in a fresh tab and returns what it logged."""

    def __init__(self, executable: str, timeout: float = 60.0) -> None:
        self.timeout = timeout
        self._profile = tempfile.mkdtemp(prefix="synchunt-chromium-")
        to_chrome_r, self._to_chrome = os.pipe()
        self._from_chrome, from_chrome_w = os.pipe()
        # Above 4, so the shell's "3<&N 4>&M" cannot clobber one end with the other.
        to_chrome_r, from_chrome_w = (_above_four(fd) for fd in (to_chrome_r, from_chrome_w))
        command = [executable, *FLAGS, f"--user-data-dir={self._profile}", "about:blank"]
        # bash (plain sh takes single-digit fds only) moves the pipe ends to the fds Chromium expects, then
        # becomes Chromium.
        self._process = subprocess.Popen(
            ["bash", "-c", f'exec "$@" 3<&{to_chrome_r} 4>&{from_chrome_w}', "bash", *command],
            pass_fds=(to_chrome_r, from_chrome_w), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE)
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self._messages: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self._events: list[dict[str, Any]] = []
        self._next_id = 0
        threading.Thread(target=self._read, daemon=True).start()
        self.send("Browser.getVersion")

    def _read(self) -> None:
        buffer = b""
        while chunk := os.read(self._from_chrome, 1 << 16):
            buffer += chunk
            *messages, buffer = buffer.split(b"\0")
            for message in messages:
                self._messages.put(json.loads(message))
        self._messages.put(None)

    def send(self, method: str, params: dict[str, Any] | None = None, session: str | None = None) -> dict[str, Any]:
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self._to_chrome, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + self.timeout
        while True:
            reply = self._next(deadline, method)
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self._events.append(reply)

    def _next(self, deadline: float, waiting_for: str) -> dict[str, Any]:
        try:
            message = self._messages.get(timeout=max(0.01, deadline - time.monotonic()))
        except queue.Empty:
            raise TimeoutError(f"no answer from Chromium for {waiting_for}") from None
        if message is None:
            raise RuntimeError("Chromium closed the DevTools pipe: "
                               + (self._process.stderr.read(4000).decode(errors="replace")
                                  if self._process.stderr else ""))
        return message

    def open(self, path: Path, *, width: int = 1400, height: int = 1000, wait_for: str = "",
             screenshot: Path | None = None) -> tuple[PageLog, Any]:
        """Load ``path``; wait until the JS expression ``wait_for`` is truthy; return the log and its value."""
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Runtime", "Log", "Network", "Page"):
            self.send(f"{domain}.enable", session=session)
        self.send("Emulation.setDeviceMetricsOverride", {"width": width, "height": height, "deviceScaleFactor": 1,
                                                        "mobile": False}, session=session)
        self._events.clear()
        self.send("Page.navigate", {"url": path.resolve().as_uri()}, session=session)
        value = self._wait(session, wait_for or "document.readyState === 'complete'")
        log = self._log(session)
        if screenshot is not None:
            # Resizing a rendered page leaves headless paint glitches: load it again at its full height.
            full = self.send("Page.getLayoutMetrics", session=session)["cssContentSize"]
            self.send("Emulation.setDeviceMetricsOverride", {"width": width, "height": int(min(full["height"], 16000)),
                                                            "deviceScaleFactor": 1, "mobile": False}, session=session)
            self.send("Page.reload", session=session)
            time.sleep(0.2)
            self._wait(session, wait_for or "document.readyState === 'complete'")
            time.sleep(0.5)
            shot = self.send("Page.captureScreenshot", {"format": "png"}, session=session)
            screenshot.parent.mkdir(parents=True, exist_ok=True)
            screenshot.write_bytes(base64.b64decode(shot["data"]))
        self.send("Target.closeTarget", {"targetId": target})
        return log, value

    def evaluate(self, session: str, expression: str) -> Any:
        result = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                                "awaitPromise": True}, session=session)
        return result.get("result", {}).get("value")

    def _wait(self, session: str, expression: str) -> Any:
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            self._answer_dialogs(session)
            value = self.evaluate(session, expression)
            if value:
                return value
            time.sleep(0.1)
        raise TimeoutError(f"page never satisfied {expression!r}")

    def _answer_dialogs(self, session: str) -> None:
        for event in list(self._events):
            if event.get("method") == "Page.javascriptDialogOpening" and not event.get("answered"):
                event["answered"] = True
                self.send("Page.handleJavaScriptDialog", {"accept": True}, session=session)

    def _log(self, session: str) -> PageLog:
        self.evaluate(session, "0")  # flush events queued before this point
        log = PageLog()
        for event in self._events:
            if event.get("sessionId") != session:
                continue
            method, params = event.get("method"), event.get("params", {})
            if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
                log.console_errors.append(" ".join(str(a.get("value", a.get("description", "")))
                                                   for a in params.get("args", [])))
            elif method == "Runtime.exceptionThrown":
                details = params.get("exceptionDetails", {})
                log.exceptions.append(str(details.get("exception", {}).get("description") or details.get("text")))
            elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
                log.console_errors.append(params["entry"].get("text", ""))
            elif method == "Page.javascriptDialogOpening":
                log.dialogs.append(params.get("message", ""))
            elif method == "Network.requestWillBeSent":
                log.requests.append(params.get("request", {}).get("url", ""))
        return log

    def close(self) -> None:
        with contextlib.suppress(RuntimeError, TimeoutError, OSError):
            self.send("Browser.close")
        try:
            self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        os.close(self._to_chrome)
        shutil.rmtree(self._profile, ignore_errors=True)
