"""What the browser's stage player draws, as plain JSON data, and the compact deltas that carry it.

`stage_view(frame)` is everything the player needs for one frame: queues, requests with their tokens and text
pieces, the KV pool, the narration (viz.narrate) and why running requests sat out the step. `encode(previous,
view)` keeps only what changed since the previous view; `decode(previous, delta)` rebuilds the view. The
player's decoder (player/decode.js) applies the same rules, so `decode` is their reference (tests/test_player_decode.py
runs both over golden deltas): frame 0 is a delta against `EMPTY_VIEW`, every later frame one against the frame
before.

Tokens are elided as the player draws them: a request's row shows at most ROW_CELLS cells (both ends and this
step's tokens, the rest elided), and a queue at most QUEUE_ROWS rows, so a view holds only the tokens those
cells can show, plus those the player was sent before (`stage_view(frame, held=previous view)`); the others
are None. A long prompt arriving then costs a few dozen tokens, not its whole text (a frame's delta stays
under 5 KB); the full text is in the Generated text view.

Delta keys: scalars and the narration always (the `SPARSE` ones, lists empty on most frames, only when not
empty); `running` / `waiting` / `cfg` when they changed, and `queues` (the queues a scheduler declares beyond those
two, by name) and `side` (its side pools: per unit the request holding it, or None) where it declares them; `nb` (pool
size) when the pool was resized, its blocks then start free; `blk` the changed blocks as [id, *BLOCK_FIELDS];
`req` the changed requests' REQUEST_FIELDS by id; `tok` by id, [length, [[start, token ids, pieces or None], ...]]:
the runs of tokens that changed (an id of None: not held).

A request's fields, a block's and the metrics travel as arrays (names in every frame would double its bytes);
`WIRE` names their positions, and the player reads them through those names: it gets this dict as its own
`WIRE` (player/assets.player_sources writes it into decode.js), so the two sides cannot drift apart.
"""

from __future__ import annotations

from collections.abc import Iterator

from engine.run.frame import PENDING_TEXT, Frame, RequestView
from i18n import CATALOGUES, messages, text
from scheduler.contract import GPU_POOL, QUEUES
from scheduler.factory import STAGE_WORDS, scheduler_info
from scheduler.sequence import PLACEHOLDER
from viz.budget import PHASES, SEGMENT_FIELDS, budget_held, budget_segments, sat_out_cause
from viz.colors import CACHED_FREE_COLOR, FREE_COLOR, REQUEST_PALETTE, RESERVED_COLOR
from viz.glossary import player_legend
from viz.narrate import kv_unit, narrate
from viz.panels import panel_views

REQUEST_FIELDS = ("status", "num_tokens", "num_prompt_tokens", "num_computed_tokens", "priority", "arrival",
                  "num_preemptions", "finish_reason", "max_tokens", "block_table")  # RequestView's attributes
# source: where a cached-free block's tokens are, [request id, first token, count] (the player holds them), or None
BLOCK_FIELDS = ("ref_count", "hash", "source")
FREE_BLOCK = [0, None, None]  # a block of a new pool
METRIC_FIELDS = ("num_running", "num_waiting", "kv_usage", "num_free_blocks", "num_cached_free_blocks",
                 "num_preemptions")  # StepMetrics' attributes
KEY_FRAME_FIELDS = ("step", "note", "holds")  # a key frame in a message's `key_frames` (holds: absent is true)
SCALARS = ("step", "time", "kind", "batch", "metrics", "narration", "sat_out", "done", "wall_ms", "overlapped",
           "overfull", "budget_held", "panels", "moves")  # batch: the step's segments (viz/budget.py
# SEGMENT_FIELDS); panels: [panel id, what its renderer draws] of each of the scheduler's own panels (viz/panels.py);
# moves: the blocks the step copied between pools, [source pool, block, destination pool, block] each
SPARSE = ("sat_out", "done", "overfull", "budget_held", "panels", "moves")  # scalars sent only when not empty
DIFFED = ("running", "waiting", "cfg", "queues", "side")  # sent when they changed
HASH_DIGITS = 6  # of a block's 16 hex digits, shown in the player's hover
DONE_KINDS = ("finished", "finished_late", "aborted")  # their words: done.<kind> in i18n/
ROW_CELLS = 28  # the most token cells a request's row draws (the player's laptop size)
QUEUE_ROWS = 8  # the most requests a queue draws (the player's laptop size)
ROW_ENDS = (ROW_CELLS - 1) // 2  # the tokens a long row shows at each end (two cells go to elision marks)
EMPTY_VIEW = {"running": [], "waiting": [], "cfg": {}, "queues": {}, "side": {}, "requests": [], "tokens": [],
              "pieces": [], "blocks": []}
