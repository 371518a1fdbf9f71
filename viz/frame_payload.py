"""What the browser's stage player draws, as plain JSON data, and the compact deltas that carry it.

`stage_view(frame)` is everything the player needs for one frame: queues, requests with their tokens and text
pieces, the KV pool, the narration (viz.narrate) and why running requests sat out the step. `encode(previous,
view)` keeps only what changed since the previous view; `decode(previous, delta)` rebuilds the view. The
player (player/player.js) applies the same rules, so `decode` is their reference: frame 0 is a delta
against `EMPTY_VIEW`, every later frame one against the frame before.

Delta keys: scalars and the narration always; `running` / `waiting` / `cfg` when they changed; `nb` (pool
size) when the pool was resized, its blocks then start free; `blk` the changed blocks as [id, ref_count,
hash, source of a cached-free block's tokens]; `req` the changed requests' fields by id; `tok` by id,
[start, token ids, pieces or None] from the first token that differs.
"""

from __future__ import annotations

from engine.frame import Frame, RequestView
from engine.overlap import PLACEHOLDER
from i18n import DEFAULT, messages, text
from viz.colors import CACHED_FREE_COLOR, FREE_COLOR, REQUEST_PALETTE
from viz.glossary import player_legend
from viz.narrate import narrate

REQUEST_FIELDS = ("status", "num_tokens", "num_prompt_tokens", "num_computed_tokens", "priority", "arrival",
                  "num_preemptions", "finish_reason", "max_tokens", "block_table")
SCALARS = ("step", "time", "kind", "batch", "metrics", "narration", "sat_out", "done", "wall_ms", "overlapped",
           "overfull")
HASH_DIGITS = 6  # of a block's 16 hex digits, shown in the player's hover
DONE_KINDS = ("finished", "finished_late", "aborted")  # their words: done.<kind> in i18n/
EMPTY_VIEW = {"running": [], "waiting": [], "cfg": {}, "requests": [], "tokens": [], "pieces": [], "blocks": []}


def player_colors() -> dict:
    """The colours the player draws with, so the browser and the server's charts agree."""
    return {"palette": list(REQUEST_PALETTE), "free": FREE_COLOR, "cached_free": CACHED_FREE_COLOR}


def player_strings(lang: str = DEFAULT) -> dict:
    """Every word the player shows, in `lang`: its own (`player.*` in i18n/), the batch kinds, the clocks' names
    and the legends (viz/glossary.py: the page's legend shows the same marks)."""
    return {**messages(lang, "player."), **{f"batch.{kind}": text(lang, f"batch.{kind}") for kind in
                                            ("prefill", "decode", "mixed", "idle")},
            "clock_simulated": text(lang, "clock.simulated.name"), "clock_real": text(lang, "clock.real.name"),
            "legend": player_legend(lang)}


def player_constants(lang: str = DEFAULT) -> dict:
    """What every message to the player carries besides frames: its colours, its words and the id of a token the
    model is still computing (overlapped scheduling), which it marks apart from the others."""
    return {"colors": player_colors(), "placeholder": PLACEHOLDER, "lang": lang, "strings": player_strings(lang)}


def sat_out_reason(frame: Frame, request_id: int, lang: str = DEFAULT) -> str:
    """Why a running request was not in this step's batch, in a few words."""
    config, batch = frame.config, frame.batch
    if len(batch.seq_ids) >= config.max_num_seqs:
        return text(lang, "sat_out.batch_full", max_num_seqs=config.max_num_seqs)
    if batch.kind == "prefill":
        return text(lang, "sat_out.prefill")
    if batch.total_tokens >= config.max_num_batched_tokens:
        return text(lang, "sat_out.token_budget", budget=config.max_num_batched_tokens)
    return text(lang, "sat_out.other")


def _request_fields(request: RequestView) -> list:
    return [request.status, request.num_tokens, request.num_prompt_tokens, request.num_computed_tokens,
            request.priority, request.arrival, request.num_preemptions, request.finish_reason, request.max_tokens,
            list(request.block_table)]


def _block(block, request_of: dict[int, int]) -> list:
    """[ref_count, the hash's first HASH_DIGITS hex digits (enough to tell blocks apart on screen, and a block
    changing costs fewer bytes; JSON numbers would lose 64-bit ints) or None, where a cached-free block's tokens are:
    [request id, first token, count] of the request that filled it (the player holds its tokens), or None]."""
    source = None
    if block.is_cached_free and block.tokens_from is not None and id(block.tokens_from) in request_of:
        source = [request_of[id(block.tokens_from)], block.tokens_start, block.tokens_len]
    return [block.ref_count, None if block.hash is None else f"{block.hash & (2**64 - 1):016x}"[:HASH_DIGITS], source]


def overfull_blocks(frame: Frame) -> dict[int, int]:
    """{block id: tokens whose K/V it holds} for blocks holding more than a block's size: a request's last
    block when its table has fewer blocks than its computed tokens need (only `notebook_block_bug` makes one)."""
    size, overfull = frame.config.kvcache_block_size, {}
    for request in frame.requests:
        if request.block_table:
            last = len(request.block_table) - 1
            held = request.num_computed_tokens - last * size
            if held > size:
                overfull[request.block_table[last]] = held
    return overfull


