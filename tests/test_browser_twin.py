"""The vLLM twin in headless Chromium (fake model): the policy lab's lockstep stages with the article's scheduler
beside the twin on preset vllm_vs_article (the steps where they part marked, named and stepped together), and the
twin's presets on the stepper, its reasons and a resume from cached blocks. Screenshots at 1280x720 in English and
Chinese go to artifacts/ for a person to look at."""

import pytest

from engine.analysis.partings import partings
from engine.inputs.scenario import SCENARIOS_DIR, load_scenario
from i18n import text
from tests.helpers.browser import (
    ARTIFACTS,
    LOCKSTEP,
    NEEDS_CHROMIUM,
    PLAYER,
    lockstep_shown,
    open_lockstep,
    open_page,
    scroll_to,
    settled,
)
from tests.helpers.engines import preset_comparison
from viz.compare_words import comparison_name

pytestmark = NEEDS_CHROMIUM

VERSUS = load_scenario(SCENARIOS_DIR / "vllm_vs_article.toml")


def open_versus(browser, url: str, lang: str):
    """The lab at 1280x720 with preset vllm_vs_article compared under the article's scheduler and the twin."""
    return open_lockstep(browser, url, lang, VERSUS.title_in(lang), comparison_name("article vs vllm", lang))


def screenshot_of_stages(page, lang: str, name: str):
    ARTIFACTS.mkdir(exist_ok=True)
    scroll_to(page.get_by_role("heading", name=text(lang, "lab.lockstep")))
    page.screenshot(path=ARTIFACTS / name)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_article_beside_the_twin_parts_where_marked_and_steps_together(fake_server, browser, lang):
    runs = preset_comparison("vllm_vs_article", "article vs vllm", lang=lang)
    steps = [p.step for p in partings([run.frames for run in runs])]
    assert steps[0] == 3
    page = open_versus(browser, fake_server, lang)
    root = page.locator(LOCKSTEP)
    assert lockstep_shown(page) == (0, [0, 0])
    assert root.locator(".sp-ls-marks button").count() == len(steps)
    root.locator("[data-action=next-parting]").click()
    assert lockstep_shown(page) == (3, [3, 3])
    said = root.locator(".sp-ls-said").inner_text()
    if lang == "en":
        assert ("Step 3: the article's scheduler admits request 2 (8 tokens); the vLLM twin only runs its decode "
                "batch") in said
    else:
        assert "第 3 步：“文章的调度器”接纳了请求 2（8 个 token）；“vLLM 孪生调度器”只运行了它的解码批次" in said
    screenshot_of_stages(page, lang, f"lab_twin_vs_article_{lang}_step3.png")
    root.locator("[data-action=step]").first.click()  # the bar's (each stage has its own, hidden)
    assert lockstep_shown(page) == (4, [4, 4])
    for step in [s for s in steps if s > 4]:
        root.locator("[data-action=next-parting]").click()
        assert lockstep_shown(page) == (step, [step, step])
    screenshot_of_stages(page, lang, f"lab_twin_vs_article_{lang}_step12.png")
    root.locator(".sp-ls-slider").fill("14")  # the twin ended at 13: its stage stays on its last frame
    assert lockstep_shown(page) == (14, [14, 13])
    assert page.locator("[data-testid=stException]").count() == 0
    page.close()


FRAMES = {"vllm_resume_cached": (6, 7, 9), "vllm_pool_too_small": (11,)}


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("name", list(FRAMES))
def test_screenshots_of_the_twins_reasons_and_its_resume_from_cached_blocks(fake_server, browser, name, lang):
    """For a person to look at: the twin's reasons in the narration (no admission in a step that preempts, the
    whole sequence must fit, a request that can never fit) and request 1 finding its own cached blocks."""
    ARTIFACTS.mkdir(exist_ok=True)
    for frame in FRAMES[name]:
        page = open_page(browser, f"{fake_server}/?lang={lang}&scenario={name}&frame={frame}", 1280, 720)
        settled(page, PLAYER)
        narration = page.locator(f"{PLAYER} .sp-narration").inner_text()
        page.screenshot(path=ARTIFACTS / f"twin_{name}_{lang}_frame{frame}.png")
        scroll_to(page.locator(f"{PLAYER} .sp-narration"))
        page.screenshot(path=ARTIFACTS / f"twin_{name}_{lang}_frame{frame}_narration.png")
        if name == "vllm_pool_too_small":  # the sidebar's warning: vLLM would not start with this config
            alerts = page.locator("[data-testid=stSidebar] [data-testid=stAlert]")
            warning = alerts.filter(has_text="max_model_len = 32")
            scroll_to(warning)
            page.screenshot(path=ARTIFACTS / f"twin_{name}_{lang}_sidebar_warning.png")
            assert text(lang, "vllm.beyond_pool")[:20] in warning.inner_text()
        page.close()
        if (name, frame, lang) == ("vllm_resume_cached", 9, "en"):
            assert "Request 1 found 2 blocks (8 tokens) in the prefix cache and reuses them: blocks 3, 4." in narration
        if (name, frame, lang) == ("vllm_resume_cached", 6, "zh"):
            assert "vLLM 在这样的一步里不接纳任何等待中的请求" in narration
        if (name, frame, lang) == ("vllm_pool_too_small", 11, "en"):
            assert "Request 0 waits for good: it needs 5 blocks, more than the whole pool (4 blocks)." in narration