WIRE = {"request": REQUEST_FIELDS, "block": BLOCK_FIELDS, "free_block": FREE_BLOCK, "metrics": METRIC_FIELDS,
        "key_frame": KEY_FRAME_FIELDS, "segment": SEGMENT_FIELDS, "phases": PHASES, "scalars": SCALARS,
        "sparse": SPARSE, "diffed": DIFFED, "empty_view": EMPTY_VIEW, "row_cells": ROW_CELLS,
        "queue_rows": QUEUE_ROWS, "row_ends": ROW_ENDS,
        "main_pool": GPU_POOL}  # what the player knows of the wire format, as its `WIRE`


def player_colors() -> dict:
    """The colours the player draws with, so the browser and the server's charts agree."""
    return {"palette": list(REQUEST_PALETTE), "free": FREE_COLOR, "cached_free": CACHED_FREE_COLOR,
            "reserved": RESERVED_COLOR}


def player_strings(lang: str) -> dict:
    """Every word the player shows, in `lang`: its own (`player.*` in i18n/), its panels' (`panel.*`, under their
    whole ids), the batch kinds, the clocks' names and the legends (viz/glossary.py: the page's legend shows the same
    marks)."""
    return {**messages(lang, "player."), **{f"panel.{key}": said for key, said in messages(lang, "panel.").items()},
            **{f"batch.{kind}": text(lang, f"batch.{kind}") for kind in ("prefill", "decode", "mixed", "idle")},
            **{f"n.token.{form}": said for form, said in messages(lang, "n.token.").items()},
            **{key: CATALOGUES[lang][key] for key in STAGE_WORDS},  # the kinds' words, filled by the player
            "clock_simulated": text(lang, "clock.simulated.name"), "clock_real": text(lang, "clock.real.name"),
            "legend": player_legend(lang)}


def player_constants(lang: str) -> dict:
    """What every message to the player carries besides frames: its colours, its words and the id of a token the
    model is still computing (overlapped scheduling), which it marks apart from the others."""
    return {"colors": player_colors(), "placeholder": PLACEHOLDER, "lang": lang, "strings": player_strings(lang)}


def sat_out_reason(frame: Frame, lang: str) -> str:
    """Why running requests were not in this step's batch, in a few words."""
    config = frame.config
    return text(lang, f"sat_out.{sat_out_cause(frame)}", max_num_seqs=config.max_num_seqs,
                budget=config.max_num_batched_tokens)


def _request_fields(request: RequestView) -> list:
    return [list(value) if isinstance(value, tuple) else value  # the block table, as JSON gives it back
            for value in (getattr(request, name) for name in REQUEST_FIELDS)]


def _block(block, request_of: dict[int, int]) -> list:
    """BLOCK_FIELDS: [ref_count, the hash's first HASH_DIGITS hex digits (enough to tell blocks apart on screen,
    and a block changing costs fewer bytes; JSON numbers would lose 64-bit ints) or None, where a cached-free block's
    tokens are: [request id, first token, count] of the request that filled it (the player holds its tokens), or
    None]."""
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


def token_window(num_tokens: int, computed: int, this_step: int) -> list[range]:
    """The token positions a row of ROW_CELLS cells can show (player/render.js `condense`): every token of a short
    request; else half the cells but one at each end and a third at the end of this step's tokens (the
    tokens computed up to `computed`)."""
    if num_tokens <= ROW_CELLS:
        return [range(num_tokens)]
    ends, focus = ROW_ENDS, (ROW_CELLS - 2) // 3  # two cells for the elision marks
    return [range(ends), range(max(0, computed - min(this_step, focus)), min(computed, num_tokens)),
            range(num_tokens - ends, num_tokens)]


def _rows_drawn(frame: Frame) -> set[int]:
    """The requests the player draws a row for: the first QUEUE_ROWS of each queue and those that just ended."""
    ended = {e.seq_id for e in frame.events if e.kind in DONE_KINDS}
    return {*frame.running[:QUEUE_ROWS], *frame.waiting[:QUEUE_ROWS], *ended}


def _elide(values: list, window: list[range], held: list | None) -> list:
    """`values` at the positions in `window` or held before (not None in `held`); None elsewhere."""
    if held is None:
        kept = [None] * len(values)
    else:  # a request's tokens may have grown or shrunk since (speculative tokens rejected)
        kept = [v if h is not None else None for v, h in zip(values, held, strict=False)]
    kept.extend([None] * (len(values) - len(kept)))
    for positions in window:
        kept[positions.start:positions.stop] = values[positions.start:positions.stop]
    return kept


