"""The run recipe: frozen, hashable, JSON round trip, and the one replay (recipe up to frame k)."""

import json

from engine.inputs.workload import random_workload
from engine.run.adaptive import AdaptiveBatch
from engine.run.engine import Engine
from engine.run.recipe import Change, CostModel, Request, RunSpec
from scheduler import Config

CONFIG = Config(max_num_seqs=2, max_num_batched_tokens=64, max_model_len=32, num_kvcache_blocks=8,
                kvcache_block_size=4)
SPEC = RunSpec(CONFIG, random_workload(5, 1, [0, 0, 1, 2, 4], 6), seed=1, cost=CostModel(step_s=0.02),
               adaptive=AdaptiveBatch(0.011, 0.05, 1, 1, 4),
               changes=(Change.config(2, {"max_num_seqs": 3, "adaptive": None}),
                        Change.request(3, Request(prompt_token_ids=(5, 6, 7), max_tokens=4)),
                        Change.config(3, {"num_kvcache_blocks": 12, "overlap": True})))


def frames(engine):
    """The frames as data, wall times aside."""
    return [{k: v for k, v in frame.to_dict(tokens=False).items() if not k.startswith("wall_")}
            for frame in engine.frames]


def test_a_recipe_is_frozen_hashable_and_goes_through_json():
    assert hash(SPEC) == hash(RunSpec.from_dict(json.loads(json.dumps(SPEC.to_dict()))))
    assert RunSpec.from_dict(json.loads(json.dumps(SPEC.to_dict()))) == SPEC
    assert SPEC.address != SPEC.until(3).address


def test_an_engine_built_from_a_recipe_makes_its_changes_at_their_frames():
    live = Engine(RunSpec(CONFIG, SPEC.workload, seed=1, cost=SPEC.cost, adaptive=SPEC.adaptive))
    live.run(2)
    live.set_config(max_num_seqs=3, adaptive=None)
    live.run(1)
    live.add_request(Request(prompt_token_ids=(5, 6, 7), max_tokens=4))
    live.set_config(num_kvcache_blocks=12, overlap=True)
    live.run()
    assert live.spec == SPEC
    built = Engine(SPEC)
    built.run()
    assert frames(built) == frames(live)
    assert frames(Engine(SPEC.until(3)).advance_to(3)) == frames(live.replay(3)) == frames(live)[:4]
    assert live.options_at(3).overlap and not live.options_at(2).overlap and live.options_at(2).adaptive is None
