"""Overlapped scheduling on a real (tiny, seeded) model: the same tokens as the synchronous loop, with
preemptions under a small KV pool, and with EOS written by the model in the worker thread."""

from collections import Counter
from dataclasses import replace

import pytest

from engine.run.overlap import LoopResult, run_loop
from runner.model_runner import ModelRunner
from scheduler import Config, SamplingParams, Sequence
from scheduler.article import Scheduler
from tests.helpers.tiny_model import random_prompts, tiny_model

CONFIG = Config(max_num_seqs=4, max_num_batched_tokens=64, max_model_len=64, num_kvcache_blocks=16,
                kvcache_block_size=4, chunked_prefill=True)
PROMPTS = random_prompts([5, 12, 3, 20, 7, 9])


@pytest.fixture(scope="module")
def loaded():
    return tiny_model()


def run(loaded, config: Config, ignore_eos: bool, overlap: bool) -> tuple[LoopResult, list[Sequence]]:
    seqs = [Sequence(p, SamplingParams(max_tokens=24, ignore_eos=ignore_eos), seq_id=i)
            for i, p in enumerate(PROMPTS)]
    return run_loop(Scheduler(config), ModelRunner(loaded, config), seqs, overlap), seqs


def test_same_batches_and_tokens_without_eos(loaded):
    (sync, _), (over, _) = (run(loaded, CONFIG, True, overlap) for overlap in (False, True))
    assert over.outputs == sync.outputs and over.batches == sync.batches


def test_same_tokens_when_the_model_writes_eos(loaded):
    (plain, _) = run(loaded, CONFIG, True, False)
    eos = Counter(t for out in plain.outputs for t in out[:-1]).most_common(1)[0][0]  # a token it writes often
    config = replace(CONFIG, eos=eos)
    (sync, sync_seqs), (over, seqs) = (run(loaded, config, False, overlap) for overlap in (False, True))
    assert any(s.finish_reason == "eos" and s.num_completion_tokens < 24 for s in sync_seqs)  # finished early
    assert over.outputs == sync.outputs
    assert [s.finish_reason for s in seqs] == [s.finish_reason for s in sync_seqs]
