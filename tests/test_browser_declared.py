"""The stage draws whatever queues and pools a kind declares, in headless Chromium: the test-only kind of
tests/helpers/swap_demo.py (a swapped queue, a CPU pool) in the offline player and beside the article's scheduler in
the lockstep stages (the same player files as the app's stage and the handouts'). At its swap-out step the
swapped request's row stands in the swapped queue, the CPU pool's cells are coloured by the request holding them,
and each block copied flies from its GPU cell to its CPU cell."""

import pytest

from engine.run.engine import Engine
from engine.run.recipe import RunSpec
from tests.helpers import swap_demo
from tests.helpers.browser import ARTIFACTS, NEEDS_CHROMIUM
from tests.helpers.swap_demo import CONFIG, CPU_BLOCKS, CPU_POOL, KIND, SWAP_IN_AT, SWAP_OUT_AT, SWAPPED, WORKLOAD
from viz.html_export import animation_html

pytestmark = NEEDS_CHROMIUM


@pytest.fixture(scope="module")
def runs():
    with swap_demo.registered():
        swap = Engine(RunSpec(CONFIG, WORKLOAD, scheduler=KIND))
        swap.run()
        article = Engine(RunSpec(CONFIG, WORKLOAD))
        article.run()
        yield swap, article, animation_html([("swap", swap.frames)], lang="en"), \
            animation_html([("swap", swap.frames), ("article", article.frames)], lang="en")


def _page(browser, tmp_path, html: str):
    path = tmp_path / "page.html"
    path.write_text(html)
    page = browser.new_page()
    page.set_viewport_size({"width": 1280, "height": 720})
    page.goto(path.as_uri())
    return page


def test_the_stage_draws_the_swapped_queue_the_cpu_pool_and_each_block_flying(browser, tmp_path, runs):
    swap, _, single, _ = runs
    frame = swap.frames[SWAP_OUT_AT]
    (rid,) = frame.queue(SWAPPED)
    page = _page(browser, tmp_path, single)
    stage = page.locator("[data-testid=stage-player]")
    for _ in range(SWAP_OUT_AT):
        page.keyboard.press("ArrowRight")
    page.wait_for_function(f"() => document.querySelector('[data-testid=stage-player]').dataset.frame === "
                           f"'{SWAP_OUT_AT}'")
    flying = stage.locator(".sp-move")
    flying.first.wait_for(state="attached", timeout=2000)
    assert sorted((m.get_attribute("data-from"), m.get_attribute("data-to")) for m in flying.all()) == \
        sorted((f"{c.src_pool}:{c.src_block}", f"{c.dst_pool}:{c.dst_block}") for c in frame.block_copies)
    swapped = stage.locator(f".sp-queue[data-queue={SWAPPED}]")
    assert swapped.locator(".sp-qtitle").inner_text().startswith("Swapped queue")
    assert swapped.locator(".sp-row").evaluate_all("rows => rows.map(r => Number(r.dataset.rid))") == [rid]
    cells = stage.locator(f".sp-spool[data-pool={CPU_POOL}] .sp-scell")
    assert cells.count() == CPU_BLOCKS
    held = [u for u, holder in enumerate(frame.side_pools[CPU_POOL]) if holder == rid]
    assert [i for i in range(CPU_BLOCKS) if "sp-sfree" not in cells.nth(i).get_attribute("class")] == held
    assert cells.nth(held[0]).get_attribute("title") == f"CPU block {held[0]}: holds KV of request {rid}, swapped out"
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=ARTIFACTS / "declared_swap_queue_cpu_pool.png")
    flying.first.wait_for(state="detached", timeout=3000)  # a flight ends, its ghost gone
    page.keyboard.press("ArrowRight")  # the next frame copies nothing: no block flies
    page.wait_for_function(f"() => document.querySelector('[data-testid=stage-player]').dataset.frame === "
                           f"'{SWAP_OUT_AT + 1}'")
    assert stage.locator(".sp-move").count() == 0
    for _ in range(SWAP_IN_AT - SWAP_OUT_AT - 1):
        page.keyboard.press("ArrowRight")
    page.wait_for_function(f"() => document.querySelector('[data-testid=stage-player]').dataset.frame === "
                           f"'{SWAP_IN_AT}'")
    back = swap.frames[SWAP_IN_AT].block_copies  # its blocks fly back into GPU blocks, ringed there
    assert stage.evaluate("root => root.player.drawn.copied_in") == [c.dst_block for c in back]
    assert stage.locator(".sp-move").count() == len(back) and swapped.locator(".sp-row").count() == 0
    page.close()


def test_the_lockstep_stages_draw_a_kinds_own_queue_beside_one_without(browser, tmp_path, runs):
    swap, _, _, both = runs
    page = _page(browser, tmp_path, both)
    for _ in range(SWAP_OUT_AT):
        page.keyboard.press("ArrowRight")
    page.wait_for_function(f"() => document.querySelector('[data-testid=lockstep]').dataset.step === '{SWAP_OUT_AT}'")
    columns = page.locator(".sp-ls-column")
    (rid,) = swap.frames[SWAP_OUT_AT].queue(SWAPPED)
    assert columns.nth(0).locator(f".sp-queue[data-queue={SWAPPED}] .sp-row").get_attribute("data-rid") == str(rid)
    assert columns.nth(0).locator(f".sp-spool[data-pool={CPU_POOL}] .sp-scell").count() == CPU_BLOCKS
    assert columns.nth(1).locator(f".sp-queue[data-queue={SWAPPED}]").count() == 0
    assert columns.nth(1).locator(".sp-side").is_hidden()
    page.screenshot(path=ARTIFACTS / "declared_swap_lockstep.png", full_page=True)
    page.close()
