"""The classroom check in real browsers: 8 Chromium pages on one `streamlit run app.py` server
(tools/app_server.py; the fake model unless --model), each clicking the stage player's Step button ten times;
per click, the time until the player's root element shows the next frame (`data-frame`). A click within the
frames the player holds is answered in the browser; one beyond them (`data-last`) makes the player ask the
server for more. Prints p50/p95/max over all clicks and over each kind, and lost clicks (not taken, or no new
frame, within 20 s). Chromium is Debian's /usr/bin/chromium; the server listens on 127.0.0.1 only and
everything stops by itself. Here the browsers share the server's cores, so the figures overstate the
server's part.
Run: python -m bench.bench_classroom_browsers [--model] [--port N]
"""

import asyncio
import sys
import time

from playwright.async_api import Error as PlaywrightError

from bench.browser import async_chromium
from bench.stats import spread
from tools.app_server import app_server

PAGES, CLICKS, CLICK_TIMEOUT_S = 8, 10, 20
PLAYER = "[data-testid=stage-player]"


async def player_at(page) -> tuple[int, int]:
    """(data-frame, data-last) of the player; -1 while it has none."""
    frame, last = await page.evaluate(
        "s => { const e = document.querySelector(s); return e ? [e.getAttribute('data-frame'), "
        "e.getAttribute('data-last')] : [null, null]; }", PLAYER)
    return (int(frame) if frame not in (None, "") else -1), (int(last) if last not in (None, "") else -1)


async def shows_frame(page, frame: int, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if (await player_at(page))[0] == frame:
            return True
        await asyncio.sleep(0.02)
    return False


async def student(browser, url: str, local: list[float], asked: list[float]) -> int:
    """Clicks Step CLICKS times; returns the clicks lost."""
    page = await browser.new_page(viewport={"width": 1400, "height": 900})
    await page.goto(url)
    step = page.locator(PLAYER).get_by_role("button", name="Step", exact=True)
    await step.wait_for(timeout=120_000)
    await shows_frame(page, 0, 60)
    lost = 0
    for _ in range(CLICKS):
        before, last = await player_at(page)
        start = time.perf_counter()
        try:
            await step.click(timeout=CLICK_TIMEOUT_S * 1000)
        except PlaywrightError:  # the button never took the click
            lost += 1
            continue
        if await shows_frame(page, before + 1, CLICK_TIMEOUT_S):
            (local if before + 1 <= last else asked).append(time.perf_counter() - start)
        else:  # the player never showed the next frame: a lost click
            lost += 1
        await asyncio.sleep(0.5)
    await page.close()
    return lost


def figures(latencies: list[float]) -> str:
    if not latencies:
        return "none"
    if len(latencies) == 1:
        return f"1 click, {latencies[0] * 1e3:.0f} ms"
    return f"{len(latencies)} clicks, {spread(latencies)}"


async def main():
    runner = "model" if "--model" in sys.argv else "fake"
    port = int(sys.argv[sys.argv.index("--port") + 1]) if "--port" in sys.argv else 0
    local: list[float] = []
    asked: list[float] = []
    with app_server(runner, start_timeout_s=120, port=port) as (base, _):
        async with async_chromium() as browser:
            url = f"{base}/?scenario=05_prefix_caching"
            lost = await asyncio.wait_for(
                asyncio.gather(*(student(browser, url, local, asked) for _ in range(PAGES))), timeout=600)
    model = "real" if runner == "model" else "fake"
    print(f"{PAGES} Chromium sessions, {model} model, preset 05, stage player, {CLICKS} Step clicks each: "
          f"click to next frame (data-frame) {figures(local + asked)}; lost clicks {sum(lost)} of "
          f"{PAGES * CLICKS} (target: 0 lost, p95 <= 3000 ms)")
    print(f"    answered in the browser (frame already held): {figures(local)}")
    print(f"    asked of the server (beyond data-last): {figures(asked)}")


if __name__ == "__main__":
    asyncio.run(main())
