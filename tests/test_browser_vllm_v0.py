"""The V0 twin's stage in the app (fake model, 1280x720, en and zh): at the swap preset's swap-out step the swapped
request stands in the swapped queue, the CPU pool's cells it holds are coloured, its blocks fly from their GPU cells
to their CPU cells, and the narration tells the blocks V0 moved; the screenshots are for a person to look at."""

import pytest

from engine.inputs.scenario import SCENARIOS_DIR, load_scenario
from i18n import text
from tests.helpers.browser import ARTIFACTS, PLAYER, open_page, settled

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
