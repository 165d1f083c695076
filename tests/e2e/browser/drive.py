"""Runs a list of steps on a page in headless Chromium (see cdp.py) and prints, as JSON, the
values of its `eval` steps.

usage: drive.py CHROMIUM URL STEPS_JSON
  steps: {"fill": selector, "value": text} | {"click": selector} | {"wait": js expression}
       | {"viewport": [width, height]} (a phone when width < 600) | {"screenshot": png path}
       | {"eval": js expression (its value is printed)}
       | {"key": "Tab" | "ArrowRight" | "Enter" | " " | …, "shift": bool} (a real key press)
       | {"axe": path of axe.min.js} (the page's critical and serious violations are printed)
       | {"reload": true} (reloads the page and waits for it to load)
  any step may carry "unless": a js expression; the step is skipped while it is true
"""
import base64
import json
import sys
import time

from cdp import Browser

chromium, url, steps = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
browser = Browser(chromium, url)
values = []
try:
    browser.wait_for("location.href !== 'about:blank' && document.readyState === 'complete'")
    for step in steps:
        if "unless" in step and browser.evaluate(step["unless"]):
            continue
        if "fill" in step:
            browser.fill(step["fill"], step["value"])
        elif "click" in step:
            browser.click(step["click"])
        elif "wait" in step:
            browser.wait_for(step["wait"], step.get("seconds", 20))
        elif "viewport" in step:
            width, height = step["viewport"]
            browser.call("Emulation.setDeviceMetricsOverride",
                         {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600})
        elif "screenshot" in step:
            shot = browser.call("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True})
            with open(step["screenshot"], "wb") as out:
                out.write(base64.b64decode(shot["data"]))
        elif "key" in step:
            browser.key(step["key"], step.get("shift", False))
        elif "axe" in step:
            with open(step["axe"]) as source:
                values.append(browser.axe(source.read()))
        elif "reload" in step:
            browser.call("Page.reload", {})
            time.sleep(0.2)
            browser.wait_for("document.readyState === 'complete'")
        elif "eval" in step:
            values.append(browser.evaluate(step["eval"]))
    print(json.dumps(values))
finally:
    browser.close()
