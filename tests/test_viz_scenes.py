"""Small engine runs (fake model) that the viz tests draw from. No tests live here."""

from engine.run.engine import Engine
from engine.run.recipe import Request, RunSpec
from scheduler import Config

SHARED = "the quick brown fox jumps over the lazy dog"


def preemption_engine() -> Engine:
    """Three 10-token prompts in an 8-block pool of 4 tokens: decodes soon run out of blocks and preempt."""
    config = Config(max_num_seqs=3, max_num_batched_tokens=64, max_model_len=60, num_kvcache_blocks=8,
                    kvcache_block_size=4, enable_prefix_caching=False)
    workload = [Request(prompt_token_ids=tuple(range(10 * i + 1, 10 * i + 11)), max_tokens=10, ignore_eos=True)
                for i in range(3)]
    engine = Engine(RunSpec(config, workload))
    engine.run()
    return engine


def prefix_engine() -> Engine:
    """Two text prompts with a shared 8-token prefix; the second arrives while the first runs."""
    config = Config(max_num_seqs=4, max_num_batched_tokens=64, max_model_len=60, num_kvcache_blocks=12,
                    kvcache_block_size=4, enable_prefix_caching=True)
    workload = [Request(prompt=f"{SHARED} and runs", max_tokens=4, ignore_eos=True),
                Request(prompt=f"{SHARED} and sleeps", max_tokens=4, arrival=1, ignore_eos=True)]
    engine = Engine(RunSpec(config, workload))
    engine.run()
    return engine


def crowded_engine(steps: int = 3) -> Engine:
    """Twenty 50-token prompts, max_num_seqs=2, decode first: long rows and a long waiting queue."""
    config = Config(max_num_seqs=2, max_num_batched_tokens=128, max_model_len=128, num_kvcache_blocks=64,
                    kvcache_block_size=8, prefill_first=False)
    workload = [Request(prompt_token_ids=tuple(range(i + 1, i + 51)), max_tokens=40) for i in range(20)]
    engine = Engine(RunSpec(config, workload))
    engine.run(steps)
    return engine
