"""Speculative decoding by n-gram prompt lookup: drafts, lookahead slots, and unchanged greedy output."""

import random

import pytest

from runner.fake import FakeRunner
from scheduler import Config, SamplingParams, Sequence
from scheduler.article import Scheduler
from scheduler.speculative import NgramIndex


class CyclicRunner(FakeRunner):
    """A fake model that repeats 1..period: exactly what prompt lookup predicts well."""

    def __init__(self, max_model_len: int, period: int = 5):
        super().__init__(max_model_len, eos=-1)
        self.period = period

    def next_token(self, seq_id: int, position: int) -> int:
        return 1 + position % self.period


@pytest.mark.parametrize("tokens, k, expected", [
    ([1, 2, 3, 9, 1, 2, 3], 3, [9, 1, 2]),       # the longest suffix (1 2 3) seen before
    ([5, 6, 7, 5, 6, 8, 5, 6], 2, [7, 5]),        # the earliest occurrence wins
    ([1, 2, 3, 4], 3, []),                        # nothing repeats
    ([4, 4, 4], 2, [4]),                          # overlapping match, cut at the sequence end
    ([1, 2, 1, 2], 0, []),
])
def test_propose_ngram(tokens, k, expected):
    assert NgramIndex(min_n=1, max_n=3).propose(tokens, k) == expected


def scan_for_ngram(token_ids: list[int], k: int, min_n: int, max_n: int) -> list[int]:
    """The lookup the index replaced, rescanning the whole sequence: the reference for its drafts."""
    length = len(token_ids)
    for n in range(min(max_n, length - 1), min_n - 1, -1):
        for start in range(length - n):
            if token_ids[start:start + n] == token_ids[length - n:]:
                return token_ids[start + n:start + n + k] if k > 0 else []
    return []


@pytest.mark.parametrize("seed", range(20))
def test_the_incremental_index_drafts_what_a_full_scan_drafts(seed):
    rng = random.Random(seed)
    min_n = rng.randint(1, 3)
    max_n = rng.randint(min_n, 4)
    tokens = [rng.randint(1, rng.choice([2, 4, 30])) for _ in range(rng.randint(1, 10))]
    index = NgramIndex(min_n, max_n)
    for _ in range(60):  # the index grows with the sequence, as a decode appends tokens
        k = rng.randint(0, 5)
        assert index.propose(tokens, k) == scan_for_ngram(tokens, k, min_n, max_n), tokens
        tokens.append(rng.randint(1, 4))


def test_a_sequence_keeps_its_index_from_step_to_step():
    scheduler = Scheduler(Config(max_num_seqs=1, max_num_batched_tokens=32, max_model_len=32, num_kvcache_blocks=8,
                                 kvcache_block_size=4, eos=-1, num_speculative_tokens=2))
    seq = Sequence([1, 2, 3, 1, 2], SamplingParams(temperature=0.0, max_tokens=20, ignore_eos=True))
    scheduler.add(seq)
    runner = CyclicRunner(32, period=3)
    indexes = []
    while not scheduler.is_finished():
        batch = scheduler.schedule()
        scheduler.postprocess(batch.seqs, runner.run(batch.seqs))
        indexes.append(seq.ngram_index)
    assert indexes[1] is not None and all(index is indexes[1] for index in indexes[1:])


def run(config: Config, runner, prompts, max_tokens=30):
    scheduler = Scheduler(config)
    seqs = [Sequence(p, SamplingParams(temperature=0.0, max_tokens=max_tokens, ignore_eos=True), seq_id=i)
            for i, p in enumerate(prompts)]
    for s in seqs:
        scheduler.add(s)
    steps, logs = 0, []
    while not scheduler.is_finished():
        batch = scheduler.schedule()
        logs += [*batch.events, *scheduler.postprocess(batch.seqs, runner.run(batch.seqs))]
        steps += 1
    return [s.completion_token_ids for s in seqs], steps, logs


def test_speculation_keeps_outputs_and_saves_steps_when_drafts_are_right():
    prompts = [[1, 2, 3, 4, 5, 1, 2], [3, 4, 5, 1, 2, 3]]
    base = dict(max_num_seqs=2, max_num_batched_tokens=64, max_model_len=64, num_kvcache_blocks=16,
                kvcache_block_size=4, eos=-1)
    plain, plain_steps, _ = run(Config(**base), CyclicRunner(64), prompts)
    spec, spec_steps, logs = run(Config(**base, num_speculative_tokens=4), CyclicRunner(64), prompts)
    assert spec == plain
    accepted = [e.num_accepted for e in logs if e.kind == "speculated"]
    assert accepted and sum(accepted) > len(accepted)  # most drafts are right
    assert spec_steps < plain_steps / 2


def test_speculation_keeps_outputs_when_drafts_are_wrong():
    prompts = [[7, 8, 7, 8, 7], [1, 1, 1]]
    base = dict(max_num_seqs=2, max_num_batched_tokens=64, max_model_len=40, num_kvcache_blocks=16,
                kvcache_block_size=2, eos=-1)
    plain, _, _ = run(Config(**base), FakeRunner(40, low=1, high=3), prompts)
    spec, _, logs = run(Config(**base, num_speculative_tokens=3), FakeRunner(40, low=1, high=3), prompts)
    assert spec == plain
    assert any(e.kind == "speculated" and e.num_accepted < len(e.draft_token_ids) for e in logs)


def test_blocks_taken_only_for_rejected_drafts_return_to_the_pool():
    cfg = Config(max_num_seqs=1, max_num_batched_tokens=32, max_model_len=32, num_kvcache_blocks=8,
                 kvcache_block_size=4, eos=-1, num_speculative_tokens=4, enable_prefix_caching=False)
    scheduler = Scheduler(cfg)
    seq = Sequence([1, 2, 3, 4, 5, 6, 7, 1], SamplingParams(temperature=0.0, max_tokens=20), seq_id=0)
    scheduler.add(seq)
    batch = scheduler.schedule()
    scheduler.postprocess(batch.seqs, [2])  # prefill: 8 tokens in two blocks, then "2"
    batch = scheduler.schedule()  # "1 2" was seen before: drafts 3 4 5 6 at positions 9..12
    assert seq.draft_token_ids == [3, 4, 5, 6] and batch.num_scheduled_tokens == (5,)
    assert len(seq.block_table) == 4
    events = scheduler.postprocess(batch.seqs, [9])  # every draft rejected: the model says 9
    assert len(seq.block_table) == 3 and scheduler.block_manager.num_free_blocks == 5
    assert seq.token_ids[-2:] == [2, 9] and seq.num_computed_tokens == 9
    (event,) = [e for e in events if e.kind == "speculated"]
    assert event.num_accepted == 0 and event.draft_token_ids == (3, 4, 5, 6)


def test_runner_output_must_match_the_drafts():
    cfg = Config(max_num_seqs=1, max_num_batched_tokens=32, max_model_len=32, num_kvcache_blocks=8,
                 kvcache_block_size=4, eos=-1, num_speculative_tokens=2)
    scheduler = Scheduler(cfg)
    seq = Sequence([3, 3, 3], SamplingParams(temperature=0.0, max_tokens=20), seq_id=0)
    scheduler.add(seq)
    batch = scheduler.schedule()
    scheduler.postprocess(batch.seqs, [3])
    batch = scheduler.schedule()
    with pytest.raises(ValueError, match="accepted draft prefix"):
        scheduler.postprocess(batch.seqs, [[4, 3, 1]])
