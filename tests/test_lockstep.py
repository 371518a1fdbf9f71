"""The lockstep stages: where the decisions of runs on one workload part (engine/analysis/partings.py), told in both
languages (viz/lockstep.py), and the offline export that steps every stage together (player/lockstep.js)."""

import json
import re
import shutil

import pytest

from engine.analysis.partings import WHY, Decision, decisions, partings
from i18n import join_and
from render.chromium import CHROMIUM
from tests.helpers.browser import offline_page
from tests.helpers.engines import preset_comparison
from viz.html_export import animation_html, lockstep_message
from viz.lockstep import lockstep_marks, parting_sentence


@pytest.fixture(scope="module")
def tail_smart():
    return preset_comparison("07_smart_preemption", "tail vs smart preemption", lang="en")


def test_decisions_are_read_from_the_steps_events(tail_smart):
    for frame in tail_smart[0].frames:
        found = decisions(frame)
        assert {d.seq_id for d in found if d.kind == "preempt"} == {e.seq_id for e in frame.events_of("preempted")}
        admitted = frame.events_of("admitted")
        assert {(d.seq_id, d.num_tokens) for d in found if d.kind in ("admit", "resume")} == \
            {(e.seq_id, e.num_tokens) for e in admitted}
        assert {d.seq_id for d in found if d.kind == "resume"} == {e.seq_id for e in admitted if e.recompute}


def test_runs_part_exactly_where_their_decisions_differ(tail_smart):
    frames = [run.frames for run in tail_smart]
    found = {p.step: p for p in partings(frames)}
    assert found, "tail and smart preemption never parted on the preset made to show them apart"
    for step in range(1, min(map(len, frames))):
        made = [decisions(f[step]) for f in frames]
        assert (step in found) == (made[0] != made[1])
        if step in found:  # each run is told by what the other did not do, what they share by neither
            own = found[step].own
            assert set(own[0]) == made[0] - made[1] and set(own[1]) == made[1] - made[0]


def test_the_preset_parts_where_its_story_says(tail_smart):
    """The preset's narrative: tail preemption evicts the last admitted request, smart the one furthest from its
    max_tokens; the first parting is that preemption, each run evicting the request its events name."""
    first = partings([run.frames for run in tail_smart])[0]
    tail_victims = [e.seq_id for e in tail_smart[0].frames[first.step].events_of("preempted")]
    smart_victims = [e.seq_id for e in tail_smart[1].frames[first.step].events_of("preempted")]
    assert tail_victims != smart_victims
    assert first.own == (tuple(Decision("preempt", i, 0) for i in tail_victims),
                         tuple(Decision("preempt", i, 0) for i in smart_victims))
    assert parting_sentence(first, ["tail", "smart"], lang="en") == \
        f"Step {first.step}: tail preempts request {tail_victims[0]}; smart preempts request {smart_victims[0]}."
    assert parting_sentence(first, ["tail", "smart"], lang="zh") == \
        f"第 {first.step} 步：“tail”抢占了请求 {tail_victims[0]}；“smart”抢占了请求 {smart_victims[0]}。"


def test_identical_runs_never_part_and_a_shorter_run_ends_the_comparison(tail_smart):
    frames = tail_smart[0].frames
    assert partings([frames, frames, frames]) == []
    assert partings([frames, frames[:5]]) == []
    assert all(p.step < 9 for p in partings([run.frames[:9] for run in tail_smart]))


def test_a_run_with_no_decision_of_its_own_is_told_by_its_batch():
    """Prefill-first admits the arrivals while decode-first only decodes (and the other way round later)."""
    runs = preset_comparison("01_prefill_first", "prefill-first vs decode-first", lang="en")
    found = partings([run.frames for run in runs])
    quiet = next(p for p in found if not p.own[1])
    batch = runs[1].frames[quiet.step].batch
    sentence = parting_sentence(quiet, [run.label for run in runs], lang="en")
    ids = join_and("en", [f"{d.seq_id} ({d.num_tokens} tokens)" for d in quiet.own[0]])
    assert len(quiet.own[0]) > 1  # requests, plural
    assert sentence == (f"Step {quiet.step}: prefill-first admits requests {ids}; decode-first only runs its "
                        f"{batch.kind} batch ({len(batch.seq_ids)} requests).")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_marks_name_every_parting_in_the_language_asked_for(tail_smart, lang):
    runs = preset_comparison("07_smart_preemption", "tail vs smart preemption", lang=lang)
    marks = lockstep_marks([(run.label, run.frames) for run in runs], lang=lang)
    steps = [p.step for p in partings([run.frames for run in runs])]
    assert [step for step, _ in marks["partings"]] == steps
    assert all(sentence.startswith(f"Step {step}: " if lang == "en" else f"第 {step} 步：")
               for step, sentence in marks["partings"])
    assert len(set(marks["colors"])) == 2 and marks["lang"] == lang
    assert {"here", "agree", "next_at", "never", "ended", "list.one", "list.other"} <= set(marks["strings"])


