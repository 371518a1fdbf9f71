"""The scheduler contract (scheduler/contract.py), for every kind in the factory: each declares itself and fits the
protocols, and, property-based over random configs and workloads, keeps the invariants read only through the
contract: no unit owned twice, free + used + cached = the pool, only the scheduler changes a request's status,
tokens computed never exceed tokens known. Through the engine, the frames' free order is the pool's own."""

import ast
import json
from collections import Counter, OrderedDict
from dataclasses import replace

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from engine.run.engine import Engine
from engine.run.recipe import Request, RunSpec
from engine.traces.trace import read_trace, trace_dict
from i18n import CATALOGUES
from runner.fake import FakeRunner
from scheduler import Config, RequestRejected, SequenceStatus
from scheduler.article.block_manager import BlockManager
from scheduler.config import CONFIG_FIELDS
from scheduler.contract import KVPoolView, PoolChanges, SchedulerProtocol, UnitState
from scheduler.factory import SCHEDULER_KINDS, SCHEDULERS, make_scheduler, runner_config, scheduler_info
from tests.helpers.scheduler_strategies import configs, requests
from tests.helpers.source import ROOT, source_files

WAITING, RUNNING, FINISHED, ABORTED = (SequenceStatus.WAITING, SequenceStatus.RUNNING, SequenceStatus.FINISHED,
                                       SequenceStatus.ABORTED)
ALLOWED = {WAITING: {WAITING, RUNNING, FINISHED, ABORTED}, RUNNING: {RUNNING, WAITING, FINISHED, ABORTED},
           FINISHED: {FINISHED}, ABORTED: {ABORTED}}  # a status a request may have next


@pytest.mark.parametrize("kind", SCHEDULER_KINDS)
def test_every_kind_declares_itself_and_fits_the_protocols(kind):
    info = scheduler_info(kind)
    scheduler = make_scheduler(kind, Config(num_kvcache_blocks=8))
    assert info.kind == kind and SCHEDULERS[kind].info is info
    assert isinstance(scheduler, SchedulerProtocol) and isinstance(scheduler.pool, KVPoolView)
    declared = [key for key in (info.sidebar_note,) if key]  # how it picks a victim, where it declares it
    for spec in info.own_settings:  # its own settings: their words, a valid default each, a key no other kind has
        declared += [spec.label_id, spec.help_id]
        assert spec.owner is info.settings and spec.messages.startswith(f"{kind}.")
        assert Config(**{spec.key: spec.default}).value(spec.key) == spec.default
        assert spec.choices or spec.kind in ("bool", "str") or spec.bounds[0] <= spec.default <= spec.bounds[1]
    declared += [key for _, key in info.words]  # the stage's words for its pool and queues
    for key in (info.name, info.run_name, *declared):
        assert all(key in CATALOGUES[lang] for lang in ("en", "zh")), key  # its words, both languages
    assert info.system
    assert set(info.ignored) | info.honoured == set(CONFIG_FIELDS) and not set(info.ignored) & info.honoured
    assert {"max_num_seqs", "num_kvcache_blocks", "kvcache_block_size"} <= info.honoured
    pool = scheduler.pool
    assert pool.num_units == 8 and len(pool.unit_ids) == 8 + len(pool.reserved_unit_ids)
    assert runner_config(kind, Config(num_kvcache_blocks=8)).num_kvcache_blocks == 8 + info.reserved_units
    assert len(pool.reserved_unit_ids) == info.reserved_units
    assert list(pool.free_order()) and pool.num_free_units == 8 and not pool.cached_keys()
    assert info.decided_by.kind == kind and info.decided_by.version == info.version


