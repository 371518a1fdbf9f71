"""The classroom check in real browsers: 8 Chromium pages on one `streamlit run app.py` server (the fake model
unless --model), each clicking Step ten times; per click, the time until the page shows the next frame.
Prints p50/p95/max and lost clicks (not taken, or no new frame, within 20 s). Chromium is Debian's /usr/bin/chromium;
the server listens on 127.0.0.1 only and everything stops by itself. Here the browsers share the server's
cores, so the figures overstate the server's part.
Run: python bench/bench_classroom_browsers.py [--model]
"""

import asyncio
import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path
from statistics import quantiles

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import async_playwright

ROOT = Path(__file__).resolve().parent.parent
PAGES, CLICKS, CLICK_TIMEOUT_S = 8, 10, 20


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def frame_number(page) -> int:
    """The frame the header says is shown ("Frame k of n"), -1 while the page has none."""
    found = re.search(r"Frame (\d+) of", await page.inner_text("[data-testid=stMain]"))
    return int(found.group(1)) if found else -1


async def shows_frame(page, frame: int, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if await frame_number(page) == frame:
            return True
        await asyncio.sleep(0.05)
    return False


async def student(browser, url: str, latencies: list[float]) -> int:
    """Clicks Step CLICKS times; returns the clicks lost."""
    page = await browser.new_page(viewport={"width": 1400, "height": 900})
    await page.goto(url)
    await page.get_by_role("button", name="Step ▶").wait_for(timeout=120_000)
    await shows_frame(page, 0, 60)
    lost = 0
    for _ in range(CLICKS):
        before = await frame_number(page)
        start = time.perf_counter()
        try:
            await page.get_by_role("button", name="Step ▶").click(timeout=CLICK_TIMEOUT_S * 1000)
        except PlaywrightError:  # the button never took the click
            lost += 1
            continue
        if await shows_frame(page, before + 1, CLICK_TIMEOUT_S):
            latencies.append(time.perf_counter() - start)
        else:  # the page never showed the next frame: a lost click
            lost += 1
        await asyncio.sleep(0.5)
    return lost


async def main():
    runner = "model" if "--model" in sys.argv else "fake"
    port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true",
                               "--server.address", "127.0.0.1", "--server.port", str(port)],
                              cwd=ROOT, env=dict(os.environ, SCHEDLAB_RUNNER=runner),
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        async with async_playwright() as p:
            browser = await p.chromium.launch(executable_path="/usr/bin/chromium")
            latencies: list[float] = []
            url = f"http://127.0.0.1:{port}/?scenario=05_prefix_caching"
            lost = await asyncio.wait_for(asyncio.gather(*(student(browser, url, latencies) for _ in range(PAGES))),
                                          timeout=600)
            await browser.close()
    finally:
        server.terminate()
        server.wait(30)
    cuts = quantiles(sorted(latencies), n=100, method="inclusive")
    print(f"{PAGES} Chromium sessions, {runner} model, preset 05, {CLICKS} Step clicks each: click to next frame "
          f"p50 {cuts[49] * 1e3:.0f} ms, p95 {cuts[94] * 1e3:.0f} ms, max {max(latencies) * 1e3:.0f} ms; "
          f"lost clicks {sum(lost)} of {PAGES * CLICKS} (target: 0 lost, p95 <= 3000 ms)")


if __name__ == "__main__":
    asyncio.run(main())
