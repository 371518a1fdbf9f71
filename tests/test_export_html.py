"""The offline HTML animation: self-contained, and its play button moves the frames in headless Chromium."""

import re
import shutil

import pytest

from engine.engine import Engine
from engine.scenario import SCENARIOS_DIR, load_scenario
from viz.block_grid import block_color
from viz.colors import CACHED_FREE_COLOR, FREE_COLOR
from viz.html_export import CHROMIUM, CHROMIUM_ARGS, animation_figure, animation_html, sampled


@pytest.fixture(scope="module")
def engine() -> Engine:
    engine = load_scenario(SCENARIOS_DIR / "02_preemption.toml").engine()
    engine.run()
    return engine


def test_sampling_keeps_the_ends_and_the_budget():
    frames = list(range(1001))
    picked = sampled(frames, 300)
    assert picked[0] == 0 and picked[-1] == 1000 and len(picked) <= 301
    assert sampled(frames[:5], 300) == frames[:5]


def test_each_frame_shows_that_step(engine):
    fig = animation_figure(list(engine.frames), "tail")
    assert [f.name for f in fig.frames] == [str(f.step) for f in engine.frames]
    third = engine.frames[3]
    running, waiting, pool = fig.frames[3].data
    assert list(running.text) == [str(i) for i in third.running]
    assert list(waiting.text) == [str(i) for i in third.waiting]
    assert list(pool.marker.color) == [block_color(third, b) for b in third.blocks]
    assert sum(c not in (FREE_COLOR, CACHED_FREE_COLOR) for c in pool.marker.color) == \
        len(third.blocks) - third.metrics.num_free_blocks
    assert "step 3" in fig.frames[3].layout.title.text


def test_the_page_is_self_contained(engine):
    page = animation_html([("tail", list(engine.frames)), ("again", list(engine.frames))], "two runs")
    assert page.count("Plotly.newPlot") == 2 and not re.search(r"<script[^>]+src=", page)
    assert len(re.findall(r"plotly\.js v\d", page)) == 1  # the library is embedded once


@pytest.mark.slow
@pytest.mark.skipif(shutil.which(CHROMIUM) is None, reason="needs Debian's chromium")
def test_play_advances_the_frames_in_chromium(engine, tmp_path):
    sync_playwright = pytest.importorskip("playwright.sync_api").sync_playwright
    path = tmp_path / "run.html"
    path.write_text(animation_html([("tail", list(engine.frames))]))
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1200, "height": 800})
            page.route("http*://**", lambda route: route.abort())  # offline: nothing may be fetched
            page.goto(path.as_uri())
            current = page.locator(".slider-container .slider-label").first  # "step N" above the slider
            current.wait_for(timeout=20_000)
            assert current.text_content().strip() == "step 0"
            title = page.locator(".gtitle").first.text_content()
            page.get_by_text("▶ play").click()
            page.wait_for_timeout(1500)  # six frames of 250 ms
            step = int(current.text_content().split()[1])
            assert step > 0
            assert page.locator(".gtitle").first.text_content() != title
        finally:
            browser.close()


@pytest.mark.slow
@pytest.mark.skipif(shutil.which(CHROMIUM) is None, reason="needs Debian's chromium")
def test_png_and_gif_for_slides(engine):
    pytest.importorskip("playwright.sync_api")
    image = pytest.importorskip("PIL.Image")
    import io

    from viz.charts import queues_and_kv_figure
    from viz.html_export import figure_png, run_gif

    png = figure_png(queues_and_kv_figure(list(engine.frames)), width=800, height=400)
    assert png.startswith(b"\x89PNG") and image.open(io.BytesIO(png)).size == (800, 400)
    gif = image.open(io.BytesIO(run_gif(list(engine.frames), "tail", width=480, height=270, max_frames=6)))
    assert gif.format == "GIF" and gif.size == (480, 270)
    shown = sampled(list(engine.frames), 6)
    assert gif.n_frames == len(shown)
    pictures = []
    for i in range(gif.n_frames):
        gif.seek(i)
        pictures.append(gif.convert("RGB").tobytes())
    assert len(set(pictures)) > 1  # the run moves
