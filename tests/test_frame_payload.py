"""The player's frame payload: deltas that rebuild every frame of every preset, and the feed that sends them."""

import json

import pytest

from engine.inputs.scenario import load_scenario, preset_paths
from engine.run.engine import Engine
from engine.run.frame import Frame
from engine.run.recipe import Request as RecipeRequest
from engine.run.recipe import RunSpec
from runner.share import current_share
from scheduler import Config
from scheduler.factory import SCHEDULER_KINDS, scheduler_info
from scheduler.sequence import PLACEHOLDER
from session.feed import Feed, Request
from session.lab import Lab, RunInputs
from viz.frame_payload import (
    EMPTY_VIEW,
    QUEUE_ROWS,
    ROW_CELLS,
    ROW_ENDS,
    decode,
    encode,
    player_strings,
    player_views,
    stage_view,
    token_window,
)


def _engine(path):
    engine = load_scenario(path, "fake").engine()
    engine.run()
    return engine


@pytest.mark.parametrize("path", preset_paths(), ids=lambda p: p.stem)
def test_deltas_rebuild_every_frame_of_every_preset(path):
    frames = list(_engine(path).frames)
    previous = EMPTY_VIEW
    for view in player_views(frames, lang="en"):
        delta = json.loads(json.dumps(encode(previous, view)))  # what reaches the browser
        assert decode(previous, delta) == view
        previous = view
    for before, frame in zip(frames, frames[1:], strict=False):  # views that drop tokens held before still round-trip
        previous, view = stage_view(before, lang="en"), stage_view(frame, lang="en")
        assert decode(previous, json.loads(json.dumps(encode(previous, view)))) == view


@pytest.mark.parametrize("name", ["05_prefix_caching", "08_chat_poisson"])
def test_the_player_holds_the_tokens_its_rows_can_show_and_a_frame_stays_under_5_kb(name):
    """Long chat prompts arriving together: each frame's delta carries only the tokens a row can draw."""
    frames = list(_engine(next(p for p in preset_paths() if p.stem == name)).frames)
    previous = EMPTY_VIEW
    for frame, view in zip(frames, player_views(frames, lang="en"), strict=True):
        assert len(json.dumps(encode(previous, view), separators=(",", ":"))) <= 5000
        previous = view
        drawn = {*frame.running[:QUEUE_ROWS], *frame.waiting[:QUEUE_ROWS]}
        this_step = dict(zip(frame.batch.seq_ids, frame.batch.num_tokens, strict=True))
        for request in frame.requests:
            ids, held = list(request.token_ids), view["tokens"][request.id]
            assert all(h in (None, i) for h, i in zip(held, ids, strict=True))  # never a stale token
            if request.id in drawn:
                shown = token_window(len(ids), request.num_computed_tokens, this_step.get(request.id, 0))
                assert all(held[i] == ids[i] for positions in shown for i in positions)
    longest = max(len(r.token_ids) for r in frames[-1].requests)
    assert longest > 3 * ROW_CELLS, "the preset no longer has a prompt long enough to elide"


@pytest.mark.parametrize("name", ["10_overlap", "speculative_decoding", "08_chat_poisson"])
def test_a_view_built_on_the_one_before_is_the_view_built_afresh(name):
    """stage_view keeps what did not change since the frame before (requests, blocks, the tokens of a request not
    drawn). Built as the app's feed builds them, each view as soon as its step ran: under overlapped scheduling a
    token still being computed lands in place a step later, under speculative decoding rejected drafts shrink a
    request; nothing kept is stale."""
    engine = load_scenario(next(p for p in preset_paths() if p.stem == name), "fake").engine()
    view, placeholders = stage_view(engine.frames[0], lang="en"), 0
    while not engine.is_finished and engine.step_count < 200:
        engine.step()
        frame = engine.frames[-1]
        view, fresh = stage_view(frame, engine.frames[-2], lang="en", held=view), stage_view(frame, lang="en")
        assert (view["requests"], view["blocks"]) == (fresh["requests"], fresh["blocks"])
        for request in frame.requests:
            ids, held = list(request.token_ids), view["tokens"][request.id]
            assert len(held) == len(ids) and all(h in (None, i) for h, i in zip(held, ids, strict=True))
            placeholders += PLACEHOLDER in held
    assert (placeholders > 0) == (name == "10_overlap")