def test_the_declarations_say_what_each_scheduler_is():
    article, twin = scheduler_info("article"), scheduler_info("vllm")
    assert (twin.system, twin.version, twin.reserved_units, twin.queues_oversized_prompt) == ("vLLM", "0.32", 1, True)
    sglang_only = ("chunked_prefill_size", "max_prefill_tokens", "schedule_policy", "schedule_conservativeness",
                   "enable_priority_scheduling", "schedule_low_priority_values_first",
                   "priority_scheduling_preemption_threshold", "disable_priority_preemption", "retraction_policy")
    own = lambda info: tuple(spec.key for spec in info.own_settings)  # noqa: E731
    assert twin.ignored == () and own(twin) == (
        "vllm_version", "scheduler_reserve_full_isl", "watermark", "max_num_scheduled_tokens", "max_num_active_seqs",
        "long_prefill_token_threshold", "long_prefill_token_threshold_adaptive")
    assert (article.system, article.reserved_units, article.queues_oversized_prompt) == ("nano-vllm", 0, False)
    assert article.ignored == () and own(article) == ("prefill_first", "mixed_batches", "preemption_policy",
                                                      "notebook_block_bug", "cache_blocks_at_allocation")
    sglang = scheduler_info("sglang")
    assert (sglang.system, sglang.version, sglang.reserved_units, sglang.queues_oversized_prompt) == \
        ("SGLang", "0.5.23", 1, False)
    assert own(sglang) == sglang_only and sglang.ignored == (
        "max_num_batched_tokens", "enable_prefix_caching", "chunked_prefill", "queue_policy", "num_speculative_tokens",
        "prompt_lookup_min", "prompt_lookup_max")
    assert sglang.reads("schedule_policy") and sglang.reads("max_num_seqs") and not sglang.reads("preemption_policy")
    assert not twin.reads("schedule_policy") and twin.reads("watermark") and not article.reads("watermark")
    assert sglang.setting_name("max_num_seqs") == "max_running_requests" and sglang.repoints_tables
    assert twin.setting_name("max_num_seqs") == "max_num_seqs"
    with pytest.raises(ValueError, match="use one of"):
        scheduler_info("sglang-someday")


CONFIGS = configs(eos=(-1, 7), long_prefill=(0, 0, 3))


@st.composite
def workloads(draw):
    """(arrival step, sequence, step at which the test aborts it or None) for up to 10 requests."""
    return [(arrival, seq, draw(st.one_of(st.none(), st.integers(arrival, arrival + 10))))
            for arrival, seq in draw(requests(most=10, lengths=(1, 40), most_tokens=20, last_arrival=8))]


def check_pool(scheduler):
    """No unit owned twice, free + used + cached = pool, each unit's holders as its state says."""
    pool, held = scheduler.pool, [*scheduler.running_seqs, *scheduler.waiting_seqs]
    for seq in held:
        assert len(set(seq.block_table)) == len(seq.block_table), f"{seq} lists a unit twice"
    owners = Counter(unit for seq in held for unit in seq.block_table)
    reserved = set(pool.reserved_unit_ids)
    assert not owners.keys() & reserved, "a reserved unit was given to a request"
    free = list(pool.free_order())
    assert len(free) == len(set(free)) == pool.num_free_units
    states = Counter()
    for unit in pool.unit_ids:
        holders, key = pool.unit_state(unit)
        state = pool.state(unit)
        assert holders == owners[unit] + (unit in reserved), f"unit {unit}: {holders} holders, {owners[unit]} owners"
        assert (state is UnitState.USED) == (holders > 0)
        assert state is not UnitState.CACHED or key is not None
        if unit not in reserved:
            states[state] += 1
    assert set(free) == {u for u in pool.unit_ids if pool.state(u) is not UnitState.USED}
    assert states[UnitState.FREE] + states[UnitState.USED] + states[UnitState.CACHED] == pool.num_units
    assert states[UnitState.FREE] + states[UnitState.CACHED] == pool.num_free_units
    assert all(pool.unit_state(u)[1] == key for u, key in pool.cached_keys().items())


def check_requests(scheduler, every_seq, statuses: dict):
    """Queues and statuses agree; a status only moves along ALLOWED; computed tokens never exceed known ones."""
    waiting, running = scheduler.waiting_seqs, scheduler.running_seqs
    assert len({s.seq_id for s in [*waiting, *running]}) == len(waiting) + len(running), "a request queued twice"
    assert all(s.status is WAITING for s in waiting) and all(s.status is RUNNING for s in running)
    queued = {s.seq_id for s in [*waiting, *running]}
    for seq in every_seq:
        if seq.seq_id in statuses:
            assert seq.status in ALLOWED[statuses[seq.seq_id]], f"{seq}: {statuses[seq.seq_id]} -> {seq.status}"
            assert seq.seq_id in queued or seq.is_done, f"{seq} was lost"
            statuses[seq.seq_id] = seq.status
        assert seq.num_computed_tokens <= len(seq.token_ids), f"{seq} computed more tokens than it knows"


