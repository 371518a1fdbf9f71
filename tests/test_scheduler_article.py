"""The reference article's three demos, driven by the seed-style fake model."""

import random

from scheduler import Config, SamplingParams, Sequence, SequenceStatus
from scheduler.article import Scheduler
from tests.helpers.scheduler_loop import run_to_end


def article_requests(count: int, seed: int = 0) -> list[Sequence]:
    rng = random.Random(seed)
    return [Sequence([rng.randint(1, 999) for _ in range(rng.randint(1, 10))],
                     SamplingParams(temperature=0.0, max_tokens=8), seq_id=i) for i in range(count)]


def article_run(num_blocks: int, prefill_first: bool, total: int):
    cfg = Config(max_num_seqs=3, max_num_batched_tokens=64, max_model_len=15, num_kvcache_blocks=num_blocks,
                 kvcache_block_size=10, eos=-1, prefill_first=prefill_first, enable_prefix_caching=False)
    scheduler, seqs = Scheduler(cfg), article_requests(total)
    steps = []

    def record(step, batch, events):
        steps.append((step, batch, events, [s.seq_id for s in scheduler.running]))

    run_to_end(scheduler, {1: seqs[:5], 15: seqs[5:]}, on_step=record)
    assert all(s.status is SequenceStatus.FINISHED for s in seqs)
    return seqs, steps


def test_prefill_first_runs_a_late_arrival_at_once():
    seqs, steps = article_run(num_blocks=100, prefill_first=True, total=8)
    step, batch, _, _ = steps[14]
    assert step == 15 and batch.kind == "prefill"
    assert {s.seq_id for s in batch.seqs} == {5, 6, 7}
    # Someone was decoding before the arrival: its decode paused for this prefill step.
    assert any(s.seq_id < 5 for s in steps[15][1].seqs) and steps[15][1].kind == "decode"
    assert not any(e.kind == "preempted" for _, _, log, _ in steps for e in log)


def test_preemption_pushes_running_requests_back_when_blocks_run_out():
    seqs, steps = article_run(num_blocks=3, prefill_first=True, total=8)
    preempted = [e for _, _, log, _ in steps for e in log if e.kind == "preempted"]
    assert preempted, "3 blocks of 10 must force preemptions"
    assert {e.seq_id for e in preempted} <= {s.seq_id for s in seqs if s.num_preemptions}
    # A preempted request is readmitted as a recompute of its prompt plus generated tokens.
    readmissions = [e for _, _, log, _ in steps for e in log if e.kind == "admitted" and e.recompute]
    assert readmissions and all(e.num_tokens > seqs[e.seq_id].num_prompt_tokens for e in readmissions)


def test_decode_first_makes_new_requests_wait_for_running_ones():
    seqs, steps = article_run(num_blocks=100, prefill_first=False, total=10)
    for i, (_, batch, _, _) in enumerate(steps):
        if batch.kind == "prefill" and i > 0:
            running_before = steps[i - 1][3]
            assert running_before == [], "decode-first prefills only when nothing is left to decode"
    waited = [e for _, _, log, _ in steps for e in log if e.kind == "blocked" and e.reason == "decode_first"]
    assert {e.seq_id for e in waited} >= {3, 5}
    first_prefill_of = {}
    for step, batch, _, _ in steps:
        for s in batch.seqs:
            first_prefill_of.setdefault(s.seq_id, step)
    assert first_prefill_of[3] > 2 and first_prefill_of[5] > 15
