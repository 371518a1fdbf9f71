"""The one way a bench starts headless Chromium: Debian's browser through Playwright, with the path and flags the
app's own exports use (render.chromium's CHROMIUM and CHROMIUM_ARGS), so that every bench measures the same browser.
"""

from contextlib import asynccontextmanager, contextmanager

from render.chromium import CHROMIUM, CHROMIUM_ARGS


@contextmanager
def chromium():
    """A started headless Chromium (Playwright's sync API), closed with its driver after the `with`."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


@asynccontextmanager
async def async_chromium():
    """The same browser for Playwright's async API."""
    from playwright.async_api import async_playwright

    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            await browser.close()
