"""The offline HTML animation: the app's stage player with every frame embedded, self-contained; it plays with the
network blocked. PNG and GIF images for slides."""

import io
import json
import re
import shutil

import pytest

from engine.inputs.scenario import SCENARIOS_DIR, load_scenario
from render.chromium import CHROMIUM, CHROMIUM_ARGS
from session.feed import Feed
from session.lab import Lab, RunInputs
from tests.helpers.browser import offline_page
from viz.frame_payload import EMPTY_VIEW, decode, player_views, stage_view
from viz.html_export import animation_html, gif_steps


def embedded_runs(page: str) -> list[dict]:
    return json.loads(re.search(r"const RUNS = (.*);\n", page).group(1).replace("<\\/", "</"))


def test_the_page_embeds_the_player_once_and_every_frame(preemption_preset):
    frames = list(preemption_preset.frames)
    page = animation_html([("tail", frames), ("again", frames)], "two runs", lang="en")
    assert not re.search(r"<(script|link)[^>]+(src|href)=", page)  # nothing to fetch
    assert page.count("window.SchedlabPlayer = {") == 1
    runs = embedded_runs(page)
    assert [r["title"] for r in runs] == ["tail", "again"]
    assert decoded(runs[0]["frames"]) == list(player_views(frames, lang="en"))


def decoded(deltas: list[dict]) -> list[dict]:
    views, previous = [], EMPTY_VIEW
    for delta in deltas:
        previous = decode(previous, delta)
        views.append(previous)
    return views


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_export_shows_what_the_apps_stage_shows(lang):
    """Frame for frame, the offline page's views (narration included: its numbers at the start of each step) are
    the ones the app's feed sends for the same run."""
    lab = Lab(RunInputs.from_scenario(load_scenario(SCENARIOS_DIR / "article_2_preemption.toml"), "fake"))
    lab.run(200)
    feed, sent = Feed(lang), []
    while len(sent) <= lab.last:
        sent += feed.message(lab, {"title": "", "model": "", "key_frames": []})["frames"]
    (run,) = embedded_runs(animation_html([("run", list(lab.frames))], "run", lang=lang))
    exported = decoded(run["frames"])
    assert exported == decoded(sent)
    without_before = [stage_view(f, lang=lang)["narration"] for f in lab.frames]
    assert [view["narration"] for view in exported] != without_before  # the frame before adds to the story


def test_gif_steps_keep_the_ends_within_the_budget():
    assert gif_steps(5, 80) == [0, 1, 2, 3, 4]
    steps = gif_steps(1001, 80)
    assert steps[0] == 0 and steps[-1] == 1000 and len(steps) <= 81


@pytest.mark.browser
@pytest.mark.skipif(shutil.which(CHROMIUM) is None, reason="needs Debian's chromium")
def test_the_page_plays_offline_in_chromium(preemption_preset, tmp_path):
    pytest.importorskip("playwright.sync_api")
    path = tmp_path / "run.html"
    path.write_text(animation_html([("tail", list(preemption_preset.frames))], lang="en"))
    with offline_page(path, 1200, 800) as (page, fetched):
        player = page.locator("[data-testid=stage-player]")
        assert player.get_attribute("data-frame") == "0"
        assert player.get_attribute("data-last") == str(preemption_preset.step_count)
        for _ in range(3):
            player.get_by_role("button", name="Step", exact=True).click()
        assert player.get_attribute("data-frame") == "3"
        owners = player.evaluate("root => root.player.drawn.owners")
        third = preemption_preset.frames[3]
        assert owners == [list(third.block_owners(b.id)) for b in third.blocks]
        player.evaluate("root => root.player.receive({run: 0, from: root.player.views.length, last: 99,"
                        " frames: [{not: 'a frame'}]})")  # a chunk that cannot be decoded
        assert "could not be read" in player.locator(".sp-message").inner_text()
        player.get_by_role("button", name="Back", exact=True).click()
        assert player.get_attribute("data-frame") == "2"  # what was there stays usable
        player.evaluate("root => root.player.receive({run: 0, from: root.player.views.length, frames: [],"
                        " last: root.player.views.length - 1, cursor_moves: 0, error: 'This run has reached"
                        " 12 steps, the most one session records.'})")  # a request past the step limit
        assert "reached 12 steps" in player.locator(".sp-message").inner_text()
        player.get_by_role("button", name="Back", exact=True).click()
        assert player.get_attribute("data-frame") == "1"
        player.get_by_role("button", name="Step", exact=True).click()
        assert player.get_attribute("data-frame") == "2"
        player.get_by_role("button", name="Play", exact=True).click()
        page.wait_for_function("() => Number(document.querySelector('[data-testid=stage-player]')"
                               ".dataset.frame) >= 5", timeout=10_000)
        assert fetched == []


@pytest.mark.browser
@pytest.mark.skipif(shutil.which(CHROMIUM) is None, reason="needs Debian's chromium")
def test_gif_for_slides(preemption_preset):
    pytest.importorskip("playwright.sync_api")
    image = pytest.importorskip("PIL.Image")

    from render.images import run_gif

    frames = list(preemption_preset.frames)
    gif = image.open(io.BytesIO(run_gif(frames, "tail", max_frames=6, lang="en")))
    assert gif.format == "GIF" and gif.size == (1280, 720)  # a slide's size
    assert gif.n_frames == len(gif_steps(len(preemption_preset.frames), 6))
    pictures = []
    for i in range(gif.n_frames):
        gif.seek(i)
        pictures.append(gif.convert("RGB").tobytes())
    assert len(set(pictures)) > 1  # the run moves


@pytest.mark.browser
@pytest.mark.skipif(shutil.which(CHROMIUM) is None, reason="needs Debian's chromium")
def test_every_token_cell_drawn_is_the_frames_token(tmp_path):
    """Long chat prompts are sent elided to what rows show: every cell drawn in every frame still reads the
    engine's token at its position."""
    sync_playwright = pytest.importorskip("playwright.sync_api").sync_playwright
    engine = load_scenario(SCENARIOS_DIR / "08_chat_poisson.toml", "fake").engine()
    engine.run(120)
    frames = list(engine.frames)
    path = tmp_path / "run.html"
    path.write_text(animation_html([("chat", frames)], lang="en"))
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 3000, "height": 1000})  # rows as long as they get
            page.goto(path.as_uri())
            cells = page.evaluate("""() => { const player = document.querySelector('[data-testid=stage-player]').player;
              const cells = [];
              for (let k = 0; k < player.views.length; k++) {
                player.show(k);
                for (const cell of player.root.querySelectorAll('.sp-queues .sp-tok:not(.sp-gap)')) {
                  const [, rid, i, id] = cell.title.match(/^request (\\d+) · token (\\d+) \\(id (\\S+)\\)/);
                  cells.push([k, Number(rid), Number(i), id]);
                }
              }
              return cells; }""")
        finally:
            browser.close()
    assert len(cells) > 1000 and len({k for k, *_ in cells}) > 100
    wrong = [(k, rid, i, id) for k, rid, i, id in cells if id != str(frames[k].requests[rid].token_ids[i])]
    assert not wrong, wrong[:5]
    prompts = {(rid, i) for k, rid, i, _ in cells if i < frames[k].requests[rid].num_prompt_tokens}
    assert max(frames[-1].requests[rid].num_prompt_tokens for rid, _ in prompts) > 100  # long prompts were drawn
