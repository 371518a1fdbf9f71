"""What a projector and a learner see, in headless Chromium on the real page (fake model): what is above the fold
at 1280x720 on the preemption lessons, preset 08 and the article's presets in both languages, the block tip on top
of the page, the narration's size on a wide screen, the URL after Pause, the file uploader's words. Screenshots go
to artifacts/ for a person to look at."""


import pytest

from tests.helpers.browser import ARTIFACTS, NEEDS_CHROMIUM, PLAYER, open_page, settled, wait_for_frame

pytestmark = NEEDS_CHROMIUM

FOLD = 720


def screen(page) -> dict:
    """Where the stage's parts are (top and bottom in px from the window's top) and what is cut."""
    return page.evaluate("""() => { const root = document.querySelector('[data-testid=stage-player]');
      const box = s => { const e = root.querySelector(s); if (!e) return null; const r = e.getBoundingClientRect();
                         return [r.top, r.bottom]; };
      return {grid: box('.sp-grid'), pool_title: box('.sp-ptitle'), narration: box('.sp-narration li'),
              waiting_title: box('.sp-waiting .sp-qtitle'),
              running: [...root.querySelectorAll('.sp-running .sp-row')].map(r => r.getBoundingClientRect().bottom),
              firsts: [...root.querySelectorAll('.sp-running .sp-row')].map(
                r => [...r.querySelectorAll('.sp-tok')].slice(0, 3).map(c => c.innerText).join('|')),
              // a line is cut when more than half of one is hidden: glyphs of a CJK face beside a Latin one
              // overflow their line box by a pixel or two, which hides nothing
              cut_flags: [...root.querySelectorAll('.sp-flag')].filter(f => f.scrollWidth > f.clientWidth + 1
                || f.scrollHeight > f.clientHeight + parseFloat(getComputedStyle(f).lineHeight) / 2)
                .map(f => f.innerText)}; }""")


PRESETS = {"02_preemption": 5, "article_2_preemption": 9, "article_1_prefill_first": 16,
           "article_3_decode_first": 6, "08_chat_poisson": 30}
PREEMPTION_LESSONS = ("02_preemption", "article_2_preemption")


@pytest.mark.parametrize("present", [False, True], ids=["laptop", "projector"])
@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("name", list(PRESETS))
def test_what_a_projector_shows_above_the_fold(fake_server, browser, name, lang, present):
    """At 1280x720: the queues and the narration above the fold; a preemption lesson's whole KV pool too (it
    sits beside the queues, no empty running rows above it); preset 08 more than 4 of its 10 running requests, rows
    that do not all start alike; a running request's "sits out" reason never cut."""
    frame = PRESETS[name]
    link = f"lang={lang}&scenario={name}&frame={frame}" + ("&present=1" if present else "")
    page = open_page(browser, f"{fake_server}/?{link}", 1280, FOLD)
    settled(page, PLAYER)
    seen = screen(page)
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=ARTIFACTS / f"fold_{name}_{lang}_{'projector' if present else 'laptop'}.png")
    page.close()
    for part in ("waiting_title", "narration"):
        assert seen[part][0] < FOLD, f"{part} is below the fold: {seen}"
    if name in PREEMPTION_LESSONS:
        assert seen["grid"][1] <= FOLD, f"the KV pool is below the fold: {seen}"
    if name == "08_chat_poisson":
        assert sum(bottom <= FOLD for bottom in seen["running"]) > 4, seen
        assert len(set(seen["firsts"])) > 1, f"every row starts alike: {seen['firsts']}"
    assert seen["cut_flags"] == []


def test_the_block_tip_is_on_top_of_the_page_below_the_stage(fake_server, browser):
    """Hovering the last blocks of a large pool: the tip is drawn over the "Run N steps" row and the views below
    the stage, not under them, and stays inside the window."""
    page = open_page(browser, f"{fake_server}/?scenario=08_chat_poisson&frame=20", 1600, 1000)
    page.get_by_role("button", name="Run N steps ▶▶").scroll_into_view_if_needed()
    grid = page.locator(".sp-grid").bounding_box()
    page.mouse.move(grid["x"] + 10, grid["y"] + grid["height"] - 5)
    page.locator(".sp-tip").wait_for(state="visible")
    tip = page.evaluate("""() => { const tip = document.querySelector('.sp-tip'), r = tip.getBoundingClientRect();
      tip.style.pointerEvents = 'auto';  // (it lets the pointer through to the grid; here it must be found)
      const points = [[r.left + 8, r.top + 8], [r.right - 8, r.bottom - 8], [r.left + 8, r.bottom - 8]];
      const found = points.map(([x, y]) => tip.contains(document.elementFromPoint(x, y)));
      tip.style.pointerEvents = '';
      return {found, inside: r.bottom <= innerHeight && r.right <= innerWidth && r.top >= 0}; }""")
    page.close()
    assert tip == {"found": [True, True, True], "inside": True}


def test_the_narration_is_larger_on_a_wide_screen(fake_server, browser):
    """At 1920x1080 every line of the narration (its summary and its points) is at least 17 px."""
    page = open_page(browser, f"{fake_server}/?scenario=02_preemption&frame=5", 1920, 1080)
    sizes = page.evaluate("""() => [...document.querySelectorAll('.sp-narration :is(p, li)')].map(
      e => parseFloat(getComputedStyle(e).fontSize))""")
    page.close()
    assert len(sizes) >= 2 and min(sizes) >= 17, sizes


