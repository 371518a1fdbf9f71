"""Driving the real page in headless Chromium (Debian's chromium through Playwright): where screenshots go, the
stage player's root, waiting for a frame, opening a page or the lab's lockstep stages; the `fake_server` and
`browser` fixtures are in tests/conftest.py."""

import os
from contextlib import contextmanager
from pathlib import Path

import pytest

from render.chromium import CHROMIUM, CHROMIUM_ARGS

ARTIFACTS = Path(__file__).resolve().parents[2] / "artifacts"
PLAYER = "[data-testid=stage-player]"
LOCKSTEP = "[data-testid=lockstep]"
NEEDS_CHROMIUM = [pytest.mark.browser, pytest.mark.skipif(not os.path.exists(CHROMIUM),
                                                      reason=f"{CHROMIUM} is not installed (Debian chromium)")]


def chromium_in_this_tier() -> bool:
    """Whether a test may also check its page in Chromium: installed, and not `make test-fast` (which leaves the
    browser out; the full suite runs that part)."""
    return os.path.exists(CHROMIUM) and os.environ.get("SCHEDLAB_TEST_TIER") != "fast"


def _on_frame(step: int) -> str:
    """A JS expression, true while the page's stage shows frame `step`."""
    return f"document.querySelector('{PLAYER}')?.dataset.frame === '{step}'"


def wait_for_frame(page, step: int):
    page.wait_for_function(f"() => {_on_frame(step)}", timeout=30_000)


def finished_whole_run(payload) -> bool:
    """Whether a websocket frame a page received is Streamlit's word that the page's script ran to its end (a whole
    run, not a fragment's, not one cut short by a rerun)."""
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    if isinstance(payload, str):
        return False
    message = ForwardMsg()
    message.ParseFromString(payload)
    return (message.WhichOneof("type") == "script_finished"
            and message.script_finished == ForwardMsg.FINISHED_SUCCESSFULLY)


@contextmanager
def reran(page, socket, timeout_ms: int = 30_000):
    """Around an action that makes the page run its script again (`socket`: the page's websocket): first waits
    until no run is going on (a change made during a run restarts that run), then, on leaving, until Streamlit says
    a whole run has finished after the action."""
    page.wait_for_function("() => document.querySelector('[data-testid=stApp]')?.dataset.testScriptState"
                           " === 'notRunning'", timeout=timeout_ms)
    with socket.expect_event("framereceived", predicate=finished_whole_run, timeout=timeout_ms):
        yield


def painted(page):
    """Returns once the page has painted what the last change drew (two animation frames later)."""
    page.evaluate("() => new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)))")


def scroll_to(locator, block: str = "start"):
    """`locator` scrolled into view at once (no smooth scrolling), painted there."""
    locator.evaluate(f"e => e.scrollIntoView({{block: '{block}', behavior: 'instant'}})")
    painted(locator.page)


def settled(page, selector: str = "body", timeout_ms: int = 30_000):
    """Returns once nothing under `selector` is moving: no CSS transition or finite animation running (a step's
    rows sliding, a node's flash, an expander opening), then painted."""
    page.wait_for_function(f"""() => (document.querySelector('{selector}')?.getAnimations({{subtree: true}}) || [])
      .every(a => a.playState !== 'running' || a.effect?.getComputedTiming().iterations === Infinity)""",
                           timeout=timeout_ms)
    painted(page)


def holds(page, condition_js: str, ms: int, what: str):
    """Asserts that `condition_js` (a JS expression) stays true on every animation frame for `ms`: that nothing
    happens (a paused player stays paused, followers left alone stay where they are)."""
    broken = page.evaluate(f"""() => new Promise(done => {{
      const end = performance.now() + {ms};
      const check = () => {{
        if (!({condition_js})) return done(performance.now() - (end - {ms}));
        if (performance.now() >= end) return done(null);
        requestAnimationFrame(check);
      }};
      check();
    }})""")
    assert broken is None, f"{what}: broken after {broken:.0f} ms"


def stays_on_frame(page, step: int, ms: int, what: str):
    """Asserts that the page's stage shows frame `step` on every animation frame for `ms` (see `holds`)."""
    holds(page, _on_frame(step), ms, what)


def open_page(browser, url: str, width: int = 1440, height: int = 900):
    page = browser.new_page()
    page.set_viewport_size({"width": width, "height": height})
    page.goto(url)
    query = dict(part.split("=") for part in url.split("?")[1].split("&"))
    wait_for_frame(page, int(query.get("frame", 0)))
    return page


def open_lockstep(browser, url: str, lang: str, preset_title: str, comparison: str, width: int = 1280,
                  height: int = 720):
    """The policy lab with the preset titled `preset_title` compared by the named `comparison` (its words in
    `lang`), its lockstep stages drawn."""
    page = browser.new_page()
    page.set_viewport_size({"width": width, "height": height})
    with page.expect_websocket() as connected:
        page.goto(f"{url}/Policy_lab?lang={lang}")
    boxes = page.locator("[data-testid=stSelectbox]")
    for i, name in enumerate((preset_title, comparison)):
        if boxes.nth(i).inner_text().strip() == name:  # chosen already (a preset's default comparison): no rerun
            continue
        boxes.nth(i).click()
        page.keyboard.type(name[:25])  # the list draws only the options in view: filter it down to this one
        with reran(page, connected.value):  # the page runs again with that choice
            page.get_by_role("option", name=name, exact=True).click()
    page.locator("[data-testid=stButton] button[kind=primary]").click()
    page.locator(LOCKSTEP).wait_for(timeout=120_000)
    return page


def lockstep_shown(page) -> tuple[int, list[int]]:
    """The step of the lockstep bar and the frame each stage shows."""
    return tuple(page.evaluate("""() => { const root = document.querySelector('[data-testid=lockstep]');
      return [Number(root.dataset.step), Array.from(root.querySelectorAll('[data-testid=stage-player]'))
        .map(s => Number(s.dataset.frame))]; }"""))


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
