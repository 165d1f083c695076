"""Opens a page in headless Chromium and acts on it as a person would (see cdp.py).

usage: fill_and_submit.py CHROMIUM URL FIELDS_JSON
  FIELDS_JSON: {"css selector": value}; a value of true clicks (a radio's label, a checkbox).
  Fills the fields, submits the page's form, and prints the text of the page it led to.

usage: fill_and_submit.py CHROMIUM URL --click SELECTOR [SELECTOR ...]
  Clicks each element (waiting for the page to load first), then hides the page (as a person
  switching away: the page sees visibilitychange with visibilityState "hidden"), waits a second
  for the requests the page sends, and prints the page's title.
"""
import json
import sys
import time

from cdp import Browser

chromium, url = sys.argv[1], sys.argv[2]
clicks = sys.argv[4:] if sys.argv[3] == "--click" else None
fields = None if clicks is not None else json.loads(sys.argv[3])
browser = Browser(chromium, url)
try:
    if clicks is not None:
        # the new tab starts on about:blank, already "complete": wait for the page itself and
        # for every element to be clicked (a person waits for what they mean to tap to show)
        present = " && ".join(f"!!document.querySelector({json.dumps(s)})" for s in clicks)
        browser.wait_for(f"location.href !== 'about:blank' && document.readyState === 'complete' && {present}")
        time.sleep(0.3)
        for selector in clicks:
            browser.click(selector)
        time.sleep(1.2)
        browser.evaluate("Object.defineProperty(document,'visibilityState',{get:()=>'hidden'});"
                         "document.dispatchEvent(new Event('visibilitychange'))")
        time.sleep(1.0)
        print(browser.evaluate("document.title"))
        raise SystemExit(0)
    browser.wait_for("document.readyState === 'complete' && !!document.querySelector('form')")
    for selector, value in fields.items():
        if value is True:
            browser.click(selector)
        else:
            browser.fill(selector, value)
    browser.evaluate("document.querySelector('form button[type=submit], form [type=submit]').click()")
    browser.wait_for("document.readyState === 'complete' && !document.querySelector('form')")
    print(browser.evaluate("document.body.innerText"))
finally:
    browser.close()
