"""The policy lab's lockstep stages in headless Chromium: `streamlit run app.py` on a free port (fake model), preset
07 compared under tail and smart preemption, then one bar steps, scrubs and plays every config's stage together.
Screenshots go to artifacts/ for a person to look at."""

import pytest

from engine.analysis.partings import partings
from engine.inputs.scenario import SCENARIOS_DIR, load_scenario
from i18n import text
from tests.helpers.browser import ARTIFACTS, LOCKSTEP, NEEDS_CHROMIUM, lockstep_shown, open_lockstep, scroll_to, settled
from tests.helpers.engines import preset_comparison
from viz.compare_words import comparison_name

pytestmark = NEEDS_CHROMIUM


def open_comparison(browser, url: str, lang: str, width: int, height: int):
    """The lab with preset 07 compared under tail and smart preemption, its stages drawn."""
    return open_lockstep(browser, url, lang, load_scenario(SCENARIOS_DIR / "07_smart_preemption.toml").title_in(lang),
                         comparison_name("tail vs smart preemption", lang), width, height)


def test_one_bar_steps_every_stage_of_the_lab_together(fake_server, browser):
    runs = preset_comparison("07_smart_preemption", "tail vs smart preemption", lang="en")
    steps = [p.step for p in partings([run.frames for run in runs])]
    page = open_comparison(browser, fake_server, "en", 1600, 1000)
    root = page.locator(LOCKSTEP)
    assert lockstep_shown(page) == (0, [0, 0])
    assert root.locator(".sp-ls-marks button").count() == len(steps)
    for _ in range(3):
        root.get_by_role("button", name="Step", exact=True).click()
    assert lockstep_shown(page) == (3, [3, 3])
    for stage, run in zip(root.locator("[data-testid=stage-player]").all(), runs, strict=True):
        frame = run.frames[3]
        assert stage.evaluate("root => root.player.drawn.owners") == \
            [list(frame.block_owners(b.id)) for b in frame.blocks]
    page.keyboard.press("ArrowRight")
    assert lockstep_shown(page) == (4, [4, 4])
    root.get_by_role("button", name="Next parting ▶").click()
    assert lockstep_shown(page) == (steps[0], [steps[0]] * 2)
    assert root.locator(".sp-ls-said").inner_text().startswith("★ The decisions part here. Step")
    root.locator(".sp-ls-slider").fill("40")
    assert lockstep_shown(page) == (40, [40, 40])
    root.locator(".sp-ls-speed").select_option("20")
    root.get_by_role("button", name="Play", exact=True).click()
    page.wait_for_function("() => Number(document.querySelector('[data-testid=lockstep]').dataset.step) >= 60",
                           timeout=10_000)
    root.get_by_role("button", name="Pause", exact=True).click()
    step, frames = lockstep_shown(page)
    assert frames == [step, step]
    page.get_by_role("button", name="Build the offline animation (HTML)").click()  # a rerun keeps the stages
    page.get_by_role("button", name="Download the animation (HTML, opens without the app)").wait_for(timeout=120_000)
    assert lockstep_shown(page) == (step, [step, step])
    page.locator("[data-testid=stSidebar]").get_by_text("中文").click()  # the stages again, in Chinese, at that step
    page.wait_for_function(f"() => document.querySelector('{LOCKSTEP}')?.getAttribute('lang') === 'zh'",
                           timeout=60_000)
    assert lockstep_shown(page) == (step, [step, step])
    assert root.get_by_role("button", name="单步", exact=True).count() == 1
    assert page.locator("[data-testid=stException]").count() == 0
    page.close()


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_screenshots_of_the_stages_side_by_side(fake_server, browser, lang):
    """For a person to look at: both configs at their first parting, at 1280x720 and at 1600x1000."""
    ARTIFACTS.mkdir(exist_ok=True)
    page = open_comparison(browser, fake_server, lang, 1280, 720)
    root = page.locator(LOCKSTEP)
    root.locator("[data-action=next-parting]").click()
    step, frames = lockstep_shown(page)
    assert step > 0 and frames == [step, step]
    for width, height in ((1280, 720), (1600, 1000)):
        page.set_viewport_size({"width": width, "height": height})
        settled(page, LOCKSTEP)
        scroll_to(page.get_by_role("heading", name=text(lang, "lab.lockstep")))
        page.screenshot(path=ARTIFACTS / f"lab_lockstep_{lang}_{width}x{height}.png")
    page.close()


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_three_schedulers_stand_side_by_side_at_1400_px(fake_server, browser, lang):
    """sglang_lpm_chat under the three schedulers at 1400 px, the sidebar open: three stages in one row (not two, then
    the third under the first), each as wide as the others, each running queue's limit in its scheduler's words, a
    finished request's mark as small as its words; a screenshot for a person to look at."""
    title = load_scenario(SCENARIOS_DIR / "sglang_lpm_chat.toml").title_in(lang)
    three = comparison_name("article vs vllm vs sglang", lang)
    page = open_lockstep(browser, fake_server, lang, title, three, 1400, 900)
    root = page.locator(LOCKSTEP)
    root.locator("[data-action=next-parting]").click()
    step, frames = lockstep_shown(page)
    assert step == 3 and frames == [3, 3, 3]
    boxes = [stage.bounding_box() for stage in root.locator(".sp-ls-column").all()]
    assert len(boxes) == 3 and len({round(box["y"]) for box in boxes}) == 1
    assert max(box["width"] for box in boxes) - min(box["width"] for box in boxes) < 2
    # 0 sits step 3 out under the article's scheduler and SGLang's: in a 300 px column its reason ("sits out: batch
    # full, max_num_seqs=3") is read whole, not cut after two lines
    flags = root.locator(".sp-row .sp-flag").evaluate_all("fs => fs.map(f => [f.scrollHeight, f.clientHeight])")
    assert len(flags) == 2 and all(scroll <= client + 1 for scroll, client in flags), flags
    # the article's max_num_seqs caps a step's batch (4 run at step 3), the twins' the running requests
    titles = root.locator(".sp-running .sp-qtitle").all_inner_texts()
    for title, kind, name in zip(titles, ("article", "vllm", "sglang"),
                                 ("max_num_seqs", "max_num_seqs", "max_running_requests"), strict=True):
        assert text(lang, f"{kind}.queue_limit", n=3, name=name) in title.replace("\n", " "), title
    ARTIFACTS.mkdir(exist_ok=True)
    scroll_to(page.get_by_role("heading", name=text(lang, "lab.lockstep")))
    page.screenshot(path=ARTIFACTS / f"lab_lockstep_three_schedulers_{lang}_1400.png")
    # at step 6 the article's 1 and 2 have finished: in a 300 px column the mark takes a line under its row, and
    # stays a small mark there (its words' width), not a dark bar as wide as the column
    for _ in range(2):
        root.locator("[data-action=next-parting]").click()
    assert lockstep_shown(page)[0] == 6
    marks = root.locator(".sp-row.sp-flag-below .sp-done").evaluate_all(
        "ms => ms.map(m => [m.getBoundingClientRect().width, m.closest('.sp-row').getBoundingClientRect().width])")
    assert len(marks) == 2 and all(mark < row / 2 for mark, row in marks), marks
    assert page.locator("[data-testid=stException]").count() == 0
    page.close()


def test_three_schedulers_stand_side_by_side_at_1280_px_and_sglangs_tree_follows_its_narration(fake_server, browser):
    """At a laptop's 1280 px (the sidebar open) the three stages of sglang_retraction stay in one row (they wrapped
    two, then one); in a column that narrow SGLang's radix tree comes below its narration, as the other stages'
    tables do."""
    title = load_scenario(SCENARIOS_DIR / "sglang_retraction.toml").title_in("en")
    three = comparison_name("article vs vllm vs sglang", "en")
    page = open_lockstep(browser, fake_server, "en", title, three, 1280, 720)
    root = page.locator(LOCKSTEP)
    boxes = [stage.bounding_box() for stage in root.locator(".sp-ls-column").all()]
    assert len(boxes) == 3 and len({round(box["y"]) for box in boxes}) == 1
    sglang = root.locator(".sp-ls-column").nth(2)
    assert sglang.locator(".sp-panels .sp-tree").count() == 1 and sglang.locator(".sp-queues .sp-tree").count() == 0
    page.close()
