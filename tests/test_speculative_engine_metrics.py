"""Speculation metrics against a tiny fake trace worked out by hand."""

from dataclasses import replace

from engine.run.engine import Engine
from engine.run.metrics import speculation_metrics
from engine.run.recipe import Request, RunSpec
from runner.fake import FakeRunner
from scheduler import Config

CONFIG = Config(max_num_seqs=1, max_num_batched_tokens=32, max_model_len=32, num_kvcache_blocks=10,
                kvcache_block_size=4, num_speculative_tokens=2)


def run(config: Config, prompt: tuple[int, ...]) -> Engine:
    engine = Engine(RunSpec(config, [Request(prompt_token_ids=prompt, max_tokens=6, ignore_eos=True)]))
    assert engine.run() == "finished"
    return engine


def test_one_partly_accepted_draft():
    # The fake model writes g5, g6, g7... after 5, 6, 7... tokens. Prompt (g5, g6, 1, 9, 9): the prefill
    # writes g5, whose earlier occurrence drafts (g6, 1); the model accepts g6, rejects 1 and writes g7.
    g5, g6 = (FakeRunner(CONFIG.max_model_len).token_at(0, n) for n in (5, 6))
    engine = run(CONFIG, (g5, g6, 1, 9, 9))
    assert [f.batch.num_tokens for f in engine.frames][1:] == [(5,), (3,), (1,), (1,), (1,)]
    stats = speculation_metrics(engine.frames)
    assert (stats.num_drafted, stats.num_accepted, stats.acceptance_rate) == (2, 1, 0.5)
    assert stats.tokens_per_pass == 6 / 5  # outputs 1, 3, 4, 5, 6 after steps 1-5


def test_without_speculation_every_pass_gives_one_token():
    stats = speculation_metrics(run(replace(CONFIG, num_speculative_tokens=0), (1, 2, 3, 9, 9)).frames)
    assert (stats.num_drafted, stats.acceptance_rate, stats.tokens_per_pass) == (0, 0.0, 1.0)
