"""Golden wire deltas, `tests/data/golden_deltas.json`: a few short runs' frames as the server encodes them for the
stage player (viz/frame_payload.py `encode`, frame 0 against the empty view), which tests/test_player_decode.py
decodes with the player's own decoder (player/decode.js, in node) and with the server's reference (`decode`), and
compares with the views the server computes from the frames. The runs, on the fake model, cover what the delta
carries: preemptions and queue moves, text pieces and speculative drafts, a pool rebuilt mid-run (`nb` after
frame 0), a scheduler's own panel (the SGLang twin's radix tree, in `panels`), and, on views made from a run's,
what no preset shows: a request's tokens shrinking (its speculative tokens rejected) and a request's text pieces
dropped.

After a deliberate change of the wire format or of what the views hold (a narration sentence too), rewrite the
file: `python -m tools.golden_deltas`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from copy import deepcopy
from dataclasses import replace
from pathlib import Path

from engine.inputs.scenario import SCENARIOS_DIR, load_scenario
from engine.inputs.workload import random_workload
from engine.run.engine import Engine
from engine.run.frame import Frame
from engine.run.recipe import Request, RunSpec
from scheduler import Config
from viz.frame_payload import EMPTY_VIEW, encode, player_views

GOLDEN_DELTAS = Path(__file__).resolve().parents[1] / "tests" / "data" / "golden_deltas.json"
LANG = "en"
MOST_FRAMES = 24  # of each run: enough for what it shows, and the file stays small
SGLANG_KIND = "sglang"  # the golden run with a radix tree view names its scheduler, as a scenario file does


def _preset(name: str) -> Callable[[], Engine]:
    def run() -> Engine:
        engine = load_scenario(SCENARIOS_DIR / f"{name}.toml", runner="fake").engine()
        engine.run(MOST_FRAMES - 1)
        return engine
    return run


def _pool_rebuilt() -> Engine:
    """A small pool that preempts, rebuilt larger after step 7 (the delta's `nb` on a later frame)."""
    config = Config(max_num_seqs=3, max_num_batched_tokens=32, max_model_len=32, num_kvcache_blocks=6,
                    kvcache_block_size=4)
    engine = Engine(RunSpec(config, random_workload(4, 3, [0, 0, 1, 2], 10), seed=3))
    engine.run(8)
    engine.set_config(num_kvcache_blocks=12)
    engine.run(MOST_FRAMES - 1 - engine.step_count)
    return engine


def sglang_tree_run() -> Engine:
    """The SGLang twin on a 34-slot pool (a run with a scheduler's own panel, its radix tree): prompts sharing
    prefixes (a hit splitting a node at steps 3 and 4), leaves evicted under pressure from step 12 and a retraction
    at step 18."""
    config = Config(max_num_seqs=4, max_num_batched_tokens=64, max_model_len=64, num_kvcache_blocks=34,
                    kvcache_block_size=1, schedule_conservativeness=0.05)
    workload = [Request(0, prompt_token_ids=tuple(range(10, 18)), max_tokens=4),
                Request(2, prompt_token_ids=(10, 11, 12, 13, 30, 31, 32), max_tokens=4),
                Request(3, prompt_token_ids=(10, 11, 12, 13, 14, 15, 40), max_tokens=16),
                Request(3, prompt_token_ids=tuple(range(50, 56)), max_tokens=16)]
    engine = Engine(RunSpec(config, workload, scheduler=SGLANG_KIND))
    engine.run(MOST_FRAMES - 1)
    return engine


RUNS: dict[str, Callable[[], Engine]] = {
    "02_preemption": _preset("02_preemption"),
    "speculative_decoding": _preset("speculative_decoding"),
    "pool_rebuilt": _pool_rebuilt,
    "sglang_tree": sglang_tree_run,
}


VIEWS_EDITED = "tokens_shrunk_pieces_dropped"


def golden_frames(name: str) -> list[Frame]:
    """The frames of golden run `name`, at most MOST_FRAMES, their wall-clock times zero (the rest is the same
    on every run)."""
    return [replace(frame, header=replace(frame.header, wall_schedule_s=0.0, wall_model_s=0.0))
            for frame in list(RUNS[name]().frames)[:MOST_FRAMES]]


def _views_edited() -> list[dict]:
    """speculative_decoding's first views, then one in which a request lost its last two tokens and another its
    text pieces."""
    views = list(player_views(golden_frames("speculative_decoding")[:3], LANG))
    last = deepcopy(views[-1])
    shrunk, plain = (rid for rid, tokens in enumerate(last["tokens"]) if len(tokens) > 2)
    last["tokens"][shrunk] = last["tokens"][shrunk][:-2]
    last["pieces"][shrunk] = last["pieces"][shrunk][:-2]
    last["pieces"][plain] = None
    return [*views, {**last, "step": last["step"] + 1}]


def golden_views(name: str) -> list[dict]:
    """The views the server computes for golden run `name` (VIEWS_EDITED: made from a run's), as JSON gives them
    back."""
    views = _views_edited() if name == VIEWS_EDITED else player_views(golden_frames(name), LANG)
    return json.loads(json.dumps(list(views)))


def golden_deltas() -> dict[str, list[dict]]:
    """Every golden run's views as the server's deltas (frame 0 against the empty view), as JSON gives them back."""
    out = {}
    for name in [*RUNS, VIEWS_EDITED]:
        out[name], previous = [], EMPTY_VIEW
        for view in golden_views(name):
            out[name].append(encode(previous, view))
            previous = view
    return json.loads(json.dumps(out))


def main():
    GOLDEN_DELTAS.write_text(json.dumps(golden_deltas(), separators=(",", ":"), ensure_ascii=False) + "\n")
    print(f"{GOLDEN_DELTAS}: {GOLDEN_DELTAS.stat().st_size:,} bytes")


if __name__ == "__main__":
    main()
