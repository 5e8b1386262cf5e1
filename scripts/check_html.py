#!/usr/bin/env python3
"""Opens labrun's HTML views in headless Chromium (Debian's chromium and chromium-driver, python3-selenium) and checks
what a reader would see: no console message of level error (SEVERE), no request for anything outside the page's own
folder (every request the page makes is logged by Chromium's performance log), and a screenshot that is not blank (at
least 2% of its pixels differ from the page's background). Writes NAME.png beside each page, or into --shots DIR.
Prints one line per page; exit 0 when every page passes, 1 when one fails, 2 when the browser cannot be started.
Usage: scripts/check_html.py [--shots DIR] PAGE.html...
"""
import argparse
import json
import os
import sys
import urllib.parse


def blank_share(png_path):
    """The share of pixels that differ from the top-left pixel (the page's background), read with Pillow."""
    from PIL import Image
    im = Image.open(png_path).convert("RGB")
    small = im.resize((max(im.width // 4, 1), max(im.height // 4, 1)))
    bg = small.getpixel((0, 0))
    px = list(small.getdata())
    return sum(1 for p in px if p != bg) / max(len(px), 1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shots", default="")
    ap.add_argument("pages", nargs="+")
    a = ap.parse_args()
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
        opts = webdriver.ChromeOptions()
        for arg in ["--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1400,1800",
                    "--disable-dev-shm-usage"]:
            opts.add_argument(arg)
        opts.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
        driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=opts)
    except Exception as e:  # no selenium, chromium or chromedriver
        print(f"check_html: cannot start headless Chromium: {e}", file=sys.stderr)
        return 2
    if a.shots:
        os.makedirs(a.shots, exist_ok=True)
    failed = 0
    try:
        for page in a.pages:
            path = os.path.abspath(page)
            folder = os.path.dirname(path)
            driver.get("file://" + urllib.parse.quote(path))
            driver.execute_script("return document.readyState")
            errors = [m for m in driver.get_log("browser") if m["level"] == "SEVERE"]
            outside = []
            for e in driver.get_log("performance"):
                m = json.loads(e["message"])["message"]
                if m["method"] != "Network.requestWillBeSent":
                    continue
                url = m["params"]["request"]["url"]
                if url.startswith("data:"):
                    continue
                local = urllib.parse.unquote(urllib.parse.urlparse(url).path) if url.startswith("file://") else None
                if local is None or not os.path.abspath(local).startswith(folder + os.sep):
                    outside.append(url)
            height = driver.execute_script("return document.body.scrollHeight")
            driver.set_window_size(1400, min(max(int(height), 900), 12000))
            name = os.path.splitext(os.path.basename(path))[0]
            if name == "index":
                name = os.path.basename(folder) or "index"
            shot = os.path.join(a.shots or folder, name + ".png")
            driver.save_screenshot(shot)
            share = blank_share(shot)
            ok = not errors and not outside and share >= 0.02
            failed += not ok
            print(f"{'ok  ' if ok else 'FAIL'} {page}: {len(errors)} console errors, {len(outside)} requests outside "
                  f"its folder, screenshot {shot} {100 * share:.1f}% non-background")
            for m in errors:
                print(f"     console: {m['message']}")
            for u in outside:
                print(f"     request: {u}")
    finally:
        driver.quit()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
