"""Driving the real page in headless Chromium (Debian's chromium through Playwright): where screenshots go, the
stage player's root, waiting for a frame, opening a page; the `fake_server` and `browser` fixtures are in
tests/conftest.py."""

import os
from pathlib import Path

import pytest

from viz.html_export import CHROMIUM

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
