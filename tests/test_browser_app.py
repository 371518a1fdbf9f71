"""The real page in headless Chromium: `streamlit run app.py` on a free port (fake model), driven with
Playwright. What the stage player draws (its DOM and the data it drew from) is checked against the same scenario
run by the engine alone. Screenshots go to artifacts/ for a person to look at."""



from engine.inputs.scenario import SCENARIOS_DIR, load_scenario
from scheduler import Config
from session.lab import CustomSetup, Lab, RunInputs
from tests.helpers.browser import (
    ARTIFACTS,
    NEEDS_CHROMIUM,
    PLAYER,
    holds,
    open_page,
    settled,
    stays_on_frame,
    wait_for_frame,
)

pytestmark = NEEDS_CHROMIUM


def drawn(page) -> dict:
    """What the player drew for the frame it shows: queue rows, block owners and ref counts, read from the page."""
    return page.evaluate("""() => { const root = document.querySelector('[data-testid=stage-player]');
      const rows = q => Array.from(root.querySelectorAll(`.sp-${q} .sp-row`)).map(r => Number(r.dataset.rid));
      return {frame: Number(root.dataset.frame), last: Number(root.dataset.last), running: rows('running'),
              waiting: rows('waiting'), owners: root.player.drawn.owners, refs: root.player.drawn.refs,
              caption: root.querySelector('.sp-caption').innerText}; }""")


def assert_page_shows(page, frame):
    shown = drawn(page)
    finished = [e.seq_id for e in frame.events if e.kind in ("finished", "finished_late", "aborted")]
    assert shown["frame"] == frame.step
    assert shown["running"] == list(frame.running[:8]) + [i for i in finished if i not in frame.waiting]
    assert shown["waiting"] == list(frame.waiting[:8])
    assert shown["owners"] == [list(frame.block_owners(b.id)) for b in frame.blocks]
    assert shown["refs"] == [b.ref_count for b in frame.blocks]
    assert shown["caption"].startswith(f"Frame {frame.step} of")


def step_button(page):
    return page.get_by_role("button", name="Step", exact=True)


def test_the_player_draws_every_frame_of_a_preset(fake_server, browser):
    """Keys walk the whole run: what the player draws matches the engine's frames."""
    ARTIFACTS.mkdir(exist_ok=True)
    expected = load_scenario(SCENARIOS_DIR / "02_preemption.toml", "fake").engine()
    expected.run()
    last = expected.step_count
    page = open_page(browser, f"{fake_server}/?scenario=02_preemption&frame={last}")
    assert drawn(page)["last"] == last
    page.keyboard.press("Home")
    wait_for_frame(page, 0)
    assert_page_shows(page, expected.frames[0])
    for step in range(1, last + 1):
        page.keyboard.press("ArrowRight")
        wait_for_frame(page, step)
        assert_page_shows(page, expected.frames[step])
    page.keyboard.press("ArrowLeft")
    wait_for_frame(page, last - 1)
    page.locator(".sp-slider").fill("3")  # scrubbing: the slider's input event
    wait_for_frame(page, 3)
    assert_page_shows(page, expected.frames[3])
    page.wait_for_function("() => location.search.includes('frame=3')", timeout=10_000)  # reported when paused
    page.screenshot(path=ARTIFACTS / "laptop_1440x900_frame3.png")
    page.keyboard.press("Home")
    page.get_by_label("pause at key frames").check()  # (keys typed into a control are the control's)
    page.get_by_role("button", name="Play", exact=True).click()
    wait_for_frame(page, 1)  # the scenario's first key frame
    page.get_by_role("button", name="Play", exact=True).wait_for()  # paused there
    stays_on_frame(page, 1, 1500, "the player stays on the key frame")
    page.close()