def stage_view(frame: Frame, before: Frame | None = None, lang: str = DEFAULT) -> dict:
    """What the player draws of `frame`, its words in `lang`; `before` (the frame before the step) lets the
    narration say what a number was at the start of the step."""
    batched = set(frame.batch.seq_ids)
    request_of = {id(r.history): r.id for r in frame.requests}
    m = frame.metrics
    wall = frame.wall_schedule_s + frame.wall_model_s
    return {
        "step": frame.step, "time": round(frame.sim_time_s, 6), "kind": frame.batch.kind,
        "batch": [[rid, n] for rid, n in zip(frame.batch.seq_ids, frame.batch.num_tokens, strict=True)],
        "metrics": [m.num_running, m.num_waiting, round(m.kv_usage, 4), m.num_free_blocks, m.num_cached_free_blocks,
                    m.num_preemptions],
        "narration": narrate(frame, before, lang),
        "sat_out": [[rid, sat_out_reason(frame, rid, lang)] for rid in frame.running if rid not in batched],
        "done": [[e.seq_id, text(lang, f"done.{e.kind}")] for e in frame.events if e.kind in DONE_KINDS],
        "wall_ms": round(1000 * wall, 1) if frame.step else None,
        "overlapped": bool(frame.timing and frame.timing.overlapped),
        "overfull": [[block, held] for block, held in sorted(overfull_blocks(frame).items())],
        "running": list(frame.running), "waiting": list(frame.waiting),
        "cfg": {"max_num_seqs": frame.config.max_num_seqs, "block_size": frame.config.kvcache_block_size,
                "max_model_len": frame.config.max_model_len,
                "max_num_batched_tokens": frame.config.max_num_batched_tokens},
        "requests": [_request_fields(r) for r in frame.requests],
        "tokens": [list(r.token_ids) for r in frame.requests],
        "pieces": [None if r.pieces is None else list(r.pieces) for r in frame.requests],
        "blocks": [_block(b, request_of) for b in frame.blocks],
    }


def _first_difference(old: list, new: list) -> int:
    n = min(len(old), len(new))
    if old[:n] == new[:n]:
        return n
    return next(i for i in range(n) if old[i] != new[i])


def encode(previous: dict, view: dict) -> dict:
    """The delta that turns `previous` (EMPTY_VIEW before frame 0) into `view`."""
    delta = {key: view[key] for key in SCALARS}
    for key in ("running", "waiting", "cfg"):
        if view[key] != previous[key]:
            delta[key] = view[key]
    old_blocks = previous["blocks"]
    if len(view["blocks"]) != len(old_blocks):
        delta["nb"] = len(view["blocks"])
        old_blocks = [[0, None, None]] * len(view["blocks"])
    changed = [[i, *b] for i, (b, old) in enumerate(zip(view["blocks"], old_blocks, strict=True)) if b != old]
    if changed:
        delta["blk"] = changed
    requests, tokens = {}, {}
    for rid, fields in enumerate(view["requests"]):
        is_new = rid >= len(previous["requests"])
        if is_new or fields != previous["requests"][rid]:
            requests[str(rid)] = fields
        old_ids = [] if is_new else previous["tokens"][rid]
        old_pieces = [] if is_new else previous["pieces"][rid] or []
        new_ids, new_pieces = view["tokens"][rid], view["pieces"][rid]
        start = _first_difference(old_ids, new_ids)
        if new_pieces is not None:
            start = min(start, _first_difference(old_pieces, new_pieces))
        if start < len(new_ids) or len(new_ids) < len(old_ids):
            tokens[str(rid)] = [start, new_ids[start:], None if new_pieces is None else new_pieces[start:]]
    if requests:
        delta["req"] = requests
    if tokens:
        delta["tok"] = tokens
    return delta


def decode(previous: dict, delta: dict) -> dict:
    """The view `delta` describes, given the view before it; raises ValueError for a malformed delta."""
    try:
        view = {key: delta[key] for key in SCALARS}
        for key in ("running", "waiting", "cfg"):
            view[key] = delta.get(key, previous[key])
        blocks = [[0, None, None] for _ in range(delta["nb"])] if "nb" in delta else list(previous["blocks"])
        for block_id, *block in delta.get("blk", ()):
            blocks[block_id] = block
        requests, tokens, pieces = list(previous["requests"]), list(previous["tokens"]), list(previous["pieces"])
        for key, fields in delta.get("req", {}).items():
            rid = int(key)
            if rid == len(requests):
                requests.append(fields)
                tokens.append([])
                pieces.append(None)
            requests[rid] = fields
        for key, (start, ids, new_pieces) in delta.get("tok", {}).items():
            rid = int(key)
            tokens[rid] = tokens[rid][:start] + ids
            pieces[rid] = None if new_pieces is None else (pieces[rid] or [])[:start] + new_pieces
    except (KeyError, IndexError, TypeError, ValueError) as e:
        raise ValueError(f"a frame delta that does not fit the frame before it ({e!r})") from None
    return {**view, "blocks": blocks, "requests": requests, "tokens": tokens, "pieces": pieces}

