"""Self-contained HTML pages that play runs offline with the app's own stage player (player/): its JS and CSS
inlined, every frame embedded as the deltas the app sends (viz/frame_payload.py), nothing fetched. Two runs or more
play in lockstep (player/lockstep.js), as the policy lab shows them; the stepper's run plays as a handout
(player/handout.js, viz/handout.py): the player with each request's generated text, and, printed, a title page and
one page per key frame. Pictures for slides (PNG, an animated GIF) and the printed handout as PDF are those pages
drawn by headless Chromium.
"""

from __future__ import annotations

import html
import json
import os
import signal
import subprocess
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path

from engine.run.frame import Frame
from i18n import MessageError, text
from viz.frame_payload import EMPTY_VIEW, WIRE, encode, player_constants, player_views
from viz.handout import Handout, handout_extras
from viz.lockstep import lockstep_marks

PLAYER_DIR = Path(__file__).resolve().parents[1] / "player"
FRAME_MS = 250
WIRE_SLOT = "SCHEDLAB_WIRE"  # decode.js: `const WIRE = SCHEDLAB_WIRE;`, replaced by viz.frame_payload.WIRE
# The stage player's files, one job each, in the order they run (player/player.js says what each does).
PLAYER_FILES = ("decode.js", "transport.js", "follow.js", "render.js", "pool.js", "player.js")


def player_sources() -> tuple[str, str]:
    """The stage player's JavaScript (its files in order), with the wire format's names written in (decode.js
    reads them as `WIRE`), and its CSS; the twin's view below the stage (vllm_view.js, a panel) after them."""
    js = "\n".join((PLAYER_DIR / name).read_text() for name in PLAYER_FILES)
    assert js.count(WIRE_SLOT) == 1, f"the player names {WIRE_SLOT} once, where it reads the wire format's names"
    js, css = js.replace(WIRE_SLOT, json.dumps(WIRE)), (PLAYER_DIR / "player.css").read_text()
    panels = ("vllm_view", "tree_view")  # drawn below the stage: the vLLM twin's view, a radix tree's
    return (js + "".join("\n" + (PLAYER_DIR / f"{name}.js").read_text() for name in panels),
            css + "".join("\n" + (PLAYER_DIR / f"{name}.css").read_text() for name in panels))


def lockstep_sources() -> tuple[str, str]:
    """The stage player's JavaScript and CSS with the lockstep stages' after them."""
    js, css = player_sources()
    return js + "\n" + (PLAYER_DIR / "lockstep.js").read_text(), css + "\n" + (PLAYER_DIR / "lockstep.css").read_text()


def encoded_frames(frames: Sequence[Frame], lang: str) -> list[dict]:
    """Every frame as a delta against the one before (frame 0 against the empty view), its words in `lang`: the
    views the app's stage sends (its narration reads the frame before the step)."""
    deltas, previous = [], EMPTY_VIEW
    for view in player_views(frames, lang):
        deltas.append(encode(previous, view))
        previous = view
    return deltas


def handout_code() -> tuple[str, str]:
    """The handout's JavaScript and CSS (generated texts, printed pages, slides), which need the stage player's."""
    return (PLAYER_DIR / "handout.js").read_text(), (PLAYER_DIR / "handout.css").read_text()


def handout_sources() -> tuple[str, str]:
    """The stage player's JavaScript and CSS with the handout's after them."""
    (js, css), (handout_js, handout_css) = player_sources(), handout_code()
    return js + "\n" + handout_js, css + "\n" + handout_css


def run_message(label: str, frames: Sequence[Frame], key_frames: Sequence[Sequence] = (),
                *, lang: str, model: str | None = None, titles: Sequence[Sequence] = (), cursor: int = 0) -> dict:
    """All of a run in one player message: nothing more can be asked for offline. `key_frames` as
    [step, note, holds], `titles` as [first frame, title] (the stage's own header, session/feed.py); a key frame
    past the frames given is left out (its button would lead past the recorded end)."""
    return {"title": label, "titles": [list(t) for t in titles], "model": model or text(lang, "export.model"),
            "key_frames": [list(k) for k in key_frames if k[0] < len(frames)],
            "run": 0, "from": 0, "frames": encoded_frames(frames, lang),
            "last": len(frames) - 1, "over": True, "end_note": text(lang, "export.end_note"), "cursor": cursor,
            "cursor_moves": 0, "answered": 0, **player_constants(lang)}


