"""The stage player's decoder (player/decode.js, as served) run in node over deltas the server encoded: the views it
rebuilds, and what it says of deltas that do not fit the view before them."""

import json
import shutil
import subprocess

import pytest

from player.assets import player_sources
from viz.frame_payload import EMPTY_VIEW

NODE = shutil.which("node")
needs_node = pytest.mark.skipif(NODE is None, reason="node is not installed (tools/ensure_debian_packages.py "
                                                     "installs it)")
# Reads {empty, runs: {name: [delta...]}, bad: [[view, delta]...]} on stdin; writes each run's views in order, and
# for each bad delta the decoder's error message (null if it took it).
DECODE_IN_NODE = """
globalThis.window = globalThis;
const fs = require('fs');
(0, eval)(fs.readFileSync(process.argv[2], 'utf8'));  // the player as served
const {decode} = window.SchedlabPlayer, input = JSON.parse(fs.readFileSync(0, 'utf8'));
const runs = {};
for (const [name, deltas] of Object.entries(input.runs)) {
  let view = input.empty;
  runs[name] = deltas.map(delta => (view = decode(view, delta)));
}
const refusal = (view, delta) => { try { decode(view, delta); return null; } catch (e) { return e.message; } };
const bad = input.bad.map(([view, delta]) => refusal(view, delta));
process.stdout.write(JSON.stringify({runs, bad}));
"""


def decoded_in_node(tmp_path, runs: dict, bad: list) -> dict:
    """{runs: each run's views as the player decodes its deltas, bad: the player's refusal of each bad (view, delta),
    None where it took it}."""
    bundle, script = tmp_path / "player.js", tmp_path / "decode_all.js"
    bundle.write_text(player_sources()[0])
    script.write_text(DECODE_IN_NODE)
    done = subprocess.run([NODE, str(script), str(bundle)], input=json.dumps({"empty": EMPTY_VIEW, "runs": runs,
                                                                             "bad": bad}),
                          capture_output=True, text=True, timeout=60, check=True)
    return json.loads(done.stdout)
