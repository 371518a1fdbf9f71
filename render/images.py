"""Pictures for slides: a run's player laid out as a slide (viz/html_export.slide_html), photographed in headless
Chromium frame by frame, and an animated GIF of them."""

from __future__ import annotations

import io
from collections.abc import Sequence

from engine.run.frame import Frame
from render.chromium import in_chromium
from viz.handout import Handout
from viz.html_export import gif_steps, handout_message, run_message, slide_html

FRAME_MS = 250  # a GIF's frame
GIF_FRAMES = 80  # each costs a screenshot in the browser
SLIDE_LAYOUT = (1280, 720)  # CSS pixels; a larger slide is the same layout drawn at a higher pixel ratio
SLIDE_SIZES = {"1280x720": 1.0, "1920x1080": 1.5}


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

    return in_chromium(slide_html(message), *SLIDE_LAYOUT, photograph, scale=SLIDE_SIZES[size])


def gif_of(pngs: Sequence[bytes], frame_ms: int = FRAME_MS) -> bytes:
    """An animated GIF of these pictures, looping."""
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
