"""The radix tree panel below an SGLang twin run's stage in headless Chromium, in the offline player (the same
player files as the app's stage, the handouts' and the lockstep stages'): at the golden run's step 4 a prefix hit
splits a node, and the panel draws the tree's nodes with the split, the lit prefix, the waiting queue, the budget
bar and the pool's slots."""

from dataclasses import replace

import pytest

from engine.inputs.scenario import SCENARIOS_DIR, load_scenario
from engine.run.engine import Engine
from i18n import text
from tests.helpers.browser import ARTIFACTS, NEEDS_CHROMIUM
from tools.golden_deltas import sglang_tree_run
from viz.handout import Handout
from viz.html_export import handout_html

pytestmark = NEEDS_CHROMIUM
SPLIT_STEP = 4
BLOCKS_VS_TREE = SCENARIOS_DIR / "vllm_blocks_vs_sglang_tree.toml"


def test_the_offline_player_draws_the_radix_tree(browser, tmp_path):
    engine = sglang_tree_run()
    view = engine.frames[SPLIT_STEP].panel("radix_tree")
    page = offline_page(browser, tmp_path, engine, SPLIT_STEP)
    panel = page.locator(".sh-stage [data-testid=tree-view]")
    assert panel.is_visible()
    drawn = panel.locator("[data-node]")
    assert drawn.count() == len(view["nodes"])
    (head, cut), = view["split"]
    assert "sp-t-split" in panel.locator(f"[data-node='{head}']").get_attribute("class")
    assert "sp-t-cut" in panel.locator(f"[data-node='{cut}']").get_attribute("class")
    _, _, path_ids = view["matched"][0]
    assert all("sp-t-lit" in panel.locator(f"[data-node='{n}']").get_attribute("class") for n in path_ids)
    assert panel.locator("[data-testid=tree-waiting] [data-rid]").count() == len(view["waiting"])
    assert panel.locator("[data-testid=tree-budget] .sp-t-seg").count() >= 2
    assert panel.locator("[data-testid=tree-pool] .sp-t-unit").count() == len(engine.frames[SPLIT_STEP].blocks)
    assert not page.locator(".sh-stage .sp-budget").is_visible()  # SGLang reads no max_num_batched_tokens: one budget
    ARTIFACTS.mkdir(exist_ok=True)
    panel.screenshot(path=ARTIFACTS / "tree_view_offline_split.png")
    page.close()


def preset_at(name: str, step: int) -> Engine:
    """The preset `name` run to `step`."""
    engine = Engine(load_scenario(SCENARIOS_DIR / f"{name}.toml").spec)
    engine.run(step)
    return engine


def offline_page(browser, tmp_path, engine: Engine, step: int, lang: str = "en", width: int = 1280):
    """The offline player of `engine`'s run at `step`, `width` px wide."""
    handout = Handout("radix tree", "", "fake model", engine.frames, lang, cursor=step, scheduler="sglang")
    path = tmp_path / "offline.html"
    path.write_text(handout_html(handout))
    page = browser.new_page()
    page.set_viewport_size({"width": width, "height": 900})
    page.goto(path.as_uri())
    page.wait_for_function(f"() => document.querySelector('.sh-stage').dataset.frame === '{step}'")
    return page


def test_a_leaf_evicted_with_its_parent_is_drawn_under_the_parents_ghost(browser, tmp_path):
    """sglang_evicted_prefix's step 5 evicts 0's last token, then the node above it, a leaf once its child is gone:
    both evicted nodes are drawn, the child under its parent's ghost."""
    step = 5
    engine = preset_at("sglang_evicted_prefix", step)
    evicted = engine.frames[step].panel("radix_tree")["evicted"]
    ids = {node[0] for node in evicted}
    (child, parent), = [node[:2] for node in evicted if node[1] in ids]  # 0's last token, under A's node
    page = offline_page(browser, tmp_path, engine, step)
    panel = page.locator(".sh-stage [data-testid=tree-view]")
    assert panel.locator("[data-evicted]").count() == len(evicted)
    slots = engine.frames[step].config.num_kvcache_blocks
    assert f"· {slots} token slots (and SGLang's padding slot 0) ·" in page.locator(".sh-stage .sp-ptitle").inner_text()
    assert panel.locator(f"li:has(> [data-evicted='{parent}']) [data-evicted='{child}']").count() == 1
    page.close()