def drive(kind, config, workload, max_steps=600) -> bool:
    """Add, schedule, run the fake model, postprocess (and abort where the workload says), checking the contract
    after every call. True when every request ended."""
    scheduler = make_scheduler(kind, config)
    runner = FakeRunner(config.max_model_len, eos=config.eos)
    every_seq = [seq for _, seq, _ in workload]
    statuses: dict[int, SequenceStatus] = {}
    for step in range(1, max_steps + 1):
        for arrival, seq, abort_at in workload:
            if arrival == step:
                try:
                    scheduler.add(seq)
                    statuses[seq.seq_id] = seq.status
                except RequestRejected:
                    assert seq.status is ABORTED and seq.finish_reason
            if abort_at == step and seq.seq_id in statuses and not seq.is_done:
                event = scheduler.abort(seq, "by the test")
                assert (event.seq_id, seq.status, seq.block_table) == (seq.seq_id, ABORTED, [])
        check_requests(scheduler, every_seq, statuses)
        batch = scheduler.schedule()
        for seq, n in zip(batch.seqs, batch.num_scheduled_tokens, strict=True):
            assert seq.status is RUNNING and 0 < n == seq.num_scheduled_tokens
            assert seq.num_computed_tokens + n <= len(seq.token_ids) + len(seq.draft_token_ids)
        check_pool(scheduler)
        before = [(seq.status, len(seq.token_ids), seq.num_computed_tokens) for seq in every_seq]
        outputs = runner.run(batch.seqs)
        assert [(seq.status, len(seq.token_ids), seq.num_computed_tokens) for seq in every_seq] == before, \
            "the runner changed a request"
        scheduler.postprocess(batch.seqs, outputs)
        check_requests(scheduler, every_seq, statuses)
        check_pool(scheduler)
        if step >= max(arrival for arrival, _, _ in workload) and scheduler.is_finished():
            return True
    return False


@pytest.mark.parametrize("kind", SCHEDULER_KINDS)
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(config=CONFIGS, workload=workloads())
def test_every_kind_keeps_the_contracts_invariants(kind, config, workload):
    info = scheduler_info(kind)
    must_end = not info.queues_oversized_prompt or config.max_model_len <= config.kv_capacity_tokens
    if info.stalls and info.stalls(config):  # its system's own livelocks (V0's under chunked prefill)
        must_end = False
    ended = drive(kind, config, workload, max_steps=600 if must_end else 100)
    assert ended or not must_end, "the run did not end"  # one that queues a prompt larger than its pool may wait


@pytest.mark.parametrize("kind", SCHEDULER_KINDS)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(config=CONFIGS, workload=workloads(), overlap=st.booleans())
def test_the_frames_free_order_is_the_pools_own(kind, config, workload, overlap):
    """The recorder ranks free blocks from what the pool states (recent_changes), never inferring it, and reads the
    tables a scheduler re-points in postprocess (SGLang's rows moved onto the tree's copy of a prefix)."""
    assume(not (overlap and config.num_speculative_tokens))
    config = replace(config, eos=-1)
    requests = [Request(prompt_token_ids=tuple(seq.token_ids), max_tokens=seq.sampling_params.max_tokens,
                        arrival=arrival, priority=seq.priority) for arrival, seq, _ in workload]
    engine = Engine(RunSpec(config, requests, "fake", overlap=overlap, scheduler=kind))
    while not engine.is_finished and engine.step_count < 150:
        engine.step()
        frame = engine.frames[len(engine.frames) - 1]
        assert frame.free_block_ids == tuple(engine.scheduler.pool.free_order())
        assert frame.decided_by == scheduler_info(kind).decided_by
        pool = engine.scheduler.pool  # and every table and unit as the scheduler left them (after postprocess)
        for seq in [*engine.scheduler.running_seqs, *engine.scheduler.waiting_seqs]:
            assert frame.requests[seq.seq_id].block_table == tuple(seq.block_table)
        assert all(block.ref_count == pool.unit_state(block.id)[0] for block in frame.blocks)
        if engine.stalled:
            break