def test_fast_step_clicks_each_give_a_frame_and_play_pauses(fake_server, browser):
    expected = load_scenario(SCENARIOS_DIR / "08_chat_poisson.toml", "fake").engine()
    expected.run(20)
    page = open_page(browser, f"{fake_server}/?scenario=08_chat_poisson")
    for _ in range(20):
        step_button(page).click()
    wait_for_frame(page, 20)
    stays_on_frame(page, 20, 1000, "no click stepped twice")
    assert drawn(page)["frame"] == drawn(page)["last"] == 20, "clicks were lost or merged"
    assert_page_shows(page, expected.frames[20])
    page.get_by_role("button", name="Play", exact=True).click()
    page.wait_for_function(f"() => Number(document.querySelector('{PLAYER}').dataset.frame) >= 23", timeout=30_000)
    page.get_by_role("button", name="Pause", exact=True).click()
    paused_at = drawn(page)["frame"]
    stays_on_frame(page, paused_at, 1500, "the player stays where it was paused")
    page.evaluate(f"() => {{ const p = document.querySelector('{PLAYER}').player; p.answerTimeoutMs = 300;"
                  " Object.defineProperty(p, 'send', {get: () => () => {}, set: () => {}}); }")  # requests get lost
    page.keyboard.press("End")  # (a rerun still on its way cannot undo that: the setter ignores it)
    step_button(page).click()
    page.wait_for_function(f"() => document.querySelector('{PLAYER} .sp-message').innerText.includes("
                           "'has not answered')", timeout=10_000)
    shown = drawn(page)["frame"]
    page.get_by_role("button", name="Back", exact=True).click()  # what was computed stays usable
    wait_for_frame(page, shown - 1)
    page.close()


def test_two_sessions_step_independently(fake_server, browser):
    solo = {name: load_scenario(SCENARIOS_DIR / f"{name}.toml", "fake").engine() for name in
            ("01_prefill_first", "02_preemption")}
    for engine in solo.values():
        engine.run(3)
    pages = {name: open_page(browser, f"{fake_server}/?scenario={name}") for name in solo}
    for _ in range(3):
        for page in pages.values():  # interleaved: one click each, in turn
            step_button(page).click()
    for name, page in pages.items():
        wait_for_frame(page, 3)
        assert_page_shows(page, solo[name].frames[3])
    for page in pages.values():
        page.close()


def test_the_sidebar_follows_the_frame_across_a_settings_change(fake_server, browser):
    """Stepping back past a mid-run change reruns the whole page, not just the stage, so the sidebar shows the
    settings of the frame moved to."""
    page = open_page(browser, f"{fake_server}/?scenario=01_prefill_first&frame=3")
    page.get_by_text("Scheduler settings").click()
    box = page.get_by_role("spinbutton", name="max_num_seqs (requests per batch)")
    assert box.input_value() == "3"
    box.fill("2")
    box.press("Enter")  # the change applies from the frame shown, the last one: a new run
    step_button(page).click()  # clicked while the page switches runs: the click carries over to the new run
    wait_for_frame(page, 4)
    assert box.input_value() == "2"
    page.get_by_role("button", name="Back", exact=True).click()
    page.get_by_role("button", name="Back", exact=True).click()
    wait_for_frame(page, 2)
    page.wait_for_function("() => document.querySelector('.st-key-cfg_max_num_seqs input').value === '3'",
                           timeout=30_000)
    page.close()


def test_a_custom_setup_link_opens_the_same_run(fake_server, browser):
    link = "scenario=custom&requests=6&prompts=random&max_tokens=5&arrivals=poisson&seed=3&max_num_seqs=2&frame=7"
    expected = Lab(RunInputs.from_custom(CustomSetup(6, "random", 5, "poisson"), Config(max_num_seqs=2), "fake", 3))
    expected.run(7)
    page = open_page(browser, f"{fake_server}/?{link}")
    assert_page_shows(page, expected.frame)
    assert page.url.endswith(link) and page.locator("[data-testid=stAlert]").count() == 0
    page.close()


def test_a_visit_to_the_policy_lab_keeps_the_stepper_where_it_was(fake_server, browser):
    expected = load_scenario(SCENARIOS_DIR / "02_preemption.toml", "fake").engine()
    expected.run(5)
    page = open_page(browser, f"{fake_server}/?scenario=02_preemption&frame=5&present=1")
    page.locator("[data-testid=stExpandSidebarButton]").click()  # a presentation link opens it collapsed
    page.get_by_role("link", name="Policy lab").click()
    page.get_by_role("button", name="Run the comparison").wait_for(timeout=30_000)
    page.get_by_role("link", name="Scheduler stepper").click()
    wait_for_frame(page, 5)
    assert_page_shows(page, expected.frames[5])
    assert page.locator(".st-key-presentation input").is_checked()
    assert page.locator("[data-testid=stException]").count() == 0
    page.close()