def test_a_node_of_one_slot_says_slot(browser, tmp_path):
    """sglang_evicted_prefix's step 5 evicts 0's last token, one slot: its ghost says "slot 13", not "slots 13"; the
    node above it, of 12 slots, "slots 1–12"."""
    step = 5
    engine = preset_at("sglang_evicted_prefix", step)
    evicted = engine.frames[step].panel("radix_tree")["evicted"]
    (one, [slot]), (many, _) = sorted(([node[0], node[3]] for node in evicted),
                                      key=lambda node: len(node[1]))
    page = offline_page(browser, tmp_path, engine, step)
    panel = page.locator(".sh-stage [data-testid=tree-view]")
    assert f"slot {slot}" in panel.locator(f"[data-evicted='{one}']").inner_text().split("\n")
    assert "slots 1–12" in panel.locator(f"[data-evicted='{many}']").first.inner_text()
    page.close()


def test_a_nodes_slots_are_listed_with_the_languages_comma(browser, tmp_path):
    """sglang_retraction's step 9 inserts 0's outputs, in every other slot: in Chinese the node lists them as the
    narration lists slots, "槽位 9、11、13、…", not with Latin commas."""
    step = 9
    engine = preset_at("sglang_retraction", step)
    inserted, = engine.frames[step].panel("radix_tree")["inserted"]
    page = offline_page(browser, tmp_path, engine, step, "zh")
    node = page.locator(f".sh-stage [data-testid=tree-view] [data-node='{inserted}']")
    assert "槽位 9、11、13、…" in node.inner_text()
    page.close()


def test_the_tree_counts_empty_slots_as_the_kv_cache_title_does(browser, tmp_path):
    """sglang_retraction's step 9 leaves 9 slots empty and 11 cached in the tree, unlocked: the narration counts all
    20 as free, the KV cache title says "11 evictable (...), 9 empty slots", as the tree's head says "empty slots 9 of
    20", not "free slots 9" beside a narration of 20 free."""
    step = 9
    engine = preset_at("sglang_retraction", step)
    view = engine.frames[step].panel("radix_tree")
    page = offline_page(browser, tmp_path, engine, step)
    sizes = page.locator(".sh-stage [data-testid=tree-view] .sp-t-sizes").inner_text()
    assert f"empty slots {view['available_size']} of {view['size']}" in sizes
    title = page.locator(".sh-stage .sp-ptitle").inner_text()
    assert f"{view['evictable_size']} evictable (" in title and f"{view['available_size']} empty slots" in title
    page.close()


def test_the_budgets_key_tells_every_part_of_the_bar_however_thin(browser, tmp_path):
    """vllm_blocks_vs_sglang_tree's variant at step 7 admits 2, which takes 4 of the 37 slots the pass could give: its
    part of the budget bar is too thin for a word, yet the key under the bar tells it beside the reserve and what is
    left (37 - 0 - 4 = 33), each with the colour of its part."""
    step = 7
    engine = load_scenario(BLOCKS_VS_TREE).engine(variant=True)
    engine.run(step)
    budget = engine.frames[step].panel("radix_tree")["budget"]
    page = offline_page(browser, tmp_path, engine, step)
    key = page.locator(".sh-stage [data-testid=tree-budget-key]")
    taken = budget["total_offset"] - budget["reserve"]
    assert (budget["available_and_evictable"], budget["reserve"], taken, budget["rem_total_tokens"]) == (37, 0, 4, 33)
    items = key.locator("[data-part]")
    assert items.all_inner_texts() == ["reserve 0", "admitted 4", "left 33"]
    swatches = [item.locator(".sp-t-sw").evaluate("e => getComputedStyle(e).backgroundColor") for item in items.all()]
    parts = page.locator(".sh-stage [data-testid=tree-budget] .sp-t-seg")
    assert swatches[1:] == [part.evaluate("e => getComputedStyle(e).backgroundColor") for part in parts.all()]
    page.close()


def test_a_node_inserted_this_step_shows_its_whole_ring(fake_server, browser):
    """sglang_evicted_prefix's step 5 on the stepper page at 1400 px inserts 2's node, as wide as the tree's box: its
    green ring (a 2 px shadow) is inside the box, not cut off at its right edge, once the flash is over."""
    from tests.helpers.browser import PLAYER, open_page, settled

    page = open_page(browser, f"{fake_server}/?lang=en&scenario=sglang_evicted_prefix&frame=5", 1400, 1900)
    nodes = page.locator(PLAYER).locator("[data-testid=tree-nodes]")
    nodes.wait_for()
    settled(page, PLAYER)  # the new node's flash is over
    box, node = nodes.evaluate("b => [b.getBoundingClientRect().left + b.clientLeft + b.clientWidth,"
                               " b.querySelector('.sp-t-new').getBoundingClientRect().right]")
    assert node + 2 <= box + 0.5, (node, box)
    page.close()


