"""The vLLM twin's view below the stage in headless Chromium (fake model): the free block queue, the SchedulerOutput,
each request's counters and vLLM's log line on vllm_resume_cached's frames 6, 9 and 11, in the app and in the
offline player, in English and Chinese; none under the article's scheduler; a block's tip lists the tokens whose
K/V it holds; and a lab comparison that turns one of vLLM's knobs under the twin, its parting steps named.
Screenshots go to artifacts/ for a person to look at."""

import pytest

from engine.analysis.compare import compare, variants_for
from engine.analysis.partings import partings
from engine.inputs.scenario import SCENARIOS_DIR, load_scenario
from engine.run.engine import Engine
from i18n import join_and, text
from tests.helpers.browser import (
    ARTIFACTS,
    LOCKSTEP,
    NEEDS_CHROMIUM,
    PLAYER,
    open_lockstep,
    open_page,
    scroll_to,
    settled,
)
from viz.handout import Handout
from viz.html_export import handout_html

pytestmark = NEEDS_CHROMIUM

RESUMED = load_scenario(SCENARIOS_DIR / "vllm_resume_cached.toml")
KNOBS = load_scenario(SCENARIOS_DIR / "vllm_knobs.toml")
SHOWN = {6: ("4★", "preempted_req_ids={1}"), 9: ("5★", "resumed_req_ids={1}"), 11: ("2★", "new_block_ids=[[5]]")}
VIEW = f"{PLAYER} [data-testid=scheduler-output]"


def view_texts(page, root: str = VIEW) -> dict:
    return {name: page.locator(f"{root} [data-testid=scheduler-output-{name}]").inner_text()
            for name in ("log", "free-queue", "output")}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_twins_view_on_frames_6_9_and_11(fake_server, browser, lang):
    ARTIFACTS.mkdir(exist_ok=True)
    for frame, (queue_head, output) in SHOWN.items():
        page = open_page(browser, f"{fake_server}/?lang={lang}&scenario=vllm_resume_cached&frame={frame}", 1280, 900)
        scroll_to(page.locator(VIEW))
        shown = view_texts(page)
        assert shown["log"].startswith("Engine 000: Avg prompt throughput:") and "vllm:num_preemptions_total 1" in \
            shown["log"]
        assert shown["free-queue"].split()[1] == queue_head and output in shown["output"]
        if frame == 9:  # 0 finished at step 8: step 9's SchedulerOutput lists it, as vLLM's does, and says why
            assert "finished_req_ids={0}" in shown["output"]
            assert text(lang, "panel.scheduler_output.output_note") in page.locator(VIEW).inner_text()
        if frame == 11:
            evicted = text(lang, "panel.scheduler_output.evicted",
                           ids=text(lang, "panel.scheduler_output.evicted_one", block=5, id=1))
            assert evicted in page.locator(VIEW).inner_text()
        page.screenshot(path=ARTIFACTS / f"vllm_view_{lang}_frame{frame}.png")
        page.close()


def test_the_article_scheduler_has_no_vllm_view(fake_server, browser):
    page = open_page(browser, f"{fake_server}/?scenario=vllm_resume_cached&scheduler=article&frame=6", 1280, 720)
    assert page.locator(VIEW).count() == 0 or not page.locator(VIEW).is_visible()
    page.close()


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_offline_player_shows_the_view_and_a_blocks_tip_lists_the_tokens_it_holds(browser, tmp_path, lang):
    engine = Engine(RESUMED.spec)
    engine.run()
    handout = Handout(RESUMED.title_in(lang), RESUMED.narrative_in(lang), "fake model", engine.frames, lang,
                      [[k.step, k.note_in(lang), True] for k in RESUMED.key_frames], cursor=6, scheduler="vllm")
    path = tmp_path / "offline.html"
    path.write_text(handout_html(handout))
    page = browser.new_page()
    page.set_viewport_size({"width": 1280, "height": 900})
    fetched = []
    page.route("**/*", lambda route: (fetched.append(route.request.url), route.abort())
               if not route.request.url.startswith("file:") else route.continue_())
    page.goto(path.as_uri())
    root = ".sh-stage"
    page.wait_for_function(f"() => document.querySelector('{root}').dataset.frame === '6'")
    assert view_texts(page, f"{root} [data-testid=scheduler-output]")["free-queue"].split()[1] == "4★"
    for _ in range(3):
        page.locator(f"{root} [data-action=step]").click()
    assert "resumed_req_ids={1}" in view_texts(page, f"{root} [data-testid=scheduler-output]")["output"]
    # block 4 at frame 1 holds request 1's prompt tokens 25 and 26; its first output token has no K/V yet
    tip = page.evaluate(f"() => {{ const p = document.querySelector('{root}').player; "
                        "return p.blockTip(p.views[1], 4); }")
    assert tip.endswith(": 25 26") or tip.endswith("：25 26")  # not "25 26 <its first output token>"
    page.locator(f"{root} [data-testid=scheduler-output]").evaluate("e => e.scrollIntoView()")
    page.screenshot(path=ARTIFACTS / f"vllm_view_offline_{lang}_frame9.png")
    assert not fetched
    page.close()


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_knob_comparison_under_the_twin_names_its_parting_steps(fake_server, browser, lang):
    spec = KNOBS.spec
    twin = compare(variants_for("fcfs vs priority", spec.config, lang, "vllm"), spec.workload, seed=spec.seed,
                   cost=spec.cost)
    steps = [p.step for p in partings([run.frames for run in twin])]
    page = open_lockstep(browser, fake_server, lang, KNOBS.title_in(lang), text(lang, "compare.name.fcfs vs priority"))
    verdict = page.locator("[data-testid=stMarkdownContainer] li", has_text=text(lang, "lockstep.question"))
    scroll_to(verdict, "center")
    assert join_and(lang, steps) in verdict.inner_text()
    page.screenshot(path=ARTIFACTS / f"lab_twin_fcfs_vs_priority_{lang}_verdict.png")
    root = page.locator(LOCKSTEP)
    root.locator("[data-action=next-parting]").click()
    page.wait_for_function(f"() => document.querySelector('{LOCKSTEP}').dataset.step === '{steps[0]}'")
    settled(page, LOCKSTEP)
    scroll_to(page.get_by_role("heading", name=text(lang, "lab.lockstep")))
    page.screenshot(path=ARTIFACTS / f"lab_twin_fcfs_vs_priority_{lang}_step{steps[0]}.png")
    assert page.locator("[data-testid=stException]").count() == 0
    page.close()
