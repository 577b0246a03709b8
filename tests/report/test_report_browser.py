"""The HTML report in a real headless Chromium (the system's ``chromium`` package, installed
by ``.ci/run``), driven over the DevTools protocol on a pipe (``--remote-debugging-pipe``:
no network port, no extra Python dependency). The page must load without console errors
or exceptions, every image must decode to a non-zero size, and a full-page screenshot is
written to ``test-artifacts/report.png``."""
import base64
import json
import os
import select
import shutil
import subprocess
import time
from pathlib import Path

import pytest

CHROMIUM = next((p for p in (shutil.which(n) for n in ("chromium", "chromium-browser",
                                                        "google-chrome")) if p), None)
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed "
                                "(.ci/run installs the Debian package)")


def _onto_3_and_4(read_end, write_end):
    """In the child: make the pipe ends fds 3 and 4 (via spare copies, as either may be 3 or
    4 already); ``pass_fds`` includes 3 and 4 so that they stay open."""
    read_copy, write_copy = os.dup(read_end), os.dup(write_end)
    os.dup2(read_copy, 3)
    os.dup2(write_copy, 4)


class DevTools:
    """A minimal Chrome DevTools Protocol client over the ``--remote-debugging-pipe`` fds."""

    def __init__(self, user_dir):
        to_child_r, self._write = os.pipe()
        self._read, from_child_w = os.pipe()
        # The browser reads commands on fd 3 and writes replies and events on fd 4.
        self.proc = subprocess.Popen(
            [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--disable-extensions", "--disable-background-networking",
             "--remote-debugging-pipe", f"--user-data-dir={user_dir}", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            pass_fds=(to_child_r, from_child_w, 3, 4),
            preexec_fn=lambda: _onto_3_and_4(to_child_r, from_child_w))
        os.close(to_child_r)
        os.close(from_child_w)
        self._buffer, self._next_id, self.events = b"", 0, []

    def _message(self, deadline):
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._read], [], [], left)[0]:
                raise TimeoutError("chromium did not answer in time")
            chunk = os.read(self._read, 1 << 20)
            if not chunk:
                raise RuntimeError("chromium closed the DevTools pipe")
            self._buffer += chunk
        raw, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(raw)

    def send(self, method, session=None, timeout=30.0, **params):
        self._next_id += 1
        message = {"id": self._next_id, "method": method, "params": params}
        if session:
            message["sessionId"] = session
        os.write(self._write, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            reply = self._message(deadline)
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply["result"]
            self.events.append(reply)

    def wait_for(self, method, timeout=30.0):
        deadline = time.monotonic() + timeout
        while not any(e.get("method") == method for e in self.events):
            self.events.append(self._message(deadline))

    def close(self):
        try:
            self.send("Browser.close", timeout=5.0)
        except (RuntimeError, TimeoutError, OSError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self._write)
        os.close(self._read)


_HEADINGS_JS = "[...document.querySelectorAll('h2')].map(h => h.textContent)"
_WIDTH_JS = "document.documentElement.scrollWidth"

_IMAGES_JS = """
Promise.all([...document.images].map(img => img.decode().then(
    () => [img.alt, img.naturalWidth, img.naturalHeight, img.complete],
    () => [img.alt, 0, 0, false])))
"""


def open_page(browser, url):
    """A new tab of ``browser`` (1200 x 900) that has loaded ``url``: its session id."""
    target = browser.send("Target.createTarget", url="about:blank")["targetId"]
    session = browser.send("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
    for domain in ("Page", "Runtime", "Log"):
        browser.send(f"{domain}.enable", session)
    browser.send("Emulation.setDeviceMetricsOverride", session, width=1200, height=900,
                 deviceScaleFactor=1, mobile=False)
    browser.send("Page.navigate", session, url=url)
    browser.wait_for("Page.loadEventFired")
    return session


def page_errors(events):
    """The exceptions, console errors and failed assertions among the page's events."""
    return [e for e in events
            if e.get("method") == "Runtime.exceptionThrown"
            or (e.get("method") == "Runtime.consoleAPICalled"
                and e["params"]["type"] in ("error", "assert"))
            or (e.get("method") == "Log.entryAdded"
                and e["params"]["entry"]["level"] == "error")]


def _make_report(tmp_path):
    """The report of a softmax regression on iris, as ``problin report`` writes it."""
    from sklearn.datasets import load_iris

    from problin import LogisticRegression
    from problin.report import write_report
    iris = load_iris(as_frame=True)
    y = iris.target_names[iris.target]
    model = LogisticRegression(alpha=1.0).fit(iris.data, y)
    return write_report(tmp_path / "report.html", model, iris.data, y, source="iris")


def test_report_renders_in_headless_chromium(tmp_path):
    page = _make_report(tmp_path)
    html = page.read_text()
    assert "http://" not in html and "https://" not in html  # self-contained
    browser = DevTools(tmp_path / "profile")
    try:
        session = open_page(browser, page.as_uri())
        images = browser.send("Runtime.evaluate", session, expression=_IMAGES_JS,
                              awaitPromise=True, returnByValue=True)["result"]["value"]
        headings, width = (browser.send("Runtime.evaluate", session, expression=js,
                                        returnByValue=True)["result"]["value"]
                           for js in (_HEADINGS_JS, _WIDTH_JS))
        size = browser.send("Page.getLayoutMetrics", session)["cssContentSize"]
        shot = browser.send("Page.captureScreenshot", session, format="png",
                            captureBeyondViewport=True,
                            clip={"x": 0, "y": 0, "width": size["width"],
                                  "height": size["height"], "scale": 1})
    finally:
        browser.close()
    assert page_errors(browser.events) == []
    names = [alt for alt, *_ in images]
    assert {"Confusion matrix", "ROC", "Calibration", "Decision regions", "Coefficients",
            "Optimiser trace"} <= set(names)
    assert headings[:3] == ["Fit statistics (on the training data: in sample)", "Parameters",
                            "Scores: out of sample (5-fold cross-validation) and in sample"]
    assert width <= 1200  # nothing wider than the window: no horizontal scrolling
    assert all(w > 0 and h > 0 and done for _, w, h, done in images), images
    png = base64.b64decode(shot["data"])
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10_000
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / "report.png").write_bytes(png)
    (tmp_path / "report.png").write_bytes(png)
