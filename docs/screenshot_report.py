"""Screenshots of parts of a report.html in headless Chromium, for the README (stdlib only; no test needs it).

Chromium is driven over its DevTools pipe (``--remote-debugging-pipe``: JSON messages on fds 3 and 4), so no
websocket package is needed. Each shot scrolls an element into view and captures its box, optionally after
choosing viewer filters.

    apt-get install -y chromium
    python docs/screenshot_report.py RUN/eval/ocr-verifier/report.html docs/images
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

# (file name, CSS selector of the element to capture, JavaScript run first, width, height cap)
SHOTS = [
    ("report_severity_plot.png", "figure img[alt^='Top: accuracy']", "", 1000, 900),
    ("report_viewer.png", "#viewer",
     "for (const [k, v] of [['task', 'detect'], ['capture', 'tilt']]) {"
     " const s = document.querySelector(`#viewer select[data-key=${k}]`); s.value = v;"
     " s.dispatchEvent(new Event('change')); }", 1100, 1150),
]


class Browser:
    """One headless Chromium with a DevTools pipe."""

    def __init__(self, chromium: str, width: int, height: int) -> None:
        self.profile = tempfile.mkdtemp(prefix="mathstress-shot-")
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()

        def wire() -> None:   # in the child: fd 3 reads our commands, fd 4 writes its answers
            os.dup2(to_browser_r, 3)
            os.dup2(from_browser_w, 4)

        self.proc = subprocess.Popen(
            [chromium, "--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
             "--remote-debugging-pipe", f"--user-data-dir={self.profile}", f"--window-size={width},{height}",
             "about:blank"],
            preexec_fn=wire, pass_fds=(3, 4, to_browser_r, from_browser_w), stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL)
        os.close(to_browser_r)
        os.close(from_browser_w)
        self._buffer = b""
        self._id = 0
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]

    def call(self, method: str, session: str | None = None, **params: Any) -> dict[str, Any]:
        self._id += 1
        message: dict[str, Any] = {"id": self._id, "method": method, "params": params}
        if session:
            message["sessionId"] = session
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        while True:
            while b"\0" not in self._buffer:
                chunk = os.read(self._from_browser, 1 << 20)
                if not chunk:
                    raise RuntimeError("chromium closed its DevTools pipe")
                self._buffer += chunk
            raw, self._buffer = self._buffer.split(b"\0", 1)
            reply = json.loads(raw)
            if reply.get("id") == self._id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})

    def page(self, method: str, **params: Any) -> dict[str, Any]:
        return self.call(method, self.session, **params)

    def evaluate(self, expression: str) -> Any:
        result = self.page("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        return result.get("result", {}).get("value")

    def close(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=30)
        shutil.rmtree(self.profile, ignore_errors=True)


def shoot(report: Path, out_dir: Path, chromium: str) -> list[Path]:
    written = []
    for name, selector, script, width, cap in SHOTS:
        browser = Browser(chromium, width, 1400)
        try:
            browser.page("Page.enable")
            browser.page("Emulation.setDeviceMetricsOverride", width=width, height=1400, deviceScaleFactor=1,
                         mobile=False)
            browser.page("Page.navigate", url=report.resolve().as_uri())
            deadline = time.monotonic() + 60
            while browser.evaluate("document.readyState") != "complete" and time.monotonic() < deadline:
                time.sleep(0.2)
            if script:
                browser.evaluate(script)
            box = browser.evaluate(
                f"(() => {{ const e = document.querySelector({json.dumps(selector)}); e.scrollIntoView();"
                " const r = e.getBoundingClientRect();"
                " return [r.left + window.scrollX, r.top + window.scrollY, r.width, r.height]; })()")
            time.sleep(1.5)   # lazy page images load after the scroll
            x, y, w, h = box
            shot = browser.page("Page.captureScreenshot", format="png", captureBeyondViewport=True,
                                clip={"x": x, "y": y, "width": w, "height": min(h, cap), "scale": 1})
        finally:
            browser.close()
        path = out_dir / name
        path.write_bytes(base64.b64decode(shot["data"]))
        written.append(path)
    return written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("report", type=Path, help="a report.html written by `mathstress report`")
    parser.add_argument("out_dir", type=Path, help="folder for the PNG files")
    parser.add_argument("--chromium", default=shutil.which("chromium") or "chromium")
    args = parser.parse_args()
    args.out_dir.mkdir(parents=True, exist_ok=True)
    for path in shoot(args.report, args.out_dir, args.chromium):
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
