"""A self-contained HTML page that plays runs offline with the app's own stage player (player/): its JS and CSS
inlined, every frame embedded as the deltas the app sends (viz/frame_payload.py), nothing fetched. Two runs or more
play in lockstep (player/lockstep.js), as the policy lab shows them. An animated GIF is the same page photographed
frame by frame in headless Chromium.
"""

from __future__ import annotations

import html
import json
from collections.abc import Sequence
from pathlib import Path

from engine.run.frame import Frame
from i18n import MessageError, text
from viz.frame_payload import EMPTY_VIEW, WIRE, encode, player_constants, player_views
from viz.lockstep import lockstep_marks

PLAYER_DIR = Path(__file__).resolve().parents[1] / "player"
FRAME_MS = 250
WIRE_SLOT = "SCHEDLAB_WIRE"  # player.js: `const WIRE = SCHEDLAB_WIRE;`, replaced by viz.frame_payload.WIRE


def player_sources() -> tuple[str, str]:
    """The stage player's JavaScript, with the wire format's names written in (player.js reads them as `WIRE`),
    and its CSS."""
    js = (PLAYER_DIR / "player.js").read_text()
    assert js.count(WIRE_SLOT) == 1, f"player.js names {WIRE_SLOT} once, where it reads the wire format's names"
    return js.replace(WIRE_SLOT, json.dumps(WIRE)), (PLAYER_DIR / "player.css").read_text()


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


def run_message(label: str, frames: Sequence[Frame], key_frames: Sequence[tuple[int, str]] = (),
                *, lang: str) -> dict:
    """All of a run in one player message: nothing more can be asked for offline."""
    return {"title": label, "model": text(lang, "export.model"), "key_frames": [list(k) for k in key_frames],
            "run": 0, "from": 0, "frames": encoded_frames(frames, lang), "last": len(frames) - 1, "over": True,
            "end_note": text(lang, "export.end_note"), "cursor": 0,
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


def animation_html(runs: Sequence[tuple[str, Sequence[Frame]]], title: str = "schedlab run",
                   *, lang: str) -> str:
    """One offline HTML page that plays each (label, frames), its words in `lang`: one player, or two to four
    stages in lockstep."""
    js, css = lockstep_sources()
    message = lockstep_message(runs, lang=lang)
    runs_json, marks = _script_json(message.pop("runs")), _script_json(message)
    mount = ("SchedlabPlayer.mountStatic(document.getElementById('stages'), RUNS[0]);" if len(runs) == 1 else
             "SchedlabLockstep.mountStatic(document.getElementById('stages'), {runs: RUNS, ...MARKS});")
    return (f"<!DOCTYPE html><html lang='{lang}'><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
            f"<style>{css}\nbody{{font-family:sans-serif;margin:1.5rem 2rem}}</style>"
            f"</head><body><h2>{html.escape(title)}</h2><section id='stages'></section><script>{js}</script><script>\n"
            f"const RUNS = {runs_json};\nconst MARKS = {marks};\n{mount}\n</script></body></html>")


# -- a GIF for slides: the player drawn in headless Chromium, photographed frame by frame --------------------

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]
GIF_FRAMES = 80  # each costs a screenshot in the browser


def _in_chromium(page_html: str, width: int, height: int, photograph) -> list[bytes]:
    """Open `page_html` offline in headless Chromium at width x height (no motion) and return
    `photograph(page)`'s PNG bytes."""
    import tempfile

    from playwright.sync_api import Error as PlaywrightError
    from playwright.sync_api import sync_playwright

    if not Path(CHROMIUM).is_file():  # said as the page shows it, not a traceback
        raise MessageError("export.no_browser", path=CHROMIUM)
    with tempfile.TemporaryDirectory() as folder:
        page_path = Path(folder) / "page.html"
        page_path.write_text(page_html)
        try:
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
                try:
                    page = browser.new_page(viewport={"width": width, "height": height}, reduced_motion="reduce")
                    page.goto(page_path.as_uri())
                    return photograph(page)
                finally:
                    browser.close()
        except PlaywrightError as e:
            raise MessageError("export.browser_failed", path=CHROMIUM, detail=str(e).splitlines()[0]) from None


def gif_steps(num_frames: int, max_frames: int) -> list[int]:
    """At most about `max_frames` evenly spaced frame indices, the first and the last included."""
    every = max(1, -(-num_frames // max_frames))
    return sorted({*range(0, num_frames, every), num_frames - 1})


def run_gif(frames: Sequence[Frame], label: str = "run", width: int = 960, height: int = 540,
            max_frames: int = GIF_FRAMES, frame_ms: int = FRAME_MS, *, lang: str) -> bytes:
    """An animated GIF of a run as the stage player draws it, looping."""
    import io

    from PIL import Image

    def photograph(page):
        player = page.locator("[data-testid=stage-player]")
        player.wait_for()
        shots = []
        for k in gif_steps(len(frames), max_frames):
            player.evaluate("(root, k) => root.player.show(k)", k)
            shots.append(page.screenshot())
        return shots

    pngs = _in_chromium(animation_html([(label, frames)], label, lang=lang), width, height, photograph)
    images = [Image.open(io.BytesIO(png)).convert("RGB") for png in pngs]
    out = io.BytesIO()
    images[0].save(out, format="GIF", save_all=True, append_images=images[1:], duration=frame_ms, loop=0)
    return out.getvalue()