def test_the_lab_message_holds_each_run_up_to_the_last_step_asked(tail_smart):
    message = lockstep_message([(run.label, run.frames) for run in tail_smart], lang="en", last_step=8)
    assert [len(run["frames"]) for run in message["runs"]] == [9, 9]
    assert all(step <= 8 for step, _ in message["partings"])


@pytest.mark.browser
@pytest.mark.skipif(shutil.which(CHROMIUM) is None, reason="needs Debian's chromium")
def test_the_offline_page_steps_every_stage_together(tail_smart, tmp_path):
    pytest.importorskip("playwright.sync_api")
    runs = [(run.label, run.frames) for run in tail_smart]
    page_html = animation_html(runs, "tail vs smart", lang="en")
    marks = json.loads(re.search(r"const MARKS = (.*);\n", page_html).group(1))
    path = tmp_path / "comparison.html"
    path.write_text(page_html)
    with offline_page(path, 1280, 720) as (page, fetched):
        root = page.locator("[data-testid=lockstep]")
        stages = root.locator("[data-testid=stage-player]")

        def shown():
            return int(root.get_attribute("data-step")), [int(s.get_attribute("data-frame"))
                                                          for s in stages.all()]

        assert stages.count() == 2 and shown() == (0, [0, 0])
        for _ in range(3):
            root.get_by_role("button", name="Step", exact=True).click()
        assert shown() == (3, [3, 3])
        for stage, frames in zip(stages.all(), (f for _, f in runs), strict=True):
            assert stage.evaluate("root => root.player.drawn.owners") == \
                [list(frames[3].block_owners(b.id)) for b in frames[3].blocks]
        page.keyboard.press("ArrowLeft")
        assert shown() == (2, [2, 2])
        first = marks["partings"][0]
        root.get_by_role("button", name="Next parting ▶").click()
        assert shown() == (first[0], [first[0]] * 2)
        assert first[1] in root.locator(".sp-ls-said").inner_text()
        assert root.locator(".sp-ls-marks button").count() == len(marks["partings"])
        root.locator(f".sp-ls-marks button[data-step='{marks['partings'][-1][0]}']").click()
        assert shown()[0] == marks["partings"][-1][0]
        page.keyboard.press("End")
        last = max(len(f) for _, f in runs) - 1
        assert shown() == (last, [min(last, len(f) - 1) for _, f in runs])
        page.keyboard.press("Home")
        root.locator(".sp-ls-pause-at").check()  # Play stops where the decisions first part
        root.get_by_role("button", name="Play", exact=True).click()
        page.wait_for_function("() => document.querySelector('[data-testid=lockstep] [data-action=play]')"
                               ".textContent.includes('Play')", timeout=10_000)
        assert shown() == (first[0], [first[0]] * 2)
        root.locator(".sp-ls-pause-at").uncheck()
        page.keyboard.press("Home")
        root.locator(".sp-ls-speed").select_option("20")
        root.get_by_role("button", name="Play", exact=True).click()
        page.wait_for_function("() => Number(document.querySelector('[data-testid=lockstep]').dataset.step) >= 20",
                               timeout=10_000)
        root.get_by_role("button", name="Pause", exact=True).click()
        step, frames_shown = shown()
        assert frames_shown == [step, step]
        assert fetched == []



