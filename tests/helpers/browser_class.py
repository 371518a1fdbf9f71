"""A class in headless Chromium, as the class browser tests drive it: each page a browser of its own (its cookie:
who is who in the class) at 1280x720; the lecturer's page starting a class, a student naming themselves, a select's
option picked across the stage's reruns, a screenshot, the language switched, a sidebar's CSV downloaded."""

import csv
import io
import re

import pytest

from bench.browser import chromium as started_chromium
from tests.helpers.browser import ARTIFACTS, PLAYER, settled, wait_for_frame

WAIT_MS = 30_000


@pytest.fixture(scope="module")
def browser():
    """Chromium itself: each page it opens is a browser of its own (its cookies: who is who in the class)."""
    with started_chromium() as chromium:
        yield chromium


def opened(browser, url: str):
    page = browser.new_page()
    page.set_viewport_size({"width": 1280, "height": 720})
    page.goto(url)
    page.wait_for_selector(PLAYER, timeout=WAIT_MS)
    return page


def sidebar(page):
    return page.locator("[data-testid=stSidebar]")


def start_class(browser, url: str, scenario: str):
    """The lecturer's page on `scenario`, a class started in the sidebar: (page, code)."""
    page = opened(browser, f"{url}/?scenario={scenario}")
    wait_for_frame(page, 0)
    sidebar(page).get_by_text("Class", exact=True).click()
    page.get_by_role("button", name="Start a class").click()
    code_line = page.get_by_text(re.compile(r"^Class code: "))
    code_line.wait_for(timeout=WAIT_MS)
    return page, code_line.inner_text().split(": ")[1].strip()


def choose(page, box, option: str, done: str):
    """Pick `option` in the select `box` until the page says `done` (a rerun meanwhile may close the list)."""
    from playwright.sync_api import TimeoutError as NotYet

    for _ in range(5):
        try:
            box.scroll_into_view_if_needed()
            box.click()
            page.get_by_role("option", name=option).click(timeout=5_000)
            page.get_by_text(done).wait_for(timeout=5_000)
            return
        except NotYet:
            page.keyboard.press("Escape")
    raise AssertionError(f"{option} could not be picked")


def named(page, name: str, words: tuple[str, str]):
    """A student names themselves in the class (`words`: the name box's and its button's, in the page's language)."""
    page.get_by_role("textbox", name=re.compile(f"^{words[0]}")).fill(name)
    page.get_by_role("button", name=words[1]).click()
    page.get_by_text(re.compile(f"(You are {name} in this class|你在这堂课中的名字是 {name})")).wait_for(
        timeout=WAIT_MS)


def shoot(page, anchor: str, file: str):
    page.get_by_text(anchor).first.scroll_into_view_if_needed(timeout=WAIT_MS)
    settled(page)
    page.screenshot(path=ARTIFACTS / file)


def switch_language(page, to: str, shown: str):
    sidebar(page).get_by_text(to, exact=True).click()
    page.get_by_text(shown).first.wait_for(timeout=WAIT_MS)




def downloaded(page, button: str) -> list[dict]:
    """The CSV the sidebar's `button` downloads, as rows."""
    with page.expect_download() as download:
        sidebar(page).get_by_role("button", name=button).click()
    with open(download.value.path(), encoding="utf-8-sig") as f:
        return list(csv.DictReader(io.StringIO(f.read())))
