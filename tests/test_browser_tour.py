"""The guided tour in headless Chromium: `streamlit run app.py` on a free port (fake model). One click from the
landing page opens it; one bar steps every scheduler's stage together; the parting the stage tells is the one
viz/tour.py builds from the runs; another stop brings its own stages, from step 0; it reads in Chinese; and with a
fifth kind registered in the server's factory (tests/helpers/fifth_kind.py) its five stages stand in two rows at
1280x720. Screenshots at 1280x720 go to artifacts/ for a person to look at."""

import os
from pathlib import Path

import pytest

from engine.analysis.tour import STOPS, run_stop
from engine.inputs.scenario import SCENARIOS_DIR, load_scenario
from i18n import text
from scheduler.factory import SCHEDULERS
from tests.helpers.browser import ARTIFACTS, LOCKSTEP, NEEDS_CHROMIUM, lockstep_shown, settled
from tests.helpers.fifth_kind import KIND, register
from tests.helpers.source import ROOT
from viz.tour import explained

pytestmark = NEEDS_CHROMIUM


def stop_told(stop, lang: str):
    runs = run_stop(stop, load_scenario(SCENARIOS_DIR / f"{stop.preset}.toml"))
    return runs, explained([(run.label, run.frames) for run in runs], lang=lang)


def test_one_click_from_the_landing_page_and_every_stage_steps_together(fake_server, browser):
    runs, told = stop_told(STOPS[0], "en")
    page = browser.new_page()
    page.set_viewport_size({"width": 1280, "height": 720})
    page.goto(f"{fake_server}/?present=0")
    page.get_by_role("link", name=text("en", "tour.pointer_link")).click()  # the landing page's pointer
    page.locator(LOCKSTEP).wait_for(timeout=60_000)
    assert page.url.split("?")[0].endswith("/Tour")
    root = page.locator(LOCKSTEP)
    stages = root.locator("[data-testid=stage-player]")
    assert stages.count() == len(SCHEDULERS) == len(runs)
    assert lockstep_shown(page) == (0, [0] * len(runs))
    for _ in range(2):
        root.get_by_role("button", name="Step", exact=True).click()
    assert lockstep_shown(page) == (2, [2] * len(runs))
    for stage, run in zip(stages.all(), runs, strict=True):  # each stage draws its own run's frame
        frame = run.frames[2]
        assert stage.evaluate("root => root.player.drawn.owners") == \
            [list(frame.block_owners(b.id)) for b in frame.blocks]
    root.get_by_role("button", name="Next parting ▶").click()
    first = told[0]
    assert lockstep_shown(page) == (first.step, [first.step] * len(runs))
    said = root.locator(".sp-ls-said").inner_text()
    assert first.sentence in said and all(why in said for run in first.runs for why in run.why)
    page.keyboard.press("ArrowLeft")
    assert lockstep_shown(page) == (first.step - 1, [first.step - 1] * len(runs))
    links = page.locator("[data-testid=stMarkdownContainer] a[href^='https://github.com/']")
    assert links.count() >= sum(len(run.links) for run in first.runs)
    page.keyboard.press("End")  # a run that ended earlier stays on its last frame
    last = max(len(run.frames) for run in runs) - 1
    assert lockstep_shown(page) == (last, [min(last, len(run.frames) - 1) for run in runs])
    assert page.locator("[data-testid=stException]").count() == 0
    page.close()


