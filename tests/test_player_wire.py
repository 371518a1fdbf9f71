"""The stage player and the server speak one wire format: the player gets the server's names of every position
(viz/frame_payload.py WIRE, written into decode.js as it is served) and reads the arrays only through them; the
names say what each position holds; what the player asks for is what the feed reads."""

import dataclasses
import json
import re
from pathlib import Path

from engine.inputs.scenario import SCENARIOS_DIR, load_scenario
from player.assets import PLAYER_DIR, PLAYER_FILES, WIRE_SLOT, player_sources
from session.feed import Feed, Request, run_header
from session.lab import Lab, RunInputs
from viz.budget import SEGMENT_FIELDS
from viz.frame_payload import (
    BLOCK_FIELDS,
    EMPTY_VIEW,
    KEY_FRAME_FIELDS,
    METRIC_FIELDS,
    QUEUE_ROWS,
    REQUEST_FIELDS,
    ROW_CELLS,
    SCALARS,
    SPARSE,
    WIRE,
    stage_view,
)

PLAYER_JS = "\n".join((PLAYER_DIR / name).read_text() for name in PLAYER_FILES)  # as written, before serving
# The player's names for the position tables it builds from WIRE.
TABLES = {"F": REQUEST_FIELDS, "B": BLOCK_FIELDS, "M": METRIC_FIELDS, "K": KEY_FRAME_FIELDS, "S": SEGMENT_FIELDS}


def test_the_player_is_served_the_servers_wire_format():
    js, _css = player_sources()
    served = json.loads(re.search(r"const WIRE = (\{.*?\});\n", js).group(1))
    assert served == json.loads(json.dumps(WIRE))
    assert served["empty_view"] == EMPTY_VIEW and tuple(served["scalars"]) == SCALARS
    assert WIRE_SLOT not in js and PLAYER_JS.count(f"const WIRE = {WIRE_SLOT};") == 1


def test_the_player_reads_every_array_position_by_a_name_the_server_gives():
    for table, names in TABLES.items():
        assert re.search(rf"\b{table} = positions\(WIRE\.\w+\)", PLAYER_JS), f"the player builds {table} from WIRE"
        read = set(re.findall(rf"\b{table}\.(\w+)", PLAYER_JS))
        assert read and read <= set(names), f"{table}.{sorted(read - set(names))} is not a name the server sends"
    for names in TABLES.values():
        assert len(set(names)) == len(names)
    # No position read by number off a request (r), block (b), metrics (m), key frame (k, kf) or segment (s).
    assert not re.findall(r"\b(?:r|b|m|k|kf|s)\[\d+\]", PLAYER_JS)
    assert "const EMPTY = WIRE.empty_view, SCALARS = WIRE.scalars, SPARSE = new Set(WIRE.sparse);" in PLAYER_JS
    assert set(SPARSE) <= set(SCALARS)


def test_the_player_draws_no_more_rows_and_cells_than_the_server_sends_tokens_for():
    sizes = re.search(r"const SIZES = (.*);", PLAYER_JS).group(1)
    assert "laptop: {boxes: WIRE.row_cells, rows: WIRE.queue_rows," in sizes
    boxes, rows = map(int, re.search(r"present: \{boxes: (\d+), rows: (\d+)", sizes).groups())
    assert boxes <= ROW_CELLS and rows <= QUEUE_ROWS


def test_the_wire_names_say_what_each_position_holds():
    scenario = load_scenario(SCENARIOS_DIR / "05_prefix_caching.toml", runner="fake")
    lab = Lab(RunInputs.from_scenario(scenario, "fake"))
    while lab.last < 49:  # frame 49: shared blocks, and cached-free ones whose tokens a request holds
        lab.step()
    frame = lab.frame
    view = stage_view(frame, lab.frames[48], lang="en")
    for request, fields in zip(frame.requests, view["requests"], strict=True):
        named = dict(zip(REQUEST_FIELDS, fields, strict=True))
        assert named == {name: getattr(request, name) for name in REQUEST_FIELDS} | {
            "block_table": list(request.block_table)}
    assert any(b.ref_count > 1 for b in frame.blocks)
    assert any(source is not None for _ref, _hash, source in view["blocks"])
    for block, fields in zip(frame.blocks, view["blocks"], strict=True):
        named = dict(zip(BLOCK_FIELDS, fields, strict=True))
        assert named["ref_count"] == block.ref_count and (named["hash"] is None) == (block.hash is None)
        if named["source"] is not None:
            assert block.is_cached_free and named["source"][2] == block.tokens_len
    metrics = dict(zip(METRIC_FIELDS, view["metrics"], strict=True))
    assert metrics == {name: getattr(frame.metrics, name) for name in METRIC_FIELDS} | {
        "kv_usage": round(frame.metrics.kv_usage, 4)}
    header = run_header(lab, "fake", "t", "en")
    key_frames = [dict(zip(KEY_FRAME_FIELDS, k, strict=True)) for k in header["key_frames"]]
    assert [k["step"] for k in key_frames] == [k.step for k in lab.key_frames]
    assert [k["note"] for k in key_frames] == [k.note_in("en") for k in lab.key_frames]


def test_what_the_player_asks_and_reads_is_what_the_feed_reads_and_sends():
    asked = re.search(r"this\.send\(\{(.*?)\}\);", PLAYER_JS).group(1)
    assert [part.split(":")[0].strip() for part in asked.split(",")] == [
        f.name for f in dataclasses.fields(Request)]
    lab = Lab(RunInputs.from_scenario(load_scenario(SCENARIOS_DIR / "02_preemption.toml", runner="fake"), "fake"))
    sent = set(Feed(lang="en").message(lab, run_header(lab, "fake", "t", "en")))
    read = set(re.findall(r"\bm\.(\w+)", PLAYER_JS))
    stage_py = (Path(__file__).resolve().parents[1] / "ui" / "stage.py").read_text()
    added = set(re.findall(r"(\w+)=", re.search(r"message\.update\((.*?)\)\n", stage_py, re.S).group(1)))
    assert {"error", "present", "titles"} <= added  # what ui/stage.py adds to the feed's message
    assert read <= sent | added, sorted(read - sent - added)
