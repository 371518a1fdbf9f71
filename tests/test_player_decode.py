"""The player decodes what the server encodes: the player's JavaScript as it is served, run in node over golden
deltas the server's encoder wrote (tests/data/golden_deltas.json, tools/golden_deltas.py), rebuilds the very views
the server computes from the frames, as the server's reference decoder (viz/frame_payload.decode) does; a delta
that does not fit the view before it is refused by both."""

import json

import pytest

from tests.helpers.node_decode import decoded_in_node, needs_node
from tools.golden_deltas import GOLDEN_DELTAS, RUNS, VIEWS_EDITED, golden_deltas, golden_views
from viz.frame_payload import EMPTY_VIEW, decode
from viz.sched_view import RADIX_TREE

GOLDEN = json.loads(GOLDEN_DELTAS.read_text())


def _reference_views(deltas: list[dict]) -> list[dict]:
    views, view = [], EMPTY_VIEW
    for delta in deltas:
        views.append(view := decode(view, delta))
    return views


def _bad_deltas() -> list[tuple[dict, dict]]:
    """(view, delta) pairs that do not fit: tokens past a request's length, a request skipping an id."""
    first = _reference_views(GOLDEN["02_preemption"][:1])[0]
    step = {key: GOLDEN["02_preemption"][1][key] for key in ("step", "time", "kind", "batch", "metrics", "narration",
                                                             "wall_ms", "overlapped")}
    past_the_end = {**step, "tok": {"0": [2, [[1, [5, 6], None]]]}}
    skipping = {**step, "req": {str(len(first["requests"]) + 1): first["requests"][0]}}
    return [(first, past_the_end), (first, skipping)]


def test_the_servers_encoder_still_writes_the_golden_deltas():
    assert golden_deltas() == GOLDEN, "the wire deltas changed: if on purpose, python -m tools.golden_deltas"


def test_the_golden_runs_hold_what_a_delta_can_carry():
    frames = [delta for deltas in GOLDEN.values() for delta in deltas]
    assert any("nb" in deltas[k] for deltas in GOLDEN.values() for k in range(1, len(deltas)))  # a pool rebuilt
    runs = [run for delta in frames for _length, runs in delta.get("tok", {}).values() for run in runs]
    assert any(pieces for _start, _ids, pieces in runs)  # text pieces
    trees = [dict(delta["panels"])[RADIX_TREE] for delta in GOLDEN["sglang_tree"] if "panels" in delta]
    assert len(trees) == len(GOLDEN["sglang_tree"])  # a scheduler's own panel on every frame of its run
    assert all(any(tree[key] for tree in trees) for key in ("split", "evicted", "retracted", "matched", "inserted"))
    assert not any("panels" in delta for name in RUNS if name != "sglang_tree" for delta in GOLDEN[name])
    assert set(GOLDEN) == {*RUNS, VIEWS_EDITED}
    edited = golden_views(VIEWS_EDITED)
    assert edited[-2]["pieces"].count(None) < edited[-1]["pieces"].count(None)  # a request's text pieces dropped
    shrunk = False
    for name in GOLDEN:
        views = golden_views(name)
        shrunk |= any(len(b) < len(a) for before, after in zip(views, views[1:], strict=False)
                      for a, b in zip(before["tokens"], after["tokens"], strict=False))
    assert shrunk  # speculative tokens rejected: a request's tokens shrink


def test_the_reference_decoder_rebuilds_the_servers_views_from_the_golden_deltas():
    for name, deltas in GOLDEN.items():
        assert _reference_views(deltas) == golden_views(name), name


@needs_node
def test_the_players_decoder_rebuilds_the_servers_views_from_the_golden_deltas(tmp_path):
    decoded = decoded_in_node(tmp_path, GOLDEN, [])["runs"]
    for name in GOLDEN:
        views = golden_views(name)
        assert len(decoded[name]) == len(views) == len(GOLDEN[name])
        for k, (player, server) in enumerate(zip(decoded[name], views, strict=True)):
            assert player == server, f"{name} frame {k}"


@needs_node
def test_a_delta_that_does_not_fit_the_view_before_it_is_refused_by_both_decoders(tmp_path):
    bad = _bad_deltas()
    for view, delta in bad:
        with pytest.raises(ValueError, match="does not fit"):
            decode(view, delta)
    refused = decoded_in_node(tmp_path, {}, bad)["bad"]
    assert "outside its 2" in refused[0] and "skips an id" in refused[1]
