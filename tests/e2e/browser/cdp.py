"""Headless Chromium driven through the DevTools protocol over --remote-debugging-pipe
(standard library only): the part the page scripts share."""
import json
import os
import subprocess
import time


class Browser:
    """One headless Chromium with one page open at `url`."""

    def __init__(self, chromium, url):
        to_browser_r, to_browser_w = os.pipe()
        from_browser_r, from_browser_w = os.pipe()

        def child_fds():
            os.dup2(to_browser_r, 3)
            os.dup2(from_browser_w, 4)

        self.proc = subprocess.Popen(
            [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
             "--remote-debugging-pipe", "about:blank"],
            pass_fds=(3, 4, to_browser_r, from_browser_w),
            preexec_fn=child_fds,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(to_browser_r)
        os.close(from_browser_w)
        self.reader = os.fdopen(from_browser_r, "rb")
        self.writer = os.fdopen(to_browser_w, "wb")
        self.buffer = b""
        self.next_id = 0
        self.session = None
        target = self.call("Target.createTarget", {"url": url})["targetId"]
        self.session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]

    def call(self, method, params=None):
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params or {}}
        if self.session:
            message["sessionId"] = self.session
        self.writer.write(json.dumps(message).encode() + b"\0")
        self.writer.flush()
        while True:
            while b"\0" not in self.buffer:
                chunk = os.read(self.reader.fileno(), 1 << 20)
                if not chunk:
                    raise SystemExit("chromium closed the pipe")
                self.buffer += chunk
            raw, self.buffer = self.buffer.split(b"\0", 1)
            answer = json.loads(raw)
            if answer.get("id") == self.next_id:
                if "error" in answer:
                    raise SystemExit(f"{method}: {answer['error']}")
                return answer["result"]

    def evaluate(self, expression, await_promise=False):
        result = self.call("Runtime.evaluate",
                           {"expression": expression, "returnByValue": True, "awaitPromise": await_promise})
        if "exceptionDetails" in result:
            raise SystemExit(f"{expression}: {result['exceptionDetails']}")
        return result.get("result", {}).get("value")

    def wait_for(self, expression, seconds=10):
        deadline = time.time() + seconds
        while time.time() < deadline:
            try:
                if self.evaluate(expression):
                    return
            except SystemExit:
                pass
            time.sleep(0.05)
        raise SystemExit(f"timed out waiting for {expression}")

    def click(self, selector):
        if not self.evaluate(f"(function(){{const e=document.querySelector({json.dumps(selector)});"
                             f"if(!e)return false;e.scrollIntoView();e.click();return true;}})()"):
            raise SystemExit(f"nothing matches {selector}")

    def fill(self, selector, value):
        if not self.evaluate(f"(function(){{const e=document.querySelector({json.dumps(selector)});if(!e)return false;"
                             f"e.value={json.dumps(value)};e.dispatchEvent(new Event('input',{{bubbles:true}}));"
                             f"e.dispatchEvent(new Event('change',{{bubbles:true}}));return true;}})()"):
            raise SystemExit(f"nothing matches {selector}")

    KEYS = {"Tab": 9, "Enter": 13, " ": 32, "ArrowLeft": 37, "ArrowUp": 38, "ArrowRight": 39, "ArrowDown": 40,
            "Escape": 27}

    def key(self, name, shift=False):
        """Presses and releases one key, as a keyboard does (the page sees trusted events)."""
        code = self.KEYS[name]
        text = {"Enter": "\r", " ": " "}.get(name)
        base = {"key": name, "code": "Space" if name == " " else name, "windowsVirtualKeyCode": code,
                "nativeVirtualKeyCode": code, "modifiers": 8 if shift else 0}
        down = dict(base, type="keyDown" if text else "rawKeyDown")
        if text:
            down["text"] = text
        self.call("Input.dispatchKeyEvent", down)
        self.call("Input.dispatchKeyEvent", dict(base, type="keyUp"))

    def axe(self, source):
        """Runs axe-core (its source text) on the page: the critical and serious violations, each
        {id, impact, help, targets}."""
        self.evaluate(source)
        return self.evaluate(
            "axe.run(document, {resultTypes: ['violations']}).then(r => r.violations"
            ".filter(v => v.impact === 'critical' || v.impact === 'serious')"
            ".map(v => ({id: v.id, impact: v.impact, help: v.help, targets: v.nodes.map(n => n.target.join(' '))})))",
            await_promise=True)

    def close(self):
        self.proc.kill()
        self.proc.wait()