def test_another_stop_brings_its_own_stages(fake_server, browser):
    stop = STOPS[-1]
    runs, told = stop_told(stop, "en")
    page = browser.new_page()
    page.set_viewport_size({"width": 1280, "height": 720})
    page.goto(f"{fake_server}/Tour")
    page.locator(LOCKSTEP).wait_for(timeout=60_000)
    page.locator(LOCKSTEP).get_by_role("button", name="Step", exact=True).click()  # the first stop at step 1
    page.locator("[data-testid=stButtonGroup]").get_by_text(
        f"{len(STOPS)}. {text('en', f'tour.stop.{stop.id}.title')}", exact=True).click()
    page.wait_for_function(f"() => document.querySelector('{LOCKSTEP} .sp-ls-slider')?.max === '"
                           f"{max(len(run.frames) for run in runs) - 1}'", timeout=60_000)
    root = page.locator(LOCKSTEP)
    assert lockstep_shown(page) == (0, [0] * len(runs))  # another stop opens at its step 0
    assert root.locator(".sp-ls-marks button").count() == len(told)
    root.get_by_role("button", name="Next parting ▶").click()
    assert lockstep_shown(page) == (told[0].step, [told[0].step] * len(runs))
    assert told[0].sentence in root.locator(".sp-ls-said").inner_text()
    page.close()


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_screenshots_of_the_tour_at_its_first_parting(fake_server, browser, lang):
    """For a person to look at: the first stop at its first parting on a projector (1280x720, sidebar closed)."""
    _, told = stop_told(STOPS[0], lang)
    ARTIFACTS.mkdir(exist_ok=True)
    page = browser.new_page()
    page.set_viewport_size({"width": 1280, "height": 720})
    page.goto(f"{fake_server}/Tour?present=1&lang={lang}")
    root = page.locator(LOCKSTEP)
    root.wait_for(timeout=60_000)
    assert root.get_attribute("lang") == lang
    root.locator("[data-action=next-parting]").click()
    said = root.locator(".sp-ls-said")
    assert told[0].whole in said.inner_text().replace("\n", "")
    settled(page, LOCKSTEP)
    box = said.bounding_box()
    assert box["y"] + box["height"] <= 720, "the parting's words are below the fold"
    page.screenshot(path=ARTIFACTS / f"tour_{lang}_1280x720.png")
    page.close()


@pytest.fixture(scope="module")
def five_kinds_server():
    """The app on the fake model with the fifth kind registered in its factory as the server starts (the site
    module of tests/helpers/fifth_kind_site/ on its PYTHONPATH)."""
    from tools.app_server import app_server

    site = Path(__file__).parent / "helpers" / "fifth_kind_site"
    path = os.pathsep.join(filter(None, (str(site), str(ROOT), os.environ.get("PYTHONPATH"))))
    with app_server("fake", env={"PYTHONPATH": path}) as (url, _process):
        yield url


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_fifth_kind_joins_the_tour_and_five_stages_stand_in_two_rows_at_1280x720(five_kinds_server, browser,
                                                                                   monkeypatch, lang):
    """Five stages at 1280x720 (the sidebar closed): three, then two below, each as wide as the others and no
    narrower than a stage reads; one bar steps all five, each drawing its own run's frame; the first parting is
    told; a screenshot for a person to look at."""
    register(monkeypatch.setitem)  # the same runs here, to check the page against
    runs, told = stop_told(STOPS[0], lang)
    assert [run.label for run in runs][-1] == KIND and len(runs) == 5
    page = browser.new_page()
    page.set_viewport_size({"width": 1280, "height": 720})
    page.goto(f"{five_kinds_server}/Tour?present=1&lang={lang}")
    root = page.locator(LOCKSTEP)
    root.wait_for(timeout=60_000)
    stages = root.locator("[data-testid=stage-player]")
    assert stages.count() == 5
    boxes = [column.bounding_box() for column in root.locator(".sp-ls-column").all()]
    rows = sorted({round(box["y"]) for box in boxes})
    assert [sum(round(box["y"]) == y for box in boxes) for y in rows] == [3, 2]
    assert max(b["width"] for b in boxes) - min(b["width"] for b in boxes) < 2 and boxes[0]["width"] >= 260
    for _ in range(2):
        root.locator(".sp-ls-bar [data-action=step]").click()
    assert lockstep_shown(page) == (2, [2] * 5)
    for stage, run in zip(stages.all(), runs, strict=True):
        frame = run.frames[2]
        assert stage.evaluate("root => root.player.drawn.owners") == \
            [list(frame.block_owners(b.id)) for b in frame.blocks]
    root.locator("[data-action=next-parting]").click()
    assert lockstep_shown(page) == (told[0].step, [told[0].step] * 5)
    assert told[0].whole in root.locator(".sp-ls-said").inner_text().replace("\n", "")
    settled(page, LOCKSTEP)
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=ARTIFACTS / f"tour_five_kinds_{lang}_1280x720.png")
    root.locator(".sp-ls-column").nth(3).evaluate("""c => {  // the second row's top just under the sticky bar
      c.scrollIntoView({block: 'start'});
      const bar = c.closest('.sp-ls').querySelector('.sp-ls-bar').getBoundingClientRect();
      document.querySelector('[data-testid=stMain]').scrollBy(0, -bar.bottom - 8); }""")
    settled(page, LOCKSTEP)
    page.screenshot(path=ARTIFACTS / f"tour_five_kinds_{lang}_1280x720_second_row.png")
    assert page.locator("[data-testid=stException]").count() == 0
    page.close()