@pytest.mark.browser
@pytest.mark.skipif(shutil.which(CHROMIUM) is None, reason="needs Debian's chromium")
def test_the_players_api_draws_stages_together_as_each_alone_and_again_at_a_new_width(tail_smart, tmp_path):
    """player.js's API for a driver of several players (lockstep.js uses nothing else): showTogether draws each
    player's own frame as the player alone draws it; and a stage, which keeps its sizes between frames, draws its
    rows again by itself when its width changes."""
    pytest.importorskip("playwright.sync_api")
    runs = [(run.label, run.frames) for run in tail_smart]
    path = tmp_path / "comparison.html"
    path.write_text(animation_html(runs, "tail vs smart", lang="en"))
    players = "[...document.querySelectorAll('[data-testid=stage-player]')].map(e => e.player)"
    row_cells = "root => root.querySelector('.sp-running .sp-row .sp-cells').children.length"
    with offline_page(path, 1600, 1000) as (page, _):
        stages = page.locator("[data-testid=stage-player]").all()
        assert page.evaluate(f"() => {players}.map(p => [p.lastFrame(), p.shownFrame()])") == \
            [[len(frames) - 1, 0] for _, frames in runs]
        page.evaluate(f"() => {{ const [a, b] = {players}; SchedlabPlayer.showTogether([[a, 30], [b, 31]], null); }}")
        assert [int(stage.get_attribute("data-frame")) for stage in stages] == [30, 31]
        for stage, (_, frames), k in zip(stages, runs, (30, 31), strict=True):
            assert stage.evaluate("root => root.player.drawn.owners") == \
                [list(frames[k].block_owners(b.id)) for b in frames[k].blocks]
        together = stages[1].evaluate("root => root.querySelector('.sp-main').innerHTML")
        stages[1].evaluate("root => { root.player.show(0); root.player.show(31); }")
        assert stages[1].evaluate("root => root.querySelector('.sp-main').innerHTML") == together
        wide = stages[0].evaluate(row_cells)
        page.set_viewport_size({"width": 900, "height": 1000})
        page.wait_for_function(f"() => ({row_cells})(document.querySelector('[data-testid=stage-player]')) < {wide}",
                               timeout=5000)
        page.set_viewport_size({"width": 1600, "height": 1000})
        page.wait_for_function(f"() => ({row_cells})(document.querySelector('[data-testid=stage-player]')) === {wide}",
                               timeout=5000)


@pytest.mark.browser
@pytest.mark.skipif(shutil.which(CHROMIUM) is None, reason="needs Debian's chromium")
def test_a_stage_off_the_screen_catches_up_when_seen_and_when_play_stops(tail_smart, tmp_path):
    """Four stages at 1000x720 (too narrow for four columns, so two by two): the lower two are off the screen, and
    Play does not draw them (it draws the two the reader sees at 20 steps/s); scrolled into view, a stage shows the
    bar's step at once, and Pause draws them all."""
    pytest.importorskip("playwright.sync_api")
    runs = [(f"{run.label} {copy}", run.frames) for copy in (1, 2) for run in tail_smart]
    path = tmp_path / "four.html"
    path.write_text(animation_html(runs, "four stages", lang="en"))
    with offline_page(path, 1000, 720) as (page, _):
        root = page.locator("[data-testid=lockstep]")
        stages = root.locator("[data-testid=stage-player]").all()

        def frames():
            return [int(stage.get_attribute("data-frame")) for stage in stages]

        root.locator(".sp-ls-speed").select_option("20")
        root.get_by_role("button", name="Play", exact=True).click()
        page.wait_for_function("() => Number(document.querySelector('[data-testid=lockstep]').dataset.step) >= 10",
                               timeout=10_000)
        assert max(frames()[2:]) < min(frames()[:2]) - 5  # (drawn at most once, before the page saw them)
        stages[2].scroll_into_view_if_needed()
        page.wait_for_function("() => { const root = document.querySelector('[data-testid=lockstep]');"
                               " const third = root.querySelectorAll('[data-testid=stage-player]')[2].dataset;"
                               " return Number(third.frame) >= 10 && third.frame === root.dataset.step; }",
                               timeout=5000)
        root.get_by_role("button", name="Pause", exact=True).click()
        step = int(root.get_attribute("data-step"))
        assert frames() == [step] * 4


def test_a_retraction_parts_the_runs_and_each_run_keeps_its_reasons():
    """SGLang's retract_decode sends a request back as a preemption does: a decision of its own, told by its word,
    and each run's parting keeps the events that say why (what was retracted, preempted or held back)."""
    runs = preset_comparison("sglang_retraction", "article vs sglang", lang="en")
    found = partings([run.frames for run in runs])
    parting = next(p for p in found if any(d.kind == "retract" for d in p.own[1]))
    frame = runs[1].frames[parting.step]
    assert [d.seq_id for d in parting.own[1] if d.kind == "retract"] == [e.seq_id for e in frame.events_of("retracted")]
    assert all(d.num_tokens == 0 for d in parting.own[1] if d.kind == "retract")
    for run, why in zip(runs, parting.why, strict=True):
        assert why == tuple(e for e in run.frames[parting.step].events if e.kind in WHY)
    assert "retracted" in {e.kind for e in parting.why[1]}
    retracted = frame.events_of("retracted")[0].seq_id
    assert f"{runs[1].label} retracts request {retracted}" in parting_sentence(parting, [r.label for r in runs],
                                                                               lang="en")
