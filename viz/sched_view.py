"""A frame's radix tree panel (`Frame.panels` under `RADIX_TREE`, as scheduler/sglang/tree_view.py records it) as the
renderer registered for it draws it (player/tree_view.js): the view as recorded, with

- `nodes` and `evicted` as the panel draws them: a node's first TREE_TOKENS tokens only, with its token count
  last ([id, parent, tokens, slot runs, lock count, evict rank, count]; evicted: [id, parent, tokens, slot runs,
  count]), its slots as runs [first, last] (a page's slots are one run): a frame's view costs a few KB, not the
  tree's every token;
- `pieces`: node id -> the text of those tokens (the evicted nodes' too), where the run has a tokenizer (the
  frame's requests carry the pieces; a node's tokens are some request's); absent without one;
- `units`: each KV unit of the pool (a token slot, or a page), what holds it: "" free, "x" reserved (SGLang's
  padding slot), "e<node>" a tree node no request locks (evictable), "p<node>:<requests>" a locked node (protected)
  and the requests whose rows hold it, "r<request>" a request's own (not in the tree yet);
- `palette`: the requests' colours (viz/colors.py), as the stage draws them."""

from __future__ import annotations

from engine.run.frame import Frame
from viz.colors import REQUEST_PALETTE

RADIX_TREE = "radix_tree"  # the panel's id, as the scheduler that records one declares it
TREE_TOKENS = 8  # of a node's tokens, the panel shows the first this many and how many more


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


def _units(frame: Frame, nodes: list, page_size: int) -> list[str]:
    """What holds each unit of the pool (see the module's docstring)."""
    held = ["" for _ in frame.blocks]
    for block in frame.blocks:
        owners = frame.block_owners(block.id)
        if owners:
            held[block.id] = f"r{owners[0]}"
        elif block.ref_count:
            held[block.id] = "x"
    for node_id, _parent, _tokens, slots, lock, _rank in nodes:
        for unit in sorted({slot // page_size for slot in slots}):
            if unit < len(held):
                held[unit] = f"p{node_id}:" + ",".join(map(str, frame.block_owners(unit))) if lock else f"e{node_id}"
    return held


def slot_runs(slots: list[int]) -> list[list[int]]:
    """[first, last] of each run of consecutive slots."""
    runs: list[list[int]] = []
    for slot in slots:
        if runs and slot == runs[-1][1] + 1:
            runs[-1][1] = slot
        else:
            runs.append([slot, slot])
    return runs


def _drawn(row: list) -> list:
    """A node's row (or an evicted one's) as the panel draws it: its first tokens, its slot runs, its count last."""
    return [row[0], row[1], row[2][:TREE_TOKENS], slot_runs(row[3]), *row[4:], len(row[2])]


def sched_view(frame: Frame, before: Frame | None, lang: str) -> dict:
    """What the renderer of the radix tree panel draws of `frame`, which has one (see the module's docstring): the
    tree's own words are the renderer's, nothing here is said in `lang`."""
    view = frame.panel(RADIX_TREE)
    nodes = view.get("nodes", [])
    out = {**view, "palette": list(REQUEST_PALETTE)}
    if "page_size" in view:
        out["units"] = _units(frame, nodes, view["page_size"])
    evicted = view.get("evicted", [])  # an evicted node is drawn where it was, with its tokens
    out["nodes"], out["evicted"] = [_drawn(n) for n in nodes], [_drawn(n) for n in evicted]
    shown = [(n[0], n[2][:TREE_TOKENS]) for n in (*nodes, *evicted)]
    pieces = _pieces_of(frame, {t for _, tokens in shown for t in tokens}) if shown else {}
    if pieces:
        out["pieces"] = {str(node_id): [pieces.get(t, str(t)) for t in tokens] for node_id, tokens in shown}
    return out
