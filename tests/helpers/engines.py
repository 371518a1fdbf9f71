"""Small engine runs (fake model) the viz tests draw from, a frame made comparable across runs, and the
smallest scenario file that loads."""

from engine.run.engine import Engine
from engine.run.frame import Frame
from engine.run.recipe import Request, RunSpec
from scheduler import Config

SHARED = "the quick brown fox jumps over the lazy dog"
# The smallest scenario file that loads.
GOOD = """
title = "t"
narrative = "n"
[config]
max_num_seqs = 2
max_num_batched_tokens = 32
max_model_len = 16
[[workload.requests]]
prompt_token_ids = [1, 2, 3]
"""


def comparable(frame: Frame) -> dict:
    """A frame without its wall-clock times, which differ from run to run."""
    data = frame.to_dict()
    del data["wall_schedule_s"], data["wall_model_s"]
    return data


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


def preset_comparison(preset: str, comparison: str, *, lang: str):
    """A named comparison (engine.analysis.compare.COMPARISONS) of a preset's workload on its config, labelled
    in `lang`."""
    from engine.analysis.compare import compare, variants_for
    from engine.inputs.scenario import SCENARIOS_DIR, load_scenario

    spec = load_scenario(SCENARIOS_DIR / f"{preset}.toml").spec
    return compare(variants_for(comparison, spec.config, lang), spec.workload, seed=spec.seed, cost=spec.cost)