def _script_json(data) -> str:
    return json.dumps(data).replace("</", "<\\/")  # nothing in the data can close the script element


def lockstep_message(runs: Sequence[tuple[str, Sequence[Frame]]], *, lang: str, last_step: int | None = None) -> dict:
    """What the lockstep stages (player/lockstep.js) play: every run's player message (its frames up to
    `last_step`, when given) and the marks between them."""
    if last_step is not None:
        runs = [(label, list(frames)[:last_step + 1]) for label, frames in runs]
    return {"runs": [run_message(label, frames, lang=lang) for label, frames in runs],
            **lockstep_marks(runs, lang=lang)}


def _page(title: str, lang: str, js: str, css: str, body: str, mount: str) -> str:
    return (f"<!DOCTYPE html><html lang='{lang}'><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
            f"<style>{css}\nbody{{font-family:sans-serif;margin:1.5rem 2rem}}</style></head><body>{body}"
            f"<script>{js}</script><script>\n{mount}\n</script></body></html>")


def animation_html(runs: Sequence[tuple[str, Sequence[Frame]]], title: str = "schedlab run",
                   *, lang: str) -> str:
    """One offline HTML page that plays each (label, frames), its words in `lang`: one player, or two to four
    stages in lockstep."""
    js, css = lockstep_sources()
    message = lockstep_message(runs, lang=lang)
    runs_json, marks = _script_json(message.pop("runs")), _script_json(message)
    mount = ("SchedlabPlayer.mountStatic(document.getElementById('stages'), RUNS[0]);" if len(runs) == 1 else
             "SchedlabLockstep.mountStatic(document.getElementById('stages'), {runs: RUNS, ...MARKS});")
    return _page(title, lang, js, css, f"<h2>{html.escape(title)}</h2><section id='stages'></section>",
                 f"const RUNS = {runs_json};\nconst MARKS = {marks};\n{mount}")


def handout_message(handout: Handout) -> dict:
    """The stepper's run as the player's one message: its frames up to `handout.last`, its key frames and titles,
    opening at the frame shown."""
    return run_message(handout.title, handout.shown, handout.key_frames, lang=handout.lang, model=handout.model,
                       titles=handout.titles, cursor=min(handout.cursor, handout.last))


def handout_html(handout: Handout) -> str:
    """The run on screen as one offline page: the player, each request's generated text following it, and, printed
    (Ctrl+P, or `handout_pdf`), a title page and one page per key frame."""
    js, css = handout_sources()
    return _page(handout.title, handout.lang, js, css, "<main id='handout'></main>",
                 f"const RUN = {_script_json(handout_message(handout))};\nconst HANDOUT = "
                 f"{_script_json(handout_extras(handout))};\n"
                 "SchedlabHandout.mountStatic(document.getElementById('handout'), RUN, HANDOUT);")


def slide_html(message: dict) -> str:
    """A run's player laid out as a slide (SLIDE_LAYOUT, no buttons) for the browser to photograph."""
    js, css = handout_sources()
    return _page(message["title"], message["lang"], js, css, "<main id='slide'></main>",
                 f"SchedlabHandout.mountSlide(document.getElementById('slide'), {_script_json(message)});")


# -- pictures for slides and the printed handout: the pages above drawn in headless Chromium ---------------

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]
GIF_FRAMES = 80  # each costs a screenshot in the browser
SLIDE_LAYOUT = (1280, 720)  # CSS pixels; a larger slide is the same layout drawn at a higher pixel ratio
SLIDE_SIZES = {"1280x720": 1.0, "1920x1080": 1.5}
PDF_TIMEOUT_S = 60  # the most one PDF may take the server's browser
# One browser at a time on the server: a class's steps share its cores, and a student's GIF (80 screenshots) or
# PDF must not become thirty students' at once. A second build waits its turn in its own session.
_BROWSER_TURN = threading.Lock()


def _chromium_missing():
    if not Path(CHROMIUM).is_file():  # said as the page shows it, not a traceback
        raise MessageError("export.no_browser", path=CHROMIUM)


