"""The learner's own scheduler as a stage of the policy lab, in headless Chromium as a learner uses it (en, zh,
1280x720): the smart victim opened on the Workbench page, then, in the same session, added beside the article's
scheduler, V0, V1 and SGLang on the smart-victim preset (smart_victim_long_prompt); its stage steps with theirs on
one bar, the partings name it, and a scheduler that frees a block twice has its stage end there, saying what broke.
Screenshots go to artifacts/ for a person to look at."""

import os
from pathlib import Path

import pytest

from engine.inputs.scenario import SCENARIOS_DIR, load_scenario
from i18n import text
from tests.helpers.browser import (
    ARTIFACTS,
    LOCKSTEP,
    NEEDS_CHROMIUM,
    lockstep_shown,
    reran,
    scroll_to,
    settled,
)
from tests.helpers.source import ROOT
from viz.compare_words import comparison_name

pytestmark = NEEDS_CHROMIUM
PRESET = load_scenario(SCENARIOS_DIR / "smart_victim_long_prompt.toml")
ALL_KINDS = "article vs vllm vs sglang vs vllm_v0"
NAMES = {"en": "smart victim", "zh": "聪明的牺牲者"}


@pytest.fixture(scope="module")
def peer_server():
    """The app on the fake model, its sandbox workers run as the tests' peers (tests/helpers/peer_sandbox_site/)."""
    from tools.app_server import app_server

    site = Path(__file__).parent / "helpers" / "peer_sandbox_site"
    path = os.pathsep.join(filter(None, (str(site), str(ROOT), os.environ.get("PYTHONPATH"))))
    with app_server("fake", env={"PYTHONPATH": path}) as (url, _process):
        yield url


def own_in_the_lab(browser, url: str, lang: str, file: str, class_name: str):
    """A learner's page: `file` opened on the Workbench, then the lab (through the sidebar: the same session) with
    the preset under the four built-in kinds and the learner's scheduler added, run, its stages drawn."""
    page = browser.new_page()
    page.set_viewport_size({"width": 1280, "height": 720})
    with page.expect_websocket() as connected:
        page.goto(f"{url}/Workbench?lang={lang}")
    socket = connected.value
    page.get_by_role("button", name=text(lang, "workbench.upload_short")).click()
    with reran(page, socket):
        page.locator("[data-testid=stFileUploader] input[type=file]").set_input_files(ROOT / "starters" / file)
    page.keyboard.press("Escape")  # the popover closed
    page.get_by_text(class_name, exact=True).first.wait_for(timeout=30_000)  # the class picked to run
    with reran(page, socket):
        page.locator("[data-testid=stSidebarNav] a", has_text=text(lang, "app.policy_lab")).click()
    boxes = page.locator("[data-testid=stSelectbox]")
    for i, name in enumerate((PRESET.title_in(lang), comparison_name(ALL_KINDS, lang))):
        if boxes.nth(i).inner_text().strip() == name:
            continue
        boxes.nth(i).click()
        page.keyboard.type(name[:25])
        with reran(page, socket):
            page.get_by_role("option", name=name, exact=True).click()
    with reran(page, socket):
        page.get_by_text(text(lang, "lab.own_add", name=class_name)).click()
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=ARTIFACTS / f"lab_own_choice_{lang}_{class_name}_1280x720.png")
    page.locator("[data-testid=stButton] button[kind=primary]").click()
    page.locator(LOCKSTEP).wait_for(timeout=120_000)
    return page


def below_the_bar(column):
    """`column`'s top just under the lockstep's sticky bar."""
    column.evaluate("""col => { col.scrollIntoView({block: 'start', behavior: 'instant'});
      let box = col.parentElement;
      while (box && !['auto', 'scroll'].includes(getComputedStyle(box).overflowY)) box = box.parentElement;
      const under = document.querySelector('.sp-ls-bar').getBoundingClientRect().bottom + 8;
      (box || document.scrollingElement).scrollBy(0, col.getBoundingClientRect().top - under); }""")
    settled(column.page)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_smart_victim_steps_beside_the_four_kinds_and_the_partings_name_it(peer_server, browser, lang):
    page = own_in_the_lab(browser, peer_server, lang, "smart_victim.py", "SmartVictim")
    root, name = page.locator(LOCKSTEP), NAMES[lang]
    titles = root.locator("[data-testid=stage-player] .sp-title").all_inner_texts()
    assert len(titles) == 5 and titles[-1] == name
    assert lockstep_shown(page) == (0, [0] * 5)
    preempts = text(lang, "lockstep.run", label=name, did=text(lang, "lockstep.did.preempt.one", items="")).strip()
    for _ in range(root.locator(".sp-ls-marks button").count()):  # on to where it chooses a victim of its own
        root.locator("[data-action=next-parting]").click()
        if preempts in root.locator(".sp-ls-said").inner_text():
            break
    step, frames = lockstep_shown(page)
    assert step > 0 and frames == [step] * 5
    assert preempts in root.locator(".sp-ls-said").inner_text()  # the parting told names it
    assert page.locator("[data-testid=stException]").count() == 0
    settled(page, LOCKSTEP)
    scroll_to(page.get_by_role("heading", name=text(lang, "lab.lockstep")))
    page.screenshot(path=ARTIFACTS / f"lab_own_{lang}_1280x720.png")
    below_the_bar(root.locator(".sp-ls-column").nth(4))  # the second row: V0 and the learner's
    page.screenshot(path=ARTIFACTS / f"lab_own_stage_{lang}_1280x720.png")
    scroll_to(page.locator("[data-testid=stDataFrame]"), "center")
    page.screenshot(path=ARTIFACTS / f"lab_own_table_{lang}_1280x720.png")
    page.close()


def test_a_block_freed_twice_ends_its_stage_there_saying_what_broke(peer_server, browser):
    page = own_in_the_lab(browser, peer_server, "en", "double_free.py", "DoubleFree")
    root = page.locator(LOCKSTEP)
    warning = page.locator("[data-testid=stAlert]").filter(has_text="broke an invariant")
    assert "was freed more times than it was taken" in warning.inner_text()
    scroll_to(warning, "center")
    page.screenshot(path=ARTIFACTS / "lab_own_broken_said_en_1280x720.png")
    last = root.evaluate("root => root.querySelectorAll('[data-testid=stage-player]')[4].player.lastFrame()")
    root.locator(".sp-ls-slider").fill(str(last + 3))
    step, frames = lockstep_shown(page)
    assert step == last + 3 and frames == [step] * 4 + [last]  # the others go on; it stays where it stopped
    ended = root.locator(".sp-ls-column").nth(4).locator(".sp-ls-ended").inner_text()
    assert ended.startswith(f"Step {last + 1} broke an invariant: block ")
    below_the_bar(root.locator(".sp-ls-column").nth(4))
    page.screenshot(path=ARTIFACTS / "lab_own_broken_en_1280x720.png")
    page.close()
