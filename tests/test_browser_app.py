"""The real page in headless Chromium: `streamlit run app.py` on a free port (fake model), driven with
Playwright. The figures' data is read from the page's Plotly elements and checked against the same scenario
run by the engine alone. Screenshots go to artifacts/ for a person to look at."""

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from engine.scenario import SCENARIOS_DIR, load_scenario
from scheduler import Config
from session.lab import CustomSetup, Lab, RunInputs

CHROMIUM = "/usr/bin/chromium"
ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "artifacts"
BROWSER_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                "--disable-sync", "--no-first-run"]
FIGURES_JS = ("() => Array.from(document.querySelectorAll('.js-plotly-plot'))"
              ".map(el => [el.layout.title.text.replace(/<[^>]*>/g, ''), el.layout.meta || {}])")

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not os.path.exists(CHROMIUM), reason=f"{CHROMIUM} is not installed (Debian chromium)")]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server():
    port = free_port()
    env = dict(os.environ, SCHEDLAB_RUNNER="fake")
    process = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true", "--server.port", str(port),
         "--browser.gatherUsageStats", "false"], cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        deadline = time.time() + 60
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2) as reply:
                    if reply.status == 200:
                        break
            except OSError:
                if process.poll() is not None or time.time() > deadline:
                    raise RuntimeError(f"streamlit did not start: {process.stdout.read().decode()[-2000:]}") from None
                time.sleep(0.3)
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture(scope="module")
def browser():
    """One browser context for every page, so Streamlit's frontend is downloaded and compiled once; each page
    is still its own Streamlit session."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=BROWSER_ARGS)
        try:
            yield chromium.new_context()
        finally:
            chromium.close()


def figures(page) -> dict:
    """Title start ("Running queue", "KV cache", ...) -> the figure's layout.meta."""
    return {title.split(" ·")[0]: meta for title, meta in page.evaluate(FIGURES_JS)}


def wait_for_step(page, step: int):
    """Until the queues and the block grid all draw frame `step`."""
    page.wait_for_function(
        "step => { const steps = Array.from(document.querySelectorAll('.js-plotly-plot'))"
        ".map(el => el.layout.meta && el.layout.meta.step).filter(s => s !== undefined);"
        " return steps.length === 3 && steps.every(s => s === step); }", arg=step, timeout=30_000)


def shown_step(page) -> int:
    return figures(page)["KV cache"]["step"]


def settled_step(page, quiet_ms: int = 1500, tries: int = 10) -> int:
    """The shown step once it has stayed the same for `quiet_ms`."""
    step = shown_step(page)
    for _ in range(tries):
        page.wait_for_timeout(quiet_ms)
        step, previous = shown_step(page), step
        if step == previous:
            return step
    raise AssertionError("the shown step never settled")


def assert_page_shows(page, frame):
    shown = figures(page)
    assert shown["Running queue"]["ids"] == list(frame.running)
    assert shown["Waiting queue"]["ids"] == list(frame.waiting)
    assert shown["KV cache"]["owners"] == [list(frame.block_owners(b.id)) for b in frame.blocks]
    assert shown["KV cache"]["ref_counts"] == [b.ref_count for b in frame.blocks]
    assert f"Frame {frame.step} of" in page.inner_text("[data-testid=stMain]")


def open_page(browser, url: str, width: int = 1440, height: int = 900):
    page = browser.new_page()
    page.set_viewport_size({"width": width, "height": height})
    page.goto(url)
    query = dict(part.split("=") for part in url.split("?")[1].split("&"))
    wait_for_step(page, int(query.get("frame", 0)))
    return page


def step_button(page):
    return page.get_by_role("button", name="Step ▶")


def test_step_play_pause_and_scrub_follow_the_scheduler(server, browser):
    ARTIFACTS.mkdir(exist_ok=True)
    expected = load_scenario(SCENARIOS_DIR / "02_preemption.toml", "fake").engine()
    expected.run()
    page = open_page(browser, f"{server}/?scenario=02_preemption")
    assert expected.step_count > 9, "the play/pause check needs a run longer than 9 steps"
    assert_page_shows(page, expected.frames[0])
    for step in (1, 2, 3):
        step_button(page).click()
        wait_for_step(page, step)
        assert_page_shows(page, expected.frames[step])
    assert figures(page)["KV cache"]["owners"] != [[], [], []]
    page.screenshot(path=ARTIFACTS / "laptop_1440x900_step3.png")

    play = page.locator(".st-key-playing label")  # the Play switch
    play.click()
    page.wait_for_function("() => document.body.innerText.includes('Frame 6 of')", timeout=30_000)
    play.click()
    page.wait_for_function("() => !document.querySelector('.st-key-playing input').checked", timeout=10_000)
    paused_at = settled_step(page)  # a step already under way when Pause was clicked still lands
    page.wait_for_timeout(2000)
    assert shown_step(page) == paused_at >= 6, "the page kept stepping after Pause"
    assert_page_shows(page, expected.frames[paused_at])

    thumb = page.get_by_role("slider")
    thumb.focus()
    thumb.press("Home")
    wait_for_step(page, 0)
    for _ in range(2):
        thumb.press("ArrowRight")
    wait_for_step(page, 2)
    assert_page_shows(page, expected.frames[2])
    assert "frame=2" in page.url
    page.close()