def test_a_view_holds_what_the_stage_draws():
    engine = _engine(next(p for p in preset_paths() if p.stem == "02_preemption"))
    frame: Frame = next(f for f in engine.frames if f.events_of("preempted"))
    view = stage_view(frame, lang="en")
    assert (view["running"], view["waiting"]) == (list(frame.running), list(frame.waiting))
    assert [b[0] for b in view["blocks"]] == [b.ref_count for b in frame.blocks]
    assert any("preempted" in line for line in view["narration"])
    for request in frame.requests:  # short requests: every token is held
        assert view["tokens"][request.id] == list(request.token_ids)
        assert view["requests"][request.id][-1] == list(request.block_table)


def test_running_requests_left_out_of_a_full_batch_say_why():
    engine = _engine(next(p for p in preset_paths() if p.stem == "01_prefill_first"))
    reasons = [reason for f in engine.frames for _, reason in stage_view(f, lang="en")["sat_out"]]
    assert reasons and all(reason for reason in reasons)
    full = [f for f in engine.frames if len(f.running) > len(f.batch.seq_ids) == f.config.max_num_seqs]
    for frame in full:
        expected = f"batch full, max_num_seqs={frame.config.max_num_seqs}"
        assert all(reason == expected for _, reason in stage_view(frame, lang="en")["sat_out"])


def test_a_malformed_delta_is_a_value_error():
    view = stage_view(_engine(preset_paths()[0]).frames[1], lang="en")
    with pytest.raises(ValueError, match="does not fit"):
        decode(EMPTY_VIEW, {**encode(EMPTY_VIEW, view), "blk": [[10**6, 1, None, None]]})
    with pytest.raises(ValueError):
        decode(EMPTY_VIEW, {"step": 1})


def _lab(name="02_preemption") -> Lab:
    path = next(p for p in preset_paths() if p.stem == name)
    return Lab(RunInputs.from_scenario(load_scenario(path, "fake"), "fake"))


def _replay(messages) -> list[dict]:
    """What a player holding these messages' frames would hold."""
    views, previous = [], EMPTY_VIEW
    for message in messages:
        for delta in message["frames"][len(views) - message["from"]:]:
            previous = decode(previous, delta)
            views.append(previous)
    return views


def test_requests_for_a_target_step_compute_exactly_that_far_and_leave_the_cursor():
    lab, feed = _lab(), Feed(lang="en")
    messages = [feed.message(lab, {})]
    for want in range(1, 6):  # five Step clicks, each answered
        feed.serve(lab, Request(messages[-1]["run"], want - 1, want, want))
        messages.append(feed.message(lab, {}))
    assert lab.last == 5 and lab.cursor == 0
    assert messages[-1]["answered"] == 5
    assert [v["step"] for v in _replay(messages)] == list(range(6))
    assert _replay(messages)[5] == list(player_views(lab.frames, lang="en"))[5]


def test_the_engine_computes_ahead_after_an_answer_and_the_next_request_gets_it_at_once():
    lab, feed = _lab(), Feed(lang="en")
    run = feed.message(lab, {})["run"]
    feed.serve(lab, Request(run, 0, 12, 1), budget_s=0)  # no time to compute: nothing to send yet
    assert lab.last == 0 and len(feed.message(lab, {})["frames"]) == 0
    feed.compute_ahead(lab, budget_s=30)
    assert lab.last == 12 and lab.cursor == 0
    feed.compute_ahead(lab, budget_s=30)  # asked for nothing more: nothing more computed
    assert lab.last == 12
    feed.serve(lab, Request(run, 0, 40, 2), budget_s=30)  # frames are waiting: answered with them, no compute
    assert lab.last == 12 and [f["step"] for f in feed.message(lab, {})["frames"]] == list(range(1, 13))
    feed.compute_ahead(lab, budget_s=30)
    assert lab.last == 40


def test_computing_ahead_is_background_work_and_answering_a_request_is_not(monkeypatch):
    lab, feed, shares = _lab(), Feed(lang="en"), []
    real_step = lab.step
    monkeypatch.setattr(lab, "step", lambda: (shares.append(current_share().background), real_step())[1])
    run = feed.message(lab, {})["run"]
    feed.serve(lab, Request(run, 0, 1, 1), budget_s=30)  # a Step click: computed as the student
    feed.serve(lab, Request(run, 1, 6, 2), budget_s=0)  # no time to compute before the answer
    feed.compute_ahead(lab, budget_s=30)
    assert shares == [False] + [True] * 5  # the rest at the model's background share (runner/share.py)


def test_merged_requests_still_reach_the_last_target():
    lab, feed = _lab(), Feed(lang="en")
    run = feed.message(lab, {})["run"]
    feed.serve(lab, Request(run, 0, 20, 1))
    assert lab.last == 20