def _still_held(num_tokens: int, ids: list | None, pieces: list | None) -> bool:
    """Whether the tokens held of a request that is not drawn are still what it holds: as many, and none of them
    still being computed (a token that lands is written in place, and the text after it is known only then)."""
    return (ids is not None and len(ids) == num_tokens and PLACEHOLDER not in ids
            and (pieces is None or PENDING_TEXT not in pieces))


def _tokens(frame: Frame, held: dict | None) -> tuple[list, list]:
    """Every request's token ids and pieces as the player holds them (see the module's docstring). Most requests
    are not drawn and have not changed: they keep the lists held (a long comparison has hundreds of them)."""
    drawn, this_step = _rows_drawn(frame), dict(zip(frame.batch.seq_ids, frame.batch.num_tokens, strict=True))
    tokens, pieces = [], []
    for r in frame.requests:
        before, before_pieces = (held["tokens"][r.id], held["pieces"][r.id]) if held is not None and \
            r.id < len(held["tokens"]) else (None, None)
        if r.id not in drawn and _still_held(r.num_tokens, before, before_pieces):
            tokens.append(before)
            pieces.append(before_pieces)
            continue
        ids, texts = r.history.token_ids[:r.num_tokens], r.pieces
        window = token_window(len(ids), r.num_computed_tokens, this_step.get(r.id, 0)) if r.id in drawn else []
        tokens.append(_elide(ids, window, before))
        pieces.append(None if texts is None else _elide(list(texts), window, before))
    return tokens, pieces


def _kept(items, before_items, held_items, make) -> list:
    """`make(item)` of each request or block (by id), or the one held where the frame before had the same item: a
    step changes a few of hundreds."""
    if before_items is None or held_items is None or len(held_items) != len(before_items):
        return [make(item) for item in items]
    return [held_items[i] if i < len(before_items) and item == before_items[i] else make(item)
            for i, item in enumerate(items)]


def stage_view(frame: Frame, before: Frame | None = None, *, lang: str, held: dict | None = None) -> dict:
    """What the player draws of `frame`, its words in `lang`; `before` (the frame before the step) lets the
    narration say what a number was at the start of the step; `held` (the view the player holds before this one:
    `before`'s, given both) keeps the tokens it was sent."""
    batched = set(frame.batch.seq_ids)
    request_of = {id(r.history): r.id for r in frame.requests}
    m = frame.metrics
    wall = frame.wall_schedule_s + frame.wall_model_s
    tokens, pieces = _tokens(frame, held)
    info = scheduler_info(frame.decided_by.kind) if frame.decided_by else None  # None: a frame not known to be any's
    return {
        "step": frame.step, "time": round(frame.sim_time_s, 6), "kind": frame.batch.kind,
        "batch": budget_segments(frame),
        "metrics": [round(value, 4) for value in (getattr(m, name) for name in METRIC_FIELDS)],
        "narration": narrate(frame, before, lang=lang),
        "sat_out": [[rid, sat_out_reason(frame, lang)] for rid in frame.running if rid not in batched],
        "done": [[e.seq_id, text(lang, f"done.{e.kind}")] for e in frame.events if e.kind in DONE_KINDS],
        "wall_ms": round(1000 * wall, 1) if frame.step else None,
        "overlapped": bool(frame.timing and frame.timing.overlapped),
        "overfull": [[block, count] for block, count in sorted(overfull_blocks(frame).items())],
        "budget_held": budget_held(frame),
        "panels": panel_views(frame, before, lang),
        "moves": [list(copy) for copy in frame.block_copies],
        "running": list(frame.running), "waiting": list(frame.waiting),
        "cfg": {"words": dict(info.words) if info else {},  # its message ids: its reserved unit, its queue limit
                "unit": kv_unit(frame),  # what the pool's units are called: block, slot (SGLang's), page
                "max_num_seqs": frame.config.max_num_seqs, "block_size": frame.config.kvcache_block_size,
                # SGLang: max_running_requests
                "max_num_seqs_name": info.setting_name("max_num_seqs") if info else "max_num_seqs",
                "max_model_len": frame.config.max_model_len,
                # None for a kind that declares it does not read the token budget (SGLang): no budget bar drawn
                "max_num_batched_tokens": frame.config.max_num_batched_tokens
                if info is None or "max_num_batched_tokens" in info.honoured else None,
                **_declared(info)},
        "queues": {name: list(ids) for name, ids in frame.queues.items()},
        "side": {name: list(units) for name, units in frame.side_pools.items()},
        "requests": _kept(frame.requests, before and before.requests, held and held["requests"], _request_fields),
        "tokens": tokens,
        "pieces": pieces,
        "blocks": _kept(frame.blocks, before and before.blocks, held and held["blocks"],
                        lambda block: _block(block, request_of)),
    }