def _in_chromium(page_html: str, width: int, height: int, photograph, scale: float = 1.0) -> list[bytes]:
    """Open `page_html` offline in headless Chromium at width x height CSS pixels, `scale` device pixels each (no
    motion), and return `photograph(page)`'s PNG bytes."""
    from playwright.sync_api import Error as PlaywrightError
    from playwright.sync_api import sync_playwright

    _chromium_missing()
    with _BROWSER_TURN, tempfile.TemporaryDirectory() as folder:
        page_path = Path(folder) / "page.html"
        page_path.write_text(page_html)
        try:
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
                try:
                    page = browser.new_page(viewport={"width": width, "height": height}, device_scale_factor=scale,
                                            reduced_motion="reduce")
                    page.route("**/*", lambda route: route.continue_() if route.request.url.startswith("file:")
                               else route.abort())  # nothing but the page itself
                    page.goto(page_path.as_uri())
                    return photograph(page)
                finally:
                    browser.close()
        except PlaywrightError as e:
            raise MessageError("export.browser_failed", path=CHROMIUM, detail=str(e).splitlines()[0]) from None


def gif_steps(num_frames: int, max_frames: int, first: int = 0) -> list[int]:
    """At most about `max_frames` evenly spaced frame indices from `first` to `num_frames - 1`, both ends included."""
    every = max(1, -(-(num_frames - first) // max_frames))
    return sorted({*range(first, num_frames, every), num_frames - 1})


def slide_pngs(message: dict, steps: Sequence[int], size: str = "1280x720") -> list[bytes]:
    """PNGs of a player message's frames `steps`, each laid out as a slide of `size` (SLIDE_SIZES): the queues,
    the whole KV pool, the narration and the key frame's note, no buttons."""
    def photograph(page):
        player = page.locator("[data-testid=stage-player]")
        player.wait_for()
        shots = []
        for k in steps:
            player.evaluate("(root, k) => SchedlabHandout.showSlide(root.player, k)", k)
            shots.append(page.screenshot())
        return shots

    return _in_chromium(slide_html(message), *SLIDE_LAYOUT, photograph, scale=SLIDE_SIZES[size])


def gif_of(pngs: Sequence[bytes], frame_ms: int = FRAME_MS) -> bytes:
    """An animated GIF of these pictures, looping."""
    import io

    from PIL import Image

    # 128 colours by octree: a slide's flat colours keep, and it encodes 4x faster than the default (median cut)
    images = [Image.open(io.BytesIO(png)).convert("RGB").quantize(colors=128, method=Image.Quantize.FASTOCTREE)
              for png in pngs]
    out = io.BytesIO()
    images[0].save(out, format="GIF", save_all=True, append_images=images[1:], duration=frame_ms, loop=0)
    return out.getvalue()


def run_gif(frames: Sequence[Frame], label: str = "run", size: str = "1280x720", max_frames: int = GIF_FRAMES,
            frame_ms: int = FRAME_MS, *, lang: str) -> bytes:
    """An animated GIF of a run as the stage player draws it, as slides of `size`."""
    steps = gif_steps(len(frames), max_frames)
    return gif_of(slide_pngs(run_message(label, frames, lang=lang), steps, size), frame_ms)


def handout_pngs(handout: Handout, steps: Sequence[int], size: str = "1280x720") -> list[bytes]:
    """Slides of the stepper's run at `steps` (each at most `handout.last`)."""
    return slide_pngs(handout_message(handout), steps, size)


def handout_pdf(handout: Handout, timeout_s: float = PDF_TIMEOUT_S) -> bytes:
    """The printed handout (a title page, one page per key frame) as PDF, from Chromium's own printing of
    `handout_html`; a MessageError when there is no browser, it fails or it takes more than `timeout_s`."""
    _chromium_missing()
    with _BROWSER_TURN, tempfile.TemporaryDirectory() as folder:
        page, pdf = Path(folder) / "handout.html", Path(folder) / "handout.pdf"
        page.write_text(handout_html(handout))
        command = [CHROMIUM, "--headless", *CHROMIUM_ARGS, f"--user-data-dir={folder}/profile",
                   "--no-pdf-header-footer", f"--print-to-pdf={pdf}", page.as_uri()]
        browser = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                   start_new_session=True)  # its own process group: a timeout ends all of it
        try:
            _, errors = browser.communicate(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            os.killpg(browser.pid, signal.SIGKILL)
            browser.communicate()
            raise MessageError("export.pdf_timeout", s=timeout_s) from None
        if not pdf.is_file() or not pdf.stat().st_size:
            detail = (errors.strip().splitlines() or [f"exit status {browser.returncode}"])[-1]
            raise MessageError("export.browser_failed", path=CHROMIUM, detail=detail)
        return pdf.read_bytes()
