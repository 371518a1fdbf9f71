"""Two sessions on the real model at the same time get exactly what each gets alone: each Lab has its own
engine, runner and KV cache; the weights are shared, and their steps are batched by the model worker."""

import threading

import pytest

from engine.run.engine import Engine
from engine.run.recipe import Request, RunSpec
from scheduler import Config
from session.lab import Lab, RunInputs
from session.run_cache import RunCache
from tests.helpers.real_model import NEEDS_MODEL

pytestmark = NEEDS_MODEL

CONFIG = Config(max_num_seqs=2, max_num_batched_tokens=256, max_model_len=128, num_kvcache_blocks=24,
                kvcache_block_size=8)
STEPS = 4


def session(prompt: str, temperature: float) -> Lab:
    workload = (Request(prompt=prompt, max_tokens=STEPS, temperature=temperature),)
    # A cache of its own, so the sessions run together really compute rather than find the solo runs' frames.
    return Lab(RunInputs("session", "", RunSpec(CONFIG, workload, runner="model", seed=3)), cache=RunCache(2**30))


def outputs(lab: Lab) -> list[tuple[int, ...]]:
    return [r.output_token_ids for r in lab.frame.requests]


def test_concurrent_sessions_match_their_solo_runs():
    prompts = [("Name a colour.", 0.0), ("Count to three.", 0.8)]
    alone = []
    for prompt, temperature in prompts:
        lab = session(prompt, temperature)
        lab.run(STEPS)
        alone.append(outputs(lab))
    together = [session(prompt, temperature) for prompt, temperature in prompts]
    threads = [threading.Thread(target=lab.run, args=(STEPS,)) for lab in together]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert [outputs(lab) for lab in together] == alone
    assert all(out[0] for out in alone)


def test_a_branch_from_a_checkpoint_writes_what_the_same_change_made_live_writes(monkeypatch):
    workload = (Request(prompt="Name a colour.", max_tokens=12, temperature=0.8),
                Request(prompt="Count to three.", max_tokens=12, temperature=0.0))
    inputs = RunInputs("session", "", RunSpec(CONFIG, workload, runner="model", seed=3))
    cache = RunCache(2**30, checkpoint_every=4)
    ahead, behind = Lab(inputs, cache=cache), Lab(inputs, cache=cache)
    ahead.run(9)
    assert sorted(ahead._run.checkpoints) == [4, 8]
    behind.run(6)
    monkeypatch.setattr(Engine, "replay", lambda *args: pytest.fail("replayed from frame 0"))
    behind.set_config(max_num_seqs=1)  # the shared run stands at 9: a copy of checkpoint 4, two steps on
    monkeypatch.undo()
    behind.run(4)
    alone = Lab(inputs, cache=RunCache(2**30))
    alone.run(6)
    alone.set_config(max_num_seqs=1)  # its sole holder at its last frame: changed in place
    alone.run(4)
    assert outputs(behind) == outputs(alone) and any(outputs(alone))
