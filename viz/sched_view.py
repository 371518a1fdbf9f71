"""The scheduler's own view of a frame (`Frame.view`, `SchedulerProtocol.scheduler_view`) as the player's panel
draws it (player/tree_view.js for SGLang's radix tree): the view as recorded, with the text of each node's tokens
where the run has a tokenizer (the frame's requests carry the pieces; a node's tokens are some request's). A frame
without a view gives [] (a sparse scalar left out)."""

from __future__ import annotations

from engine.run.frame import Frame


def _pieces_of(frame: Frame, wanted: set[int]) -> dict[int, str]:
    """Token id -> its text, for the ids in `wanted` that some request's text holds."""
    found: dict[int, str] = {}
    for request in frame.requests:
        pieces = request.pieces
        if pieces is None:
            continue
        for token, piece in zip(request.token_ids, pieces, strict=True):
            if token in wanted and token not in found:
                found[token] = piece
        if len(found) == len(wanted):
            break
    return found


def sched_view(frame: Frame) -> dict | list:
    """The player's `sched_view` scalar of `frame`: the recorded view, its nodes' token pieces added (`pieces`:
    node id -> the text of each of its tokens, absent without a tokenizer)."""
    view = frame.view
    if not view:
        return []
    nodes = view.get("nodes", ())
    pieces = _pieces_of(frame, {t for node in nodes for t in node[2]}) if nodes else {}
    if not pieces:
        return view
    return {**view, "pieces": {str(node[0]): [pieces.get(t, str(t)) for t in node[2]] for node in nodes}}
