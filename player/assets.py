"""The stage player's files as the server serves them: read from this folder, in the order they run, the wire
format's names written in (viz/frame_payload.py owns them). The Streamlit components (ui/) and the offline pages
(viz/html_export.py) both inline these.
"""

from __future__ import annotations

import json
from pathlib import Path

from viz.frame_payload import WIRE

PLAYER_DIR = Path(__file__).resolve().parent
WIRE_SLOT = "SCHEDLAB_WIRE"  # decode.js: `const WIRE = SCHEDLAB_WIRE;`, replaced by viz.frame_payload.WIRE
# The stage player's files, one job each, in the order they run (player/player.js says what each does).
PLAYER_FILES = ("decode.js", "transport.js", "follow.js", "panels.js", "render.js", "pool.js", "player.js")
# The renderers of the schedulers' own panels: the generic shapes' for any kind's (SchedlabPlayer.registerShape:
# a card of facts and meters), then those registered under their panel's id (SchedlabPlayer.registerPanel,
# player/panels.js), each named after the panel it draws: vLLM's SchedulerOutput, a radix tree.
PANELS = ("panel_shapes", "scheduler_output_view", "tree_view")


def _read(name: str) -> str:
    return (PLAYER_DIR / name).read_text()


def player_sources() -> tuple[str, str]:
    """The stage player's JavaScript (its files in order), with the wire format's names written in (decode.js
    reads them as `WIRE`), and its CSS; the panels drawn below the stage after them."""
    js = "\n".join(_read(name) for name in PLAYER_FILES)
    assert js.count(WIRE_SLOT) == 1, f"the player names {WIRE_SLOT} once, where it reads the wire format's names"
    js, css = js.replace(WIRE_SLOT, json.dumps(WIRE)), _read("player.css")
    return (js + "".join("\n" + _read(f"{name}.js") for name in PANELS),
            css + "".join("\n" + _read(f"{name}.css") for name in PANELS))


def lockstep_sources() -> tuple[str, str]:
    """The stage player's JavaScript and CSS with the lockstep stages' after them."""
    js, css = player_sources()
    return js + "\n" + _read("lockstep.js"), css + "\n" + _read("lockstep.css")


def handout_code() -> tuple[str, str]:
    """The handout's JavaScript and CSS (generated texts, printed pages, slides), which need the stage player's."""
    return _read("handout.js"), _read("handout.css")


def handout_sources() -> tuple[str, str]:
    """The stage player's JavaScript and CSS with the handout's after them."""
    (js, css), (handout_js, handout_css) = player_sources(), handout_code()
    return js + "\n" + handout_js, css + "\n" + handout_css