def test_the_chinese_tree_lists_requests_with_the_chinese_comma(fake_server, browser):
    """sglang_lpm_chat step 3 in Chinese: the node 3 and 4 matched says "r3、r4 的前缀命中", not "r3, r4"."""
    from tests.helpers.browser import PLAYER, open_page

    page = open_page(browser, f"{fake_server}/?lang=zh&scenario=sglang_lpm_chat&frame=3", 1400, 1900)
    nodes = page.locator(PLAYER).locator("[data-testid=tree-nodes]")
    nodes.wait_for()
    assert "r3、r4 的前缀命中" in nodes.inner_text()
    page.close()


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_nodes_marks_are_told_apart(browser, tmp_path, lang):
    """sglang_lpm_chat's step 3 splits 0's node where 3 and 4 matched it: the head reads "split here · prefix hit of
    r3, r4", two marks, not "split here prefix hit of r3, r4" run together."""
    step = 3
    engine = preset_at("sglang_lpm_chat", step)
    (head, _), = engine.frames[step].panel("radix_tree")["split"]
    page = offline_page(browser, tmp_path, engine, step, lang)
    node = page.locator(f".sh-stage [data-testid=tree-view] [data-node='{head}']")
    hit = text(lang, "player.tree_hit", ids=text(lang, "player.tree_list_sep").join(["r3", "r4"]))
    assert f"{text(lang, 'player.tree_split')} · {hit}" in node.inner_text()
    page.close()



@pytest.mark.parametrize("page_size, lang, title, tip", [
    (1, "en", "· 36 token slots (and SGLang's padding slot 0) ·", ["slot {unit} · in use", "requests holding it: 1"]),
    (4, "en", "· 9 pages of 4 tokens (and SGLang's padding page 0) ·", ["page {unit} · in use",
                                                                        "requests holding it: 1"]),
    (1, "zh", "· 36 个 token 槽位（另有 SGLang 的填充槽位 0） ·", ["槽位 {unit} · 使用中", "持有它的请求：1 个"]),
])
def test_a_radix_trees_pool_is_drawn_in_its_own_units(browser, tmp_path, page_size, lang, title, tip):
    """Under the SGLang twin the KV cache's title, its legend, a unit's tip and the tables speak of token slots (pages
    when page_size is above 1), evictable ones and the requests holding them, as the tree panel does, not of vLLM's
    blocks, cached-free blocks and ref counts."""
    spec = load_scenario(SCENARIOS_DIR / "sglang_evicted_prefix.toml").spec
    spec = replace(spec, config=replace(spec.config, kvcache_block_size=page_size,
                                        num_kvcache_blocks=spec.config.num_kvcache_blocks // page_size))
    engine = Engine(spec)
    engine.run(4)  # requests 1 and 2 admitted, each holding units of its own
    page = offline_page(browser, tmp_path, engine, 4, lang)
    stage = page.locator(".sh-stage")
    assert title in stage.locator(".sp-ptitle").inner_text()
    assert "req_to_token_pool" in stage.locator(".sp-ttitle").inner_text()
    assert text(lang, "mark.tree.cached_free") in stage.locator(".sp-plegend").inner_text()
    assert stage.locator(".sp-legend .sp-hint").inner_text() == text(lang, "mark.tree.hint")
    wanted = tip[0].format(unit=engine.frames[4].requests[1].block_table[0])  # in the pool's first row
    assert hovered_tip(page, stage, wanted) == wanted and tip[1] in stage.locator(".sp-tip").inner_text()
    page.close()


def hovered_tip(page, stage, wanted: str) -> str:
    """The tip's first line once the pointer, moved right along the pool's first row, is over the unit `wanted`
    names."""
    grid = stage.locator(".sp-grid").bounding_box()
    first = ""
    for dx in range(2, int(grid["width"]), 3):
        page.mouse.move(grid["x"] + dx, grid["y"] + 4)
        first = stage.locator(".sp-tip").inner_text().split("\n")[0]
        if first == wanted:
            break
    return first


def test_the_tree_starts_in_view_of_a_laptops_stepper(fake_server, browser):
    """sglang_retraction's step 10 on the stepper at 1280x720: the radix tree panel sits under the queues, beside the
    narration, and starts within the first screen (it sat about 900 px below the fold, under the stage)."""
    from tests.helpers.browser import PLAYER, open_page

    page = open_page(browser, f"{fake_server}/?lang=en&scenario=sglang_retraction&frame=10", 1280, 720)
    tree = page.locator(PLAYER).locator("[data-testid=tree-view]")
    tree.wait_for()
    assert page.locator(PLAYER).locator(".sp-queues [data-testid=tree-view]").count() == 1
    top = tree.evaluate("e => e.getBoundingClientRect().top"
                        " - document.querySelector('.sp').getBoundingClientRect().top")
    assert top < 620, top  # from the top of the stage: its head, the queues, then the tree
    page.close()
