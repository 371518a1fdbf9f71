"""Hypothesis strategies of valid random configs and workloads of requests sharing prefixes: what the contract's
invariants are checked on (`python -m engine check`, tests/test_scheduler_contract.py for every kind), and the article
scheduler's property tests (tests/test_scheduler_properties.py); each caller picks the ranges it covers. A kind's own
settings are drawn from their declarations (scheduler/factory.py SETTINGS)."""

from hypothesis import strategies as st

from scheduler import Config, ConfigError, SamplingParams, Sequence
from scheduler.factory import SETTINGS

SHARED_PREFIX = list(range(100, 140))
SCHEDULE_POLICIES = SETTINGS["schedule_policy"].declared.choices
RETRACTION_POLICIES = SETTINGS["retraction_policy"].declared.choices


def _valid(**values) -> bool:
    try:
        Config(**values)
    except ConfigError:
        return False
    return True


# The schedule policies SGLang allows priority scheduling with, as its settings' own check says
PRIORITY_SCHEDULE_POLICIES = tuple(p for p in SCHEDULE_POLICIES
                                   if _valid(schedule_policy=p, enable_priority_scheduling=True))


@st.composite
def configs(draw, block_sizes=(1, 2, 4, 8), eos=(-1,), speculative=(0, 0, 2), long_prefill=(0,)):
    chunked = draw(st.booleans())
    max_model_len = draw(st.integers(4, 48))
    max_num_seqs = draw(st.integers(1, 5))
    low_budget = max_num_seqs if chunked else max(max_model_len, max_num_seqs)
    block_size = draw(st.sampled_from(block_sizes))
    chunk = draw(st.sampled_from([-1, -1, 4, 8]))
    policy = draw(st.sampled_from(SCHEDULE_POLICIES))
    priority = policy in PRIORITY_SCHEDULE_POLICIES and draw(st.booleans())  # SGLang's, with fcfs or lof only
    try:
        return Config(max_num_seqs=max_num_seqs,
                      max_num_batched_tokens=low_budget + draw(st.integers(0, 12 if chunked else 64)),
                      max_model_len=max_model_len, num_kvcache_blocks=draw(st.integers(1, 24)),
                      kvcache_block_size=block_size, eos=draw(st.sampled_from(eos)),
                      prefill_first=draw(st.booleans()), enable_prefix_caching=draw(st.booleans()),
                      chunked_prefill=chunked, mixed_batches=draw(st.booleans()),
                      preemption_policy=draw(st.sampled_from(["tail", "smart", "priority"])),
                      queue_policy=draw(st.sampled_from(["fcfs", "priority"])),
                      num_speculative_tokens=draw(st.sampled_from(speculative)),
                      long_prefill_token_threshold=draw(st.sampled_from(long_prefill)),
                      # SGLang's own settings (the other kinds ignore them)
                      schedule_policy=policy,
                      chunked_prefill_size=chunk if chunk < 0 else max(chunk, block_size),  # a page at least
                      schedule_conservativeness=draw(st.sampled_from([1.0, 0.3, 2.0])),
                      enable_priority_scheduling=priority,
                      schedule_low_priority_values_first=draw(st.booleans()),
                      priority_scheduling_preemption_threshold=draw(st.sampled_from([0, 1, 10])),
                      disable_priority_preemption=draw(st.booleans()),
                      retraction_policy=draw(st.sampled_from(RETRACTION_POLICIES)) if priority else "length")
    except ConfigError as err:  # the strategy draws valid configs only; say so loudly if it does not
        raise AssertionError(f"strategy drew an invalid config: {err}") from err


@st.composite
def requests(draw, most: int, lengths: tuple[int, int], most_tokens: int, last_arrival: int):
    """(arrival step, sequence) for 1 to `most` requests, each prompt of `lengths` tokens starting with part of
    SHARED_PREFIX, greedy, writing up to `most_tokens`, arriving by step `last_arrival`."""
    drawn = []
    for i in range(draw(st.integers(1, most))):
        length = draw(st.integers(*lengths))
        shared = draw(st.integers(0, min(length, len(SHARED_PREFIX))))
        tokens = SHARED_PREFIX[:shared] + draw(st.lists(st.integers(1, 60), min_size=length - shared,
                                                        max_size=length - shared))
        params = SamplingParams(temperature=0.0, max_tokens=draw(st.integers(1, most_tokens)),
                                ignore_eos=draw(st.booleans()))
        arrival = draw(st.integers(1, last_arrival))
        drawn.append((arrival, Sequence(tokens, params, priority=draw(st.integers(0, 3)), arrival=arrival,
                                        seq_id=i)))
    return drawn


@st.composite
def workloads(draw, most: int = 10):
    """(arrival step, sequence, step at which the checker aborts it or None) for up to `most` requests."""
    return [(arrival, seq, draw(st.one_of(st.none(), st.integers(arrival, arrival + 10))))
            for arrival, seq in draw(requests(most=most, lengths=(1, 40), most_tokens=20, last_arrival=8))]
