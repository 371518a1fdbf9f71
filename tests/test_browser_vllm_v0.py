"""The V0 twin's stage in the app (fake model, 1280x720, en and zh): at the swap preset's swap-out step the swapped
request stands in the swapped queue, the CPU pool's cells it holds are coloured, its blocks fly from their GPU cells
to their CPU cells, and the narration tells the blocks V0 moved; at the watermark preset's LATER step V0's card (its
phase and SchedulingBudget, drawn by the generic card renderer) stands beside the narration and the watermark is a
line on the GPU pool's gauge, in the app, the offline player and the lockstep stages alike; the screenshots are for a
person to look at."""

import pytest

from engine.inputs.scenario import SCENARIOS_DIR, load_scenario
from i18n import text
from scheduler.vllm_v0.panels import STEP_PANEL, WATERMARK_PANEL
from tests.helpers.browser import ARTIFACTS, PLAYER, open_page, settled
from viz.html_export import animation_html
from viz.panels import panel_views

NAME, OUT = "vllm_v0_swap_vs_recompute", 4


@pytest.fixture(scope="module")
def swap_out():
    engine = load_scenario(SCENARIOS_DIR / f"{NAME}.toml").engine()
    engine.run()
    return engine.frames[OUT]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_swapped_queue_the_cpu_pool_and_the_blocks_flying_at_a_swap_out(fake_server, browser, swap_out, lang):
    page = open_page(browser, f"{fake_server}/?lang={lang}&scenario={NAME}&frame={OUT}", 1280, 720)
    settled(page, PLAYER)
    stage = page.locator(PLAYER)
    swapped = stage.locator(".sp-queue[data-queue=swapped]")
    assert swapped.locator(".sp-qtitle").inner_text().startswith(text(lang, "player.swapped_queue"))
    assert swapped.locator(".sp-row").evaluate_all("rows => rows.map(r => Number(r.dataset.rid))") == [2]
    cells = stage.locator(".sp-spool[data-pool=cpu] .sp-scell")
    assert cells.count() == 4
    assert [i for i in range(4) if "sp-sfree" not in cells.nth(i).get_attribute("class")] == [0, 1]
    narration = stage.locator(".sp-narration").inner_text()
    assert ("GPU blocks 4, 5 copied to CPU blocks 0, 1" if lang == "en" else "GPU 块 4, 5 复制到 CPU 块 0, 1") \
        in narration
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=ARTIFACTS / f"vllm_v0_swap_out_{lang}.png")
    page.keyboard.press("ArrowLeft")  # back one frame and forward again: the step's copies fly
    page.wait_for_function(f"() => document.querySelector('{PLAYER}').dataset.frame === '{OUT - 1}'")
    page.keyboard.press("ArrowRight")
    page.wait_for_function(f"() => document.querySelector('{PLAYER}').dataset.frame === '{OUT}'")
    flying = stage.locator(".sp-move")
    flying.first.wait_for(state="attached", timeout=2000)
    assert sorted((m.get_attribute("data-from"), m.get_attribute("data-to")) for m in flying.all()) == \
        sorted((f"{c.src_pool}:{c.src_block}", f"{c.dst_pool}:{c.dst_block}") for c in swap_out.block_copies)
    page.screenshot(path=ARTIFACTS / f"vllm_v0_swap_out_flying_{lang}.png")
    page.close()


WATERMARK, LATER = "vllm_v0_watermark", 3


@pytest.fixture(scope="module")
def watermark_run():
    engine = load_scenario(SCENARIOS_DIR / f"{WATERMARK}.toml").engine()
    engine.run()
    return engine


def _drawn_as_sent(stage, frame, before, lang: str):
    """The stage's card and pool marks are the frame's panels as the server said them in `lang`."""
    views = dict(panel_views(frame, before, lang))
    card, marks = views[STEP_PANEL.id], views[WATERMARK_PANEL.id]["marks"]
    box = stage.locator("[data-testid=panel-card]")
    assert box.locator(".sp-card-title").inner_text() == card["title"]
    assert box.locator(".sp-card-line").all_inner_texts() == card["lines"]
    assert box.locator(".sp-meter-label").all_inner_texts() == [label for label, *_ in card["meters"]]
    bars = "bars => bars.map(b => [Number(b.dataset.used), Number(b.dataset.limit)])"
    assert box.locator(".sp-bar").evaluate_all(bars) == [[used, limit] for _, used, limit, _ in card["meters"]]
    gauge = stage.locator(".sp-pmarks")
    positions = "marks => marks.map(m => Number(m.dataset.at))"
    assert gauge.locator(".sp-bar-mark").evaluate_all(positions) == [at for at, _ in marks]
    assert gauge.locator(".sp-bar-note").all_inner_texts() == [said for _, said in marks]
    used = len(frame.blocks) - frame.metrics.num_free_blocks
    assert gauge.locator(".sp-bar").get_attribute("data-used") == str(used)  # the pool title's number in use
    return box, gauge


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_v0s_card_beside_the_narration_and_the_watermark_on_the_pool(fake_server, browser, watermark_run, lang):
    frame, before = watermark_run.frames[LATER], watermark_run.frames[LATER - 1]
    page = open_page(browser, f"{fake_server}/?lang={lang}&scenario={WATERMARK}&frame={LATER}", 1280, 720)
    settled(page, PLAYER)
    stage = page.locator(PLAYER)
    card, gauge = _drawn_as_sent(stage, frame, before, lang)
    assert card.evaluate("box => box.parentElement.classList.contains('sp-queues')")  # beside the narration
    canvas, mark = stage.locator(".sp-grid").bounding_box(), gauge.locator(".sp-bar-mark").bounding_box()
    assert abs(mark["x"] + mark["width"] / 2 - (canvas["x"] + canvas["width"] * 198 / 200)) < 2  # at 198 of 200
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=ARTIFACTS / f"vllm_v0_card_{lang}.png")
    gauge.scroll_into_view_if_needed()
    page.screenshot(path=ARTIFACTS / f"vllm_v0_watermark_{lang}.png")
    page.close()


def test_the_offline_player_and_the_lockstep_stages_draw_them_too(browser, watermark_run, tmp_path):
    frames = list(watermark_run.frames)
    for runs in ([("V0", frames)], [("V0", frames), ("V0 again", frames)]):
        path = tmp_path / f"{len(runs)}.html"
        path.write_text(animation_html(runs, lang="en"))
        page = browser.new_page()
        page.set_viewport_size({"width": 1280, "height": 720})
        page.goto(path.as_uri())
        for _ in range(LATER):
            page.get_by_role("button", name="Step", exact=True).first.click()
        stages = page.locator(PLAYER)
        assert stages.count() == len(runs)
        for i in range(len(runs)):
            page.wait_for_function(f"() => document.querySelectorAll('{PLAYER}')[{i}].dataset.frame === '{LATER}'")
            _drawn_as_sent(stages.nth(i), frames[LATER], frames[LATER - 1], "en")
        page.screenshot(path=ARTIFACTS / f"vllm_v0_offline_{len(runs)}.png", full_page=True)
        page.close()