def test_a_pool_that_reorders_its_free_units_has_its_free_order_read_whole(monkeypatch):
    """A pool whose free order changes inside (an LRU touch: here, reversed at every look) says `reordered`, and
    the frames follow its order all the same."""
    def reordered(pool):
        pool.free_log.take()
        pool.free_block_ids = OrderedDict.fromkeys(reversed(pool.free_block_ids))
        return PoolChanges(reordered=True)

    monkeypatch.setattr(BlockManager, "recent_changes", reordered)
    config = Config(max_num_seqs=3, num_kvcache_blocks=6, kvcache_block_size=4, max_model_len=24,
                    max_num_batched_tokens=48)
    requests = [Request(prompt_token_ids=tuple(range(1, 10 + i)), max_tokens=6, arrival=i) for i in range(5)]
    engine = Engine(RunSpec(config, requests, "fake"))
    orders = set()
    while not engine.is_finished and engine.step_count < 100:
        engine.step()
        frame = engine.frames[len(engine.frames) - 1]
        assert frame.free_block_ids == tuple(engine.scheduler.pool.free_order())
        orders.add(frame.free_block_ids)
    assert engine.is_finished and len(orders) > 3


@pytest.mark.parametrize("kind", SCHEDULER_KINDS)
def test_a_trace_and_its_frames_record_the_scheduler_and_version_that_decided_them(kind):
    requests = [Request(prompt_token_ids=(1, 2, 3, 4, 5), max_tokens=3, arrival=i) for i in range(3)]
    engine = Engine(RunSpec(Config(num_kvcache_blocks=8, kvcache_block_size=4), requests, "fake", scheduler=kind))
    engine.run()
    decided = scheduler_info(kind).decided_by
    data = trace_dict(engine, "t")
    assert data["decided_by"] == {"kind": kind, "system": decided.system, "version": decided.version}
    store, _ = read_trace(json.dumps(data))
    assert all(frame.decided_by == decided for frame in store) and engine.frames[0].decided_by == decided
    older = json.dumps({**data, "decided_by": {**data["decided_by"], "version": "0.1"}})  # a twin of its time
    assert read_trace(older)[0][0].decided_by.version == "0.1"
    without = {k: v for k, v in data.items() if k != "decided_by"}  # written before traces recorded it
    assert read_trace(json.dumps(without))[0][0].decided_by == decided
    other = next(k for k in SCHEDULER_KINDS if k != kind)
    with pytest.raises(ValueError, match=f"is not the scheduler this trace names \\({kind}\\)"):
        read_trace(json.dumps({**data, "decided_by": {**data["decided_by"], "kind": other}}))
    with pytest.raises(ValueError, match="decided_by.version"):
        read_trace(json.dumps({**data, "decided_by": {**data["decided_by"], "version": 32}}))


def test_no_module_outside_scheduler_branches_on_a_kind_or_imports_a_schedulers_internals():
    """The factory is the one place naming the kinds: elsewhere a scheduler is read through its declaration. (The
    reference checks in tools/ drive their own system's twin, and tests may name any kind.)"""
    internals = tuple(f"scheduler.{name}" for name in ("scheduler", "overlapped", *(
        p.name for p in (ROOT / "scheduler").iterdir() if p.is_dir() and (p / "__init__.py").exists())))
    offending = []
    for relative, tree in source_files():
        if relative.startswith(("scheduler/", "tests/", "tools/", "bench/")):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(internals):
                offending.append(f"{relative}:{node.lineno} imports {node.module}")
            if isinstance(node, ast.Compare):
                sides = [node.left, *node.comparators]
                kinds = [s for s in sides if isinstance(s, ast.Constant) and s.value in SCHEDULER_KINDS]
                if kinds and any("scheduler" in ast.unparse(s) for s in sides if s not in kinds):
                    offending.append(f"{relative}:{node.lineno} compares a scheduler with {kinds[0].value!r}")
    assert not offending, offending