def test_two_sessions_step_independently(server, browser):
    solo = {name: load_scenario(SCENARIOS_DIR / f"{name}.toml", "fake").engine() for name in
            ("01_prefill_first", "02_preemption")}
    for engine in solo.values():
        engine.run(3)
    pages = {name: open_page(browser, f"{server}/?scenario={name}") for name in solo}
    for step in range(1, 4):
        for page in pages.values():  # interleaved: one click each, in turn
            step_button(page).click()
        for name, page in pages.items():
            wait_for_step(page, step)
            assert_page_shows(page, solo[name].frames[step])
    for page in pages.values():
        page.close()


def test_the_sidebar_follows_the_frame_across_a_settings_change(server, browser):
    """Stepping back past a mid-run change reruns the whole page, not just the stage, so the sidebar shows the
    settings of the frame moved to."""
    page = open_page(browser, f"{server}/?scenario=01_prefill_first&frame=3")
    page.get_by_text("Scheduler settings").click()
    box = page.get_by_role("spinbutton", name="max_num_seqs (requests per batch)")
    assert box.input_value() == "3"
    box.fill("2")
    box.press("Enter")
    page.wait_for_function("() => document.body.innerText.includes('Frame 3 of 3')", timeout=30_000)
    step_button(page).click()
    wait_for_step(page, 4)
    assert box.input_value() == "2"
    page.get_by_role("button", name="◀ Back").click()
    wait_for_step(page, 3)
    page.get_by_role("button", name="◀ Back").click()
    wait_for_step(page, 2)
    page.wait_for_function("() => document.querySelector('.st-key-cfg_max_num_seqs input').value === '3'",
                           timeout=30_000)
    page.close()


def test_the_optimisation_toggles_follow_the_frame(server, browser):
    """The same for overlapped scheduling: switched on at frame 3, it is off again two frames back."""
    page = open_page(browser, f"{server}/?scenario=01_prefill_first&frame=3")
    page.get_by_text("Beyond the scheduler").click()
    toggle = page.locator(".st-key-opt_overlap input")
    assert not toggle.is_checked()
    page.locator(".st-key-opt_overlap label").click()
    page.wait_for_function("() => document.body.innerText.includes('overlapped scheduling')", timeout=30_000)
    step_button(page).click()
    wait_for_step(page, 4)
    assert toggle.is_checked()
    for frame in (3, 2):
        page.get_by_role("button", name="◀ Back").click()
        wait_for_step(page, frame)
    page.wait_for_function("() => !document.querySelector('.st-key-opt_overlap input').checked", timeout=30_000)
    page.close()


def test_a_custom_setup_link_opens_the_same_run(server, browser):
    link = "scenario=custom&requests=6&prompts=random&max_tokens=5&arrivals=poisson&seed=3&max_num_seqs=2&frame=7"
    expected = Lab(RunInputs.from_custom(CustomSetup(6, "random", 5, "poisson"), Config(max_num_seqs=2), "fake", 3))
    expected.run(7)
    page = open_page(browser, f"{server}/?{link}")
    assert_page_shows(page, expected.frame)
    assert page.url.endswith(link) and page.locator("[data-testid=stAlert]").count() == 0
    page.close()


STRIP_JS = ("() => { const x = e => { const b = e.getBoundingClientRect(); return (b.left + b.right) / 2; };"
            " return [x(document.querySelector('.st-key-frame_slider [data-testid=stSliderThumbValue]').parentElement),"
            " Array.from(document.querySelectorAll('.key-frame-strip span[data-step]'))"
            ".map(m => [m.className, Number(m.dataset.step), x(m)])]; }")


@pytest.mark.parametrize("width", [1000, 1440, 1920])
def test_the_key_frame_strip_lines_up_with_the_slider(server, browser, width):
    """Each key frame's mark is where the slider's thumb stands at that frame, at every window width."""
    page = open_page(browser, f"{server}/?scenario=01_prefill_first&frame=20", width)
    for step in (1, 15):
        page.get_by_role("button", name=f"step {step}", exact=True).click()
        wait_for_step(page, step)
        page.wait_for_timeout(500)  # the thumb's move is animated
        thumb, marks = page.evaluate(STRIP_JS)
        assert [(kind, s) for kind, s, _ in marks] == [("strip-key", s) for s in (1, 2, 3, 15)] + [
            ("strip-current", step)]
        at = {s: x for kind, s, x in marks if kind == "strip-key"}
        assert abs(at[step] - thumb) < 1.0 and abs(marks[-1][2] - thumb) < 1.0
        assert at[2] - at[1] == pytest.approx(at[3] - at[2], abs=0.5)
    page.close()


def test_a_visit_to_the_policy_lab_keeps_the_stepper_where_it_was(server, browser):
    expected = load_scenario(SCENARIOS_DIR / "02_preemption.toml", "fake").engine()
    expected.run(5)
    page = open_page(browser, f"{server}/?scenario=02_preemption&frame=5&present=1")
    page.get_by_role("link", name="Policy lab").click()
    page.get_by_role("button", name="Run the comparison").wait_for(timeout=30_000)
    page.get_by_role("link", name="Scheduler stepper").click()
    wait_for_step(page, 5)
    assert_page_shows(page, expected.frames[5])
    assert page.locator(".st-key-presentation input").is_checked()
    assert page.locator("[data-testid=stException]").count() == 0
    page.close()


def test_presentation_mode_screenshots(server, browser):
    ARTIFACTS.mkdir(exist_ok=True)
    page = open_page(browser, f"{server}/?scenario=02_preemption&frame=2&present=1", 1920, 1080)
    assert figures(page)["Running queue"]["ids"] == [0, 1]
    page.screenshot(path=ARTIFACTS / "projector_1920x1080_frame2.png")
    page.close()
