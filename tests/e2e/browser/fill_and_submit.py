"""Opens a page in headless Chromium and acts on it as a person would, through the DevTools
protocol over --remote-debugging-pipe (standard library only).

usage: fill_and_submit.py CHROMIUM URL FIELDS_JSON
  FIELDS_JSON: {"css selector": value}; a value of true clicks (a radio's label, a checkbox).
  Fills the fields, submits the page's form, and prints the text of the page it led to.

usage: fill_and_submit.py CHROMIUM URL --click SELECTOR [SELECTOR ...]
  Clicks each element (waiting for the page to load first), then hides the page (as a person
  switching away: the page sees visibilitychange with visibilityState "hidden"), waits a second
  for the requests the page sends, and prints the page's title.
"""
import json
import os
import subprocess
import sys
import time

chromium, url = sys.argv[1], sys.argv[2]
clicks = sys.argv[4:] if sys.argv[3] == "--click" else None
fields = None if clicks is not None else json.loads(sys.argv[3])
to_browser_r, to_browser_w = os.pipe()
from_browser_r, from_browser_w = os.pipe()


def child_fds():
    os.dup2(to_browser_r, 3)
    os.dup2(from_browser_w, 4)


proc = subprocess.Popen(
    [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--remote-debugging-pipe", "about:blank"],
    pass_fds=(3, 4, to_browser_r, from_browser_w),
    preexec_fn=child_fds,
    stdout=subprocess.DEVNULL,
    stderr=subprocess.DEVNULL,
)
os.close(to_browser_r)
os.close(from_browser_w)
reader = os.fdopen(from_browser_r, "rb")
writer = os.fdopen(to_browser_w, "wb")
buffer = b""
next_id = 0


def call(method, params=None, session=None):
    global buffer, next_id
    next_id += 1
    message = {"id": next_id, "method": method, "params": params or {}}
    if session:
        message["sessionId"] = session
    writer.write(json.dumps(message).encode() + b"\0")
    writer.flush()
    while True:
        while b"\0" not in buffer:
            chunk = os.read(reader.fileno(), 65536)
            if not chunk:
                raise SystemExit("chromium closed the pipe")
            buffer += chunk
        raw, buffer = buffer.split(b"\0", 1)
        answer = json.loads(raw)
        if answer.get("id") == next_id:
            if "error" in answer:
                raise SystemExit(f"{method}: {answer['error']}")
            return answer["result"]


def evaluate(session, expression):
    result = call("Runtime.evaluate", {"expression": expression, "returnByValue": True}, session)
    return result.get("result", {}).get("value")


def wait_for(session, expression, seconds=10):
    deadline = time.time() + seconds
    while time.time() < deadline:
        try:
            if evaluate(session, expression):
                return
        except SystemExit:
            pass
        time.sleep(0.05)
    raise SystemExit(f"timed out waiting for {expression}")


try:
    target = call("Target.createTarget", {"url": url})["targetId"]
    session = call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
    if clicks is not None:
        wait_for(session, "document.readyState === 'complete'")
        time.sleep(0.3)
        for selector in clicks:
            if not evaluate(session, f"(function(){{const e=document.querySelector({json.dumps(selector)});"
                                     f"if(!e)return false;e.scrollIntoView();e.click();return true;}})()"):
                raise SystemExit(f"nothing matches {selector}")
        time.sleep(1.2)
        evaluate(session, "Object.defineProperty(document,'visibilityState',{get:()=>'hidden'});"
                          "document.dispatchEvent(new Event('visibilitychange'))")
        time.sleep(1.0)
        print(evaluate(session, "document.title"))
        raise SystemExit(0)
    wait_for(session, "document.readyState === 'complete' && !!document.querySelector('form')")
    for selector, value in fields.items():
        if value is True:
            script = f"document.querySelector({json.dumps(selector)}).click()"
        else:
            script = (
                f"(function(){{const e=document.querySelector({json.dumps(selector)});"
                f"e.value={json.dumps(value)};e.dispatchEvent(new Event('input',{{bubbles:true}}));}})()"
            )
        evaluate(session, script)
    evaluate(session, "document.querySelector('form button[type=submit], form [type=submit]').click()")
    wait_for(session, "document.readyState === 'complete' && !document.querySelector('form')")
    print(evaluate(session, "document.body.innerText"))
finally:
    proc.kill()
    proc.wait()
