"""Self-contained HTML pages that play runs offline with the app's own stage player (player/, its files read by
player/assets.py): its JS and CSS inlined, every frame embedded as the deltas the app sends (viz/frame_payload.py),
nothing fetched. Two runs or more play in lockstep (player/lockstep.js), as the policy lab shows them; the stepper's
run plays as a handout (player/handout.js, viz/handout.py): the player with each request's generated text, and,
printed, a title page and one page per key frame. Pure: the pages as text. Pictures of them (PNG, GIF) and the
printed handout (PDF) are drawn by headless Chromium in render/.
"""

from __future__ import annotations

import html
import json
from collections.abc import Sequence

from engine.run.frame import Frame
from i18n import text
from player.assets import handout_sources, lockstep_sources
from viz.frame_payload import EMPTY_VIEW, encode, player_constants, player_views
from viz.handout import Handout, handout_extras
from viz.lockstep import lockstep_marks


def encoded_frames(frames: Sequence[Frame], lang: str) -> list[dict]:
    """Every frame as a delta against the one before (frame 0 against the empty view), its words in `lang`: the
    views the app's stage sends (its narration reads the frame before the step)."""
    deltas, previous = [], EMPTY_VIEW
    for view in player_views(frames, lang):
        deltas.append(encode(previous, view))
        previous = view
    return deltas


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


def lockstep_message(runs: Sequence[tuple[str, Sequence[Frame]]], *, lang: str, last_step: int | None = None,
                     told: Sequence[tuple[int, str]] | None = None, stopped: Sequence[str | None] = ()) -> dict:
    """What the lockstep stages (player/lockstep.js) play: every run's player message (its frames up to
    `last_step`, when given) and the marks between them (`told`: the partings in the caller's words; `stopped`: per
    run, what stopped it early, shown on its stage from its last frame on, or None)."""
    if last_step is not None:
        runs = [(label, list(frames)[:last_step + 1]) for label, frames in runs]
    return {"runs": [run_message(label, frames, lang=lang) for label, frames in runs],
            **lockstep_marks(runs, lang=lang, told=told), "stopped": list(stopped)}


def _page(title: str, lang: str, js: str, css: str, body: str, mount: str) -> str:
    return (f"<!DOCTYPE html><html lang='{lang}'><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
            f"<style>{css}\nbody{{font-family:sans-serif;margin:1.5rem 2rem}}</style></head><body>{body}"
            f"<script>{js}</script><script>\n{mount}\n</script></body></html>")


def animation_html(runs: Sequence[tuple[str, Sequence[Frame]]], title: str = "schedlab run",
                   *, lang: str, stopped: Sequence[str | None] = ()) -> str:
    """One offline HTML page that plays each (label, frames), its words in `lang`: one player, or two or more
    stages in lockstep (`stopped`: as `lockstep_message` says them)."""
    js, css = lockstep_sources()
    message = lockstep_message(runs, lang=lang, stopped=stopped)
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
    (Ctrl+P, or render/pdf.py's `handout_pdf`), a title page and one page per key frame."""
    js, css = handout_sources()
    return _page(handout.title, handout.lang, js, css, "<main id='handout'></main>",
                 f"const RUN = {_script_json(handout_message(handout))};\nconst HANDOUT = "
                 f"{_script_json(handout_extras(handout))};\n"
                 "SchedlabHandout.mountStatic(document.getElementById('handout'), RUN, HANDOUT);")


def slide_html(message: dict) -> str:
    """A run's player laid out as a slide (render/images.py's SLIDE_LAYOUT, no buttons) for the browser to
    photograph."""
    js, css = handout_sources()
    return _page(message["title"], message["lang"], js, css, "<main id='slide'></main>",
                 f"SchedlabHandout.mountSlide(document.getElementById('slide'), {_script_json(message)});")


def gif_steps(num_frames: int, max_frames: int, first: int = 0) -> list[int]:
    """At most about `max_frames` evenly spaced frame indices from `first` to `num_frames - 1`, both ends included."""
    every = max(1, -(-(num_frames - first) // max_frames))
    return sorted({*range(first, num_frames, every), num_frames - 1})
