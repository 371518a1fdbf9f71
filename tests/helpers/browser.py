"""Driving the real page in headless Chromium (Debian's chromium through Playwright): where screenshots go, the
stage player's root, waiting for a frame, opening a page; the `fake_server` and `browser` fixtures are in
tests/conftest.py."""

import os
from contextlib import contextmanager
from pathlib import Path

import pytest

from viz.html_export import CHROMIUM, CHROMIUM_ARGS

ARTIFACTS = Path(__file__).resolve().parents[2] / "artifacts"
PLAYER = "[data-testid=stage-player]"
NEEDS_CHROMIUM = [pytest.mark.slow, pytest.mark.skipif(not os.path.exists(CHROMIUM),
                                                      reason=f"{CHROMIUM} is not installed (Debian chromium)")]


def wait_for_frame(page, step: int):
    page.wait_for_function(f"() => document.querySelector('{PLAYER}')?.dataset.frame === '{step}'", timeout=30_000)


def open_page(browser, url: str, width: int = 1440, height: int = 900):
    page = browser.new_page()
    page.set_viewport_size({"width": width, "height": height})
    page.goto(url)
    query = dict(part.split("=") for part in url.split("?")[1].split("&"))
    wait_for_frame(page, int(query.get("frame", 0)))
    return page


@contextmanager
def offline_page(html_path: Path, width: int, height: int):
    """A page of headless Chromium showing a file, every request but the file's own refused; yields the page and
    the list of addresses it tried to fetch (an offline export fetches none)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": width, "height": height})
            fetched = []
            page.route("**/*", lambda route: (fetched.append(route.request.url), route.abort())
                       if not route.request.url.startswith("file:") else route.continue_())
            page.goto(html_path.as_uri())
            yield page, fetched
        finally:
            browser.close()
