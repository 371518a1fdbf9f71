"""vLLM's caching rule as an option (`cache_blocks_at_allocation`): a block full of known tokens is in the
prefix cache from the step it is allocated, so requests admitted together share their common prefix, and the
runner still writes, token for token, what `generate()` writes for each request alone."""

from dataclasses import replace

import pytest

from engine.inputs.scenario import SCENARIOS_DIR, load_scenario
from scheduler import Config, ConfigError, SamplingParams, Sequence
from scheduler.article import Scheduler
from scheduler.events import PrefixHit
from tests.helpers.tiny_model import random_prompts, run_and_compare, tiny_config, tiny_model


def _admit_together(cache_blocks_at_allocation: bool) -> tuple[Scheduler, list[Sequence], tuple]:
    scheduler = Scheduler(Config(max_num_seqs=4, max_num_batched_tokens=64, max_model_len=32, num_kvcache_blocks=16,
                                 kvcache_block_size=4, cache_blocks_at_allocation=cache_blocks_at_allocation))
    prefix = list(range(1, 10))
    seqs = [Sequence(prefix + [50 + i, 60 + i], SamplingParams(max_tokens=2), seq_id=i) for i in range(3)]
    for seq in seqs:
        scheduler.add(seq)
    return scheduler, seqs, scheduler.schedule().events


def test_requests_admitted_together_share_their_prefix_only_with_the_option():
    scheduler, seqs, events = _admit_together(True)
    hits = [e for e in events if isinstance(e, PrefixHit)]
    assert [(e.seq_id, e.block_ids) for e in hits] == [(1, tuple(seqs[0].block_table[:2])),
                                                       (2, tuple(seqs[0].block_table[:2]))]
    assert seqs[1].num_computed_tokens == 8 and seqs[1].num_scheduled_tokens == 3
    assert scheduler.block_manager.blocks[seqs[0].block_table[0]].ref_count == 3
    scheduler, seqs, events = _admit_together(False)
    assert not any(isinstance(e, PrefixHit) for e in events)
    assert not set(seqs[0].block_table) & set(seqs[1].block_table)


def test_the_option_is_a_prefix_caching_rule():
    with pytest.raises(ConfigError, match="enable_prefix_caching"):
        Config(enable_prefix_caching=False, cache_blocks_at_allocation=True)


@pytest.fixture(scope="module")
def tiny():
    return tiny_model()


@pytest.mark.parametrize("block_size", [1, 10, 16])
def test_sharing_within_a_step_is_token_exact(tiny, block_size):
    system = random_prompts([27], seed=21)[0]
    prompts = random_prompts([6, 13, 2, 20, 9], seed=block_size, prefix=system)
    log = run_and_compare(tiny, tiny_config(kvcache_block_size=block_size, num_kvcache_blocks=900 // block_size,
                                       cache_blocks_at_allocation=True, mixed_batches=block_size == 10),
                          prompts, arrival_steps=[0, 0, 0, 3, 3])
    hits = {e.seq_id for e in log.events if isinstance(e, PrefixHit)}
    # admitted in request 0's step: only the option lets them share its prefix
    assert {log.seqs[1].seq_id, log.seqs[2].seq_id} <= hits


def test_the_sharing_preset_shows_the_difference():
    scenario = load_scenario(SCENARIOS_DIR / "prefix_caching_same_step.toml")
    runs = [scenario.engine(), scenario.engine(variant=True)]
    for engine in runs:
        assert engine.run() == "finished"
    without, with_option = (engine.frames[1] for engine in runs)
    assert not without.events_of("prefix_hit") and with_option.events_of("prefix_hit")
    assert with_option.metrics.num_free_blocks > without.metrics.num_free_blocks


@pytest.mark.parametrize("at_allocation", [True, False])
def test_the_vllm_doc_example_matches_under_either_rule(at_allocation):
    scenario = load_scenario(SCENARIOS_DIR / "prefix_caching_vllm_doc.toml")
    spec = scenario.spec
    config = replace(spec.config, cache_blocks_at_allocation=at_allocation)
    scenario = replace(scenario, spec=replace(spec, config=config))
    engine = scenario.engine()
    assert engine.run() == "finished"
    problems = [p for k in scenario.key_frames for p in k.mismatches(engine.frames[k.step])]
    assert not problems, "\n".join(problems)