def _declared(info) -> dict:
    """The queues and side pools a scheduler declares beyond those every one has, in its order (none: nothing, so
    the others' views keep their shape)."""
    declared = {}
    if info is not None and info.queues != QUEUES:
        declared["queues"] = list(info.queues)
    if info is not None and info.side_pools:
        declared["side_pools"] = [pool.name for pool in info.side_pools]
    return declared


def player_views(frames, lang: str) -> Iterator[dict]:
    """The views of consecutive frames from frame 0, as the player holds them (each keeps the tokens sent)."""
    view, before = EMPTY_VIEW, None
    for frame in frames:
        view = stage_view(frame, before, lang=lang, held=view)
        before = frame
        yield view


def _changed_runs(old_ids: list, old_pieces: list | None, ids: list, pieces: list | None) -> list:
    """[start, ids, pieces or None] for each run of positions whose token or piece differs from the old ones."""
    n = len(ids)
    old_ids = (old_ids + [None] * n)[:n]  # a position not held before reads None, as the decoder pads it
    old_pieces = (old_pieces or []) + [None] * n
    runs, start = [], None
    for i in range(n + 1):
        differs = i < n and (ids[i] != old_ids[i] or (pieces is not None and pieces[i] != old_pieces[i]))
        if differs and start is None:
            start = i
        elif not differs and start is not None:
            runs.append([start, ids[start:i], None if pieces is None else pieces[start:i]])
            start = None
    return runs


def encode(previous: dict, view: dict) -> dict:
    """The delta that turns `previous` (EMPTY_VIEW before frame 0) into `view`."""
    delta = {key: view[key] for key in SCALARS if view[key] or key not in SPARSE}
    for key in DIFFED:
        if view[key] != previous[key]:
            delta[key] = view[key]
    old_blocks = previous["blocks"]
    if len(view["blocks"]) != len(old_blocks):
        delta["nb"] = len(view["blocks"])
        old_blocks = [FREE_BLOCK] * len(view["blocks"])
    changed = [[i, *b] for i, (b, old) in enumerate(zip(view["blocks"], old_blocks, strict=True)) if b != old]
    if changed:
        delta["blk"] = changed
    requests, tokens = {}, {}
    for rid, fields in enumerate(view["requests"]):
        is_new = rid >= len(previous["requests"])
        if is_new or fields != previous["requests"][rid]:
            requests[str(rid)] = fields
        old_ids, old_pieces = ([], None) if is_new else (previous["tokens"][rid], previous["pieces"][rid])
        ids, pieces = view["tokens"][rid], view["pieces"][rid]
        if is_new or ids != old_ids or pieces != old_pieces:
            runs = _changed_runs(old_ids, old_pieces, ids, pieces)
            if not runs and (pieces is None) != (old_pieces is None):  # an empty run says whether it has text
                runs = [[0, [], None if pieces is None else []]]
            tokens[str(rid)] = [len(ids), runs]
    if requests:
        delta["req"] = requests
    if tokens:
        delta["tok"] = tokens
    return delta


def decode(previous: dict, delta: dict) -> dict:
    """The view `delta` describes, given the view before it; raises ValueError for a malformed delta."""
    try:
        view = {key: delta.get(key, []) if key in SPARSE else delta[key] for key in SCALARS}
        for key in DIFFED:
            view[key] = delta.get(key, previous[key])
        blocks = [FREE_BLOCK] * delta["nb"] if "nb" in delta else list(previous["blocks"])
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
        for key, (length, runs) in delta.get("tok", {}).items():
            rid = int(key)
            ids = (tokens[rid] + [None] * length)[:length]
            texts = None if pieces[rid] is None else (pieces[rid] + [None] * length)[:length]
            for start, run_ids, run_pieces in runs:
                if not 0 <= start <= length - len(run_ids):
                    raise ValueError(f"tokens {start}.. of request {rid} are outside its {length} tokens")
                ids[start:start + len(run_ids)] = run_ids
                if run_pieces is None:
                    texts = None
                else:
                    texts = texts if texts is not None else [None] * length
                    texts[start:start + len(run_pieces)] = run_pieces
            tokens[rid], pieces[rid] = ids, texts
    except (KeyError, IndexError, TypeError, ValueError) as e:
        raise ValueError(f"a frame delta that does not fit the frame before it ({e!r})") from None
    return {**view, "blocks": blocks, "requests": requests, "tokens": tokens, "pieces": pieces}

