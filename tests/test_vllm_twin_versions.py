"""The vLLM twin mirrors vLLM 0.32 and 0.33 (`Config.vllm_version`), which part in two rules (facts in
../shared/reference/vllm_0.33.md, checked by `make vllm-check VLLM=0.32|0.33`): a running request that preempts
itself under the priority policy, and the blocks accepted draft tokens complete under speculative decoding."""

from dataclasses import replace

import pytest

from engine.inputs.scenario import SCENARIOS_DIR, load_scenario
from engine.run.engine import Engine
from engine.traces.trace import trace_dict
from scheduler import Config, SamplingParams, Sequence
from scheduler.vllm_v1 import VllmScheduler
from scheduler.vllm_v1.settings import VLLM_VERSIONS
from tools.refcheck.golden import golden_path, read_golden
from tools.refcheck.record import first_difference
from tools.refcheck.vllm import ADAPTER


def seq(n: int, seq_id: int, priority: int = 0, max_tokens: int = 8) -> Sequence:
    return Sequence(list(range(1, n + 1)), SamplingParams(max_tokens=max_tokens, ignore_eos=True), seq_id=seq_id,
                    arrival=seq_id, priority=priority)


def step(sched: VllmScheduler, events: list | None = None) -> list[tuple[int, int]]:
    """One step, the model accepting every draft and writing token 7; returns the (request, tokens) scheduled
    (and puts the step's events in `events`, if given)."""
    batch = sched.schedule()
    if events is not None:
        events.extend(batch.events)
    outputs = []
    for s in batch.seqs:
        prefill_chunk = s.num_computed_tokens + s.num_scheduled_tokens < len(s) + len(s.draft_token_ids)
        outputs.append(None if prefill_chunk else [*s.draft_token_ids, 7] if s.draft_token_ids else 7)
    scheduled = [(s.seq_id, n) for s, n in zip(batch.seqs, batch.num_scheduled_tokens, strict=True)]
    sched.postprocess(batch.seqs, outputs)
    return scheduled


@pytest.mark.parametrize("version, third_step, passes_ended", [("0.32", [], [(0, (1,))]), ("0.33", [(1, 1)], [])])
def test_a_request_that_preempts_itself_ends_the_running_loop_in_032_but_not_in_033(version, third_step,
                                                                                     passes_ended):
    """Request 0 (priority 2, the least important) runs first; at step 3 it needs a block the full pool lacks and
    is itself the victim. 0.32 schedules nobody else that step (and says so, naming who it skipped); 0.33 goes on
    to request 1, which fits in the blocks request 0 freed."""
    sched = VllmScheduler(Config(num_kvcache_blocks=4, kvcache_block_size=2, max_num_batched_tokens=64,
                                 max_model_len=64, chunked_prefill=True, queue_policy="priority",
                                 enable_prefix_caching=False, vllm_version=version))
    sched.add(seq(3, 0, priority=2))
    assert step(sched) == [(0, 3)]
    sched.add(seq(4, 1, priority=1))
    assert step(sched) == [(0, 1), (1, 4)]
    events = []
    assert step(sched, events) == third_step
    assert [(e.seq_id, e.skipped) for e in events if e.kind == "pass_ended"] == passes_ended
    assert [s.seq_id for s in sched.waiting_seqs] == [0]


@pytest.mark.parametrize("version, free_queue", [("0.32", [2, *range(3, 17), 1]), ("0.33", [*range(3, 17), 2, 1])])
def test_a_block_completed_by_accepted_drafts_is_cached_in_033_and_freed_to_the_tail(version, free_queue):
    """5 prompt tokens in blocks of 4 and 4 output tokens, with drafts: the accepted drafts complete block 2 in
    the last step. 0.33 hashes it, so it is freed to the tail of the free queue (evicted last); 0.32 frees it
    unhashed to the head (reused first)."""
    sched = VllmScheduler(Config(num_kvcache_blocks=16, kvcache_block_size=4, max_num_batched_tokens=64,
                                 max_model_len=64, chunked_prefill=True, num_speculative_tokens=3,
                                 prompt_lookup_min=1, prompt_lookup_max=2, vllm_version=version))
    sched.add(seq(5, 0, max_tokens=4))
    while not sched.is_finished():
        step(sched)
    assert list(sched.pool.free_order()) == free_queue


@pytest.mark.parametrize("release, other", [("0.32", "0.33"), ("0.33", "0.32")])
def test_each_releases_golden_traces_tell_the_twin_set_to_the_other_release_apart(release, other):
    """The golden traces pin the version choice: replayed with the twin set to the other release, some priority
    workload parts from what vLLM `release` decided."""
    golden = read_golden(golden_path("vllm", release))
    assert any(first_difference(t["steps"], ADAPTER.run_twin(t["workload"], other), golden.fields)
               for t in golden.traces if t["workload"]["mode"] == "priority")


def test_a_run_records_the_release_it_was_decided_under():
    spec = load_scenario(SCENARIOS_DIR / "vllm_vs_article.toml").spec_for("fake")
    for version in VLLM_VERSIONS:
        engine = Engine(replace(spec, config=replace(spec.config, vllm_version=version)))
        engine.run(2)
        assert trace_dict(engine)["decided_by"] == {"kind": "vllm", "system": "vLLM", "version": version}
        assert engine.frames[2].decided_by.version == version