def test_the_url_follows_a_pause_after_play(fake_server, browser):
    """Play stopped at key frame 1, then Play again and Pause further on: the URL names the frame paused at."""
    page = open_page(browser, f"{fake_server}/?scenario=08_chat_poisson&frame=0", 1280, FOLD)
    page.locator(".sp-speed").select_option("20")
    page.get_by_label("pause at key frames").check()
    play = page.locator("[data-action=play]")
    play.click()
    wait_for_frame(page, 1)
    page.wait_for_function("() => location.search.includes('frame=1')", timeout=10_000)
    page.get_by_label("pause at key frames").uncheck()
    play.click()
    page.wait_for_function(f"() => Number(document.querySelector('{PLAYER}').dataset.frame) >= 27", timeout=60_000)
    play.click()
    shown = page.locator(PLAYER).get_attribute("data-frame")
    page.wait_for_function(f"() => location.search.includes('frame={shown}&') || location.search.endsWith("
                           f"'frame={shown}')", timeout=10_000)
    page.close()


def test_the_file_uploader_speaks_chinese(fake_server, browser):
    page = open_page(browser, f"{fake_server}/?lang=zh&scenario=02_preemption", 1280, 900)
    page.get_by_text("打开轨迹").first.click()
    zone = page.locator("[data-testid=stFileUploaderDropzone]")
    zone.wait_for()
    words = zone.evaluate("""z => [z.querySelector('button p'),
      z.querySelector('[data-testid=stFileUploaderDropzoneInstructions] span')].map(
      e => getComputedStyle(e, '::after').content + ' ' + getComputedStyle(e).fontSize)""")
    page.close()
    assert words == ['"上传" 0px', '"每个文件不超过 20 MB • JSON" 0px']


BUDGET_JS = """() => { const root = document.querySelector('[data-testid=stage-player]');
  const box = s => root.querySelector(s);
  const rect = e => { const r = e.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
  return {title: box('.sp-btitle').innerText, cut: box('.sp-btitle').scrollWidth > box('.sp-btitle').clientWidth + 1,
          used: box('.sp-bbar').dataset.used, bar: rect(box('.sp-bbar')), queue: rect(box('.sp-running .sp-qtitle')),
          story: rect(box('.sp-story')), held: box('.sp-bheld') && box('.sp-bheld').title,
          segments: [...root.querySelectorAll('.sp-bseg')].map(e => [e.className.replace('sp-bseg ', ''),
            Number(e.style.flexGrow), e.title, e.getBoundingClientRect().width])}; }"""


def _apart(a, b) -> bool:
    return a[2] <= b[0] or b[2] <= a[0] or a[3] <= b[1] or b[3] <= a[1]


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("scheduler", ["article", "vllm"])
def test_the_token_budget_bar_at_a_known_frame(fake_server, browser, scheduler, lang):
    """Preset 04's variant, step 6, under either scheduler: four decodes and the second 60-token chunk of the
    240-token prompt fill the 64-token budget; the bar draws them in proportion, says so in the language, and
    overlaps neither the running queue nor the narration. Preset 07 under the twin, step 41: request 4 waits."""
    page = open_page(browser, f"{fake_server}/?lang={lang}&scenario=04_chunked_prefill&variant=1&frame=6"
                              f"&scheduler={scheduler}", 1280, FOLD)
    settled(page, PLAYER)
    bar = page.evaluate(BUDGET_JS)
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=ARTIFACTS / f"budget_04_{scheduler}_{lang}.png")
    page.goto(f"{fake_server}/?lang={lang}&scenario=07_smart_preemption&frame=41&scheduler=vllm")
    wait_for_frame(page, 41)
    held = page.evaluate(BUDGET_JS)
    page.close()
    words = {"en": ("Token budget · 64 of 64 tokens (100%)", "request 4: prefill chunk, 60 tokens · 120 of 240 prompt "
                    "tokens computed", "request 0: decode, 1 token", "request 4 waits: needs 12 tokens, 10 left"),
             "zh": ("token 预算 · 64 个 token 中用了 64 个（100%）",
                    "请求 4：预填充分段，60 个 token · 提示词 240 个 token 中已计算 120 个", "请求 0：解码，1 个 token",
                    "请求 4 等待：需要 12 个 token，只剩 10 个")}[lang]
    assert (bar["title"], bar["used"], bar["cut"]) == (words[0], "64", False)
    assert [(cls, n) for cls, n, _tip, _width in bar["segments"]] == [("sp-bdecode", 1)] * 4 + [("sp-bprefill", 60)]
    assert (bar["segments"][4][2], bar["segments"][0][2]) == words[1:3]
    widths = [width for *_, width in bar["segments"]]
    assert abs(widths[4] / sum(widths) - 60 / 64) < 0.02
    assert _apart(bar["bar"], bar["queue"]) and _apart(bar["bar"], bar["story"]) and bar["bar"][3] < FOLD
    assert held["held"] == words[3] and held["segments"][-1][0] == "sp-bfree"


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_rows_cells_stop_before_its_progress_bar_beside_a_sits_out_reason(fake_server, browser, lang):
    """sglang_lpm_chat step 3 on the stepper page: 0 sits out; its cells, as many as fit beside the reason, end
    before its progress bar (the Chinese reason's characters, twice as wide as Latin ones, let them run under it)."""
    page = open_page(browser, f"{fake_server}/?lang={lang}&scenario=sglang_lpm_chat&frame=3", 1400, 1000)
    gaps = page.locator(PLAYER).locator(".sp-row.sp-sat").evaluate_all(
        "rows => rows.map(r => r.querySelector('.sp-progress').getBoundingClientRect().left"
        " - Math.max(...[...r.querySelectorAll('.sp-tok')].map(c => c.getBoundingClientRect().right)))")
    assert gaps and all(gap >= 0 for gap in gaps), gaps
    page.close()
