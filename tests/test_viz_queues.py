from tests.test_viz_scenes import crowded_engine, prefix_engine
from viz.colors import request_color
from viz.queues import queue_figure, token_state
from viz.sizing import LAPTOP


def test_rows_follow_the_queues_with_labels():
    frame = crowded_engine(steps=1).frames[1]
    running, waiting = queue_figure(frame, "running"), queue_figure(frame, "waiting")
    assert running.layout.meta["ids"] == list(frame.running) == [0, 1]
    assert waiting.layout.meta["ids"] == list(frame.waiting[:LAPTOP.max_rows])
    assert "ID:0 (L:51)" in running.layout.yaxis.ticktext[0] and request_color(0) in running.layout.yaxis.ticktext[0]


def test_long_queues_are_condensed_with_a_count():
    frame = crowded_engine(steps=1).frames[1]
    fig = queue_figure(frame, "waiting")
    hidden = len(frame.waiting) - LAPTOP.max_rows
    assert fig.layout.meta["hidden_requests"] == hidden == 10
    assert any(a.text == f"+{hidden} more requests" for a in fig.layout.annotations)


def test_long_rows_never_overflow_and_keep_an_ellipsis():
    frame = crowded_engine(steps=1).frames[1]
    heat = queue_figure(frame, "running").data[0]
    assert all(len(row) == LAPTOP.max_boxes for row in heat.z)
    assert "…" in heat.text[0] and heat.text[0][0] == str(frame.requests[0].token_ids[0])


def test_this_steps_tokens_are_outlined():
    frames = crowded_engine(steps=2).frames
    prefill = queue_figure(frames[1], "running")
    decode = queue_figure(frames[2], "running")
    assert len(prefill.layout.shapes) == len(decode.layout.shapes) == 2
    wide = prefill.layout.shapes[0]
    narrow = decode.layout.shapes[0]
    assert wide.x1 - wide.x0 > narrow.x1 - narrow.x0 == 1


def test_token_states_split_cached_now_and_pending():
    request = crowded_engine(steps=2).frames[2].requests[0]  # 50 prompt tokens, 2 generated, 1 decoded this step
    assert (request.num_tokens, request.num_computed_tokens) == (52, 51)
    assert [token_state(request, i, 1) for i in (0, 49, 50, 51)] == ["cached", "cached", "now", "pending"]


def test_text_pieces_are_shown_in_the_boxes():
    frame = prefix_engine().frames[1]
    heat = queue_figure(frame, "running").data[0]
    assert list(heat.text[0][:3]) == ["the", "·qui…", "·bro…"]  # spaces shown, cut to piece_chars


def test_an_empty_queue_says_so():
    fig = queue_figure(prefix_engine().frames[0], "waiting")
    assert fig.layout.meta["ids"] == [] and fig.layout.annotations[0].text == "empty"