def test_a_player_missing_frames_gets_them_again_and_a_new_run_starts_from_zero():
    lab, feed = _lab(), Feed(lang="en")
    first = feed.message(lab, {})
    feed.serve(lab, Request(first["run"], 0, 4, 1))
    feed.message(lab, {})  # lost on the way
    feed.serve(lab, Request(first["run"], 0, 4, 2))
    again = feed.message(lab, {})
    assert again["from"] == 1 and len(again["frames"]) == 4
    lab.reset()
    fresh = feed.message(lab, {})
    assert fresh["run"] == first["run"] + 1 and fresh["from"] == 0 and fresh["cursor_moves"] > first["cursor_moves"]
    assert "strings" in first and "strings" in fresh and "strings" not in again  # the words go with frame 0 only


def test_a_request_past_the_end_of_the_run_says_so():
    lab, feed = _lab("01_prefill_first"), Feed(lang="en")
    run = feed.message(lab, {})["run"]
    feed.serve(lab, Request(run, 0, 10_000, 1), budget_s=30)
    message = feed.message(lab, {})
    assert message["over"] is True and "The run is over" in message["end_note"] and lab.last < 10_000


def test_a_long_rows_tail_stays_within_the_tokens_the_server_sends():
    assert token_window(1000, 1000, 0)[-1] == range(1000 - ROW_ENDS, 1000)
    assert token_window(1000, 1000, 0)[0] == range(ROW_ENDS)


@pytest.mark.parametrize("kind", [k for k in SCHEDULER_KINDS if scheduler_info(k).reserved_units])
def test_a_reserved_unit_is_named_as_its_scheduler_names_it(kind):
    """vLLM's null block and SGLang's padding slot: the view carries the message ids the scheduler declares for its
    reserved unit (never built from its kind), and the player has those words, naming the system."""
    engine = Engine(RunSpec(Config(num_kvcache_blocks=8), [RecipeRequest(0, prompt_token_ids=(1, 2, 3), max_tokens=2)],
                            scheduler=kind))
    engine.run(2)
    words_of = next(player_views(engine.frames, "en"))["cfg"]["words"]
    assert words_of == dict(scheduler_info(kind).words)
    system = scheduler_info(kind).system
    for lang in ("en", "zh"):
        words = player_strings(lang)
        assert system in words[words_of["reserved_pool"]] and system in words[words_of["reserved_unit"]]


@pytest.mark.parametrize("kind", SCHEDULER_KINDS)
def test_the_running_queues_limit_is_named_as_its_scheduler_names_it(kind):
    """The running queue's title names the knob behind its limit as the narration does: max_running_requests under
    the SGLang twin ("the running batch is full (max_running_requests=3)"), max_num_seqs under the others; and says
    what it limits in that scheduler's words (the article's: a step's batch, the twins': the running requests)."""
    engine = Engine(RunSpec(Config(num_kvcache_blocks=8), [RecipeRequest(0, prompt_token_ids=(1, 2, 3), max_tokens=2)],
                            scheduler=kind))
    engine.run(2)
    cfg = next(player_views(engine.frames, "en"))["cfg"]
    assert cfg["max_num_seqs_name"] == ("max_running_requests" if kind == "sglang" else "max_num_seqs")
    assert all("{name}" in player_strings(lang)[cfg["words"]["queue_limit"]] for lang in ("en", "zh"))


@pytest.mark.parametrize("kind, block_size, unit", [("article", 4, "block"), ("vllm", 4, "block"),
                                                    ("sglang", 1, "slot"), ("sglang", 4, "page")])
def test_the_pools_units_are_named_as_its_scheduler_names_them(kind, block_size, unit):
    """The KV cache's title, its tips and the tables' title say blocks under the article's scheduler and vLLM's,
    token slots under SGLang's (pages when page_size is above 1), as the narration and the tree panel do."""
    engine = Engine(RunSpec(Config(num_kvcache_blocks=8, kvcache_block_size=block_size),
                            [RecipeRequest(0, prompt_token_ids=(1, 2, 3), max_tokens=2)], scheduler=kind))
    engine.run(2)
    assert next(player_views(engine.frames, "en"))["cfg"]["unit"] == unit
    words = player_strings("en")
    assert unit in words[f"pool_size.{unit}"] and unit in words[f"unit_id.{unit}"]
    assert unit in words[f"tables_title.{unit}"].lower() and unit in words[f"table_cell.{unit}"]