def test_screenshots_mid_transition_and_on_a_projector(fake_server, browser):
    """For a person to look at: a step mid-transition at 1600x1000, and presentation mode at 1280x720 (turned on
    in the sidebar, which then collapses), where the queues and the narration stay above the fold and no button,
    key frame, title or token label is cut."""
    ARTIFACTS.mkdir(exist_ok=True)
    page = open_page(browser, f"{fake_server}/?scenario=02_preemption&frame=5", 1600, 1000)
    page.get_by_role("button", name="Back", exact=True).click()
    wait_for_frame(page, 4)
    settled(page, PLAYER)
    step_button(page).click()  # frame 5 is held: it is drawn at once, the request sliding to the waiting row
    page.wait_for_function(f"() => document.querySelector('{PLAYER}').getAnimations({{subtree: true}})"
                           ".some(a => a.playState === 'running')")  # caught sliding: the screenshot's point
    page.screenshot(path=ARTIFACTS / "laptop_1600x1000_mid_transition.png")
    page.close()
    page = open_page(browser, f"{fake_server}/?scenario=08_chat_poisson&frame=11", 1280, 720)
    sidebar = "[data-testid=stSidebar]"
    assert page.get_attribute(sidebar, "data-collapsed") == "false"
    page.locator(".st-key-presentation label").click()
    page.wait_for_function(f"() => document.querySelector('{sidebar}').dataset.collapsed === 'true'", timeout=30_000)
    page.wait_for_function(f"() => document.querySelector('{PLAYER}').classList.contains('sp-present')")
    settled(page)
    for selector in (".sp-running .sp-row", ".sp-waiting .sp-qtitle", ".sp-narration li"):
        assert page.locator(selector).first.bounding_box()["y"] < 720, f"{selector} is below the fold"
    cut = page.evaluate("""() => { const root = document.querySelector('[data-testid=stage-player]'), cut = [];
      for (const e of root.querySelectorAll('.sp-controls button, .sp-keys button, .sp-ptitle, .sp-qtitle'))
        if (e.scrollWidth > e.clientWidth) cut.push(e.innerText);
      for (const row of root.querySelectorAll('.sp-queues .sp-row:not(.sp-bare)')) {
        const box = row.querySelector('.sp-cells').getBoundingClientRect();
        for (const cell of row.querySelectorAll('.sp-tok'))
          if (cell.getBoundingClientRect().right > box.right + 0.5 || cell.scrollWidth > cell.clientWidth)
            cut.push(cell.innerText);
      }
      return cut; }""")
    assert cut == [], f"cut: {cut}"
    page.screenshot(path=ARTIFACTS / "projector_1280x720_frame11.png")
    page.locator("[data-testid=stExpandSidebarButton]").click()
    page.locator(".st-key-presentation label").click()  # turned off: the sidebar is back
    page.wait_for_function(f"() => document.querySelector('{PLAYER}')?.classList.contains('sp-present') === false",
                           timeout=30_000)
    holds(page, f"document.querySelector('{sidebar}').dataset.collapsed === 'false'", 1500,
          "the page's next reruns (its link no longer says present=1) leave the sidebar open")
    page.close()


def test_a_chinese_link_shows_the_player_in_chinese_and_its_buttons_work(fake_server, browser):
    """?lang=zh: every word of the player is Chinese (its words come from the server), the article's frame 9 and its
    note open there, and the buttons still work, found by their data-action."""
    page = open_page(browser, f"{fake_server}/?lang=zh&scenario=article_2_preemption&frame=9", 1600, 1000)
    root = page.locator(PLAYER)
    assert root.get_attribute("lang") == "zh"
    assert root.locator(".sp-narration").inner_text().startswith("第 9 步运行了一个预填充批次")
    assert root.locator(".sp-banner").inner_text().startswith("★ 关键帧，第 9 步。 文章的第 9 帧")
    drawn_text = root.inner_text()
    for words in ("运行队列", "等待队列", "KV 缓存", "发生了什么，为什么", "K/V 已缓存", "模拟时钟"):
        assert words in drawn_text
    assert page.get_by_role("button", name="单步", exact=True).count() == 1
    assert page.get_by_role("button", name="Step", exact=True).count() == 0
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=ARTIFACTS / "zh_article_2_frame_9.png")
    root.locator("[data-action=step]").click()
    wait_for_frame(page, 10)
    root.locator("[data-action=back]").click()
    wait_for_frame(page, 9)
    page.close()
