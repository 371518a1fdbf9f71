"""The scheduler contract (scheduler/contract.py), for every kind in the factory: each declares itself and fits the
protocols, and, property-based over random configs and workloads, keeps the invariants read only through the
contract (engine/check/invariants.py, which `python -m engine check` runs on any kind). Through the engine, the
frames' free order is the pool's own."""

import ast
import json
from collections import OrderedDict
from dataclasses import replace

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from engine.check.invariants import drive
from engine.check.strategies import configs, workloads
from engine.run.engine import Engine
from engine.run.recipe import Request, RunSpec
from engine.traces.trace import read_trace, trace_dict
from i18n import CATALOGUES
from scheduler import Config
from scheduler.article.block_manager import BlockManager
from scheduler.config import CONFIG_FIELDS
from scheduler.contract import KVPoolView, PoolChanges, SchedulerProtocol
from scheduler.factory import SCHEDULER_KINDS, SCHEDULERS, make_scheduler, runner_config, scheduler_info
from tests.helpers.source import ROOT, source_files


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


@pytest.mark.parametrize("kind", SCHEDULER_KINDS)
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(config=CONFIGS, workload=workloads())
def test_every_kind_keeps_the_contracts_invariants(kind, config, workload):
    drive(kind, config, workload)  # raises Broken naming the invariant (engine/check/invariants.py)


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
    reference checks in tools/ drive their own system's twin, and tests and a learner's starters may name any kind.)"""
    internals = tuple(f"scheduler.{name}" for name in ("scheduler", "overlapped", *(
        p.name for p in (ROOT / "scheduler").iterdir() if p.is_dir() and (p / "__init__.py").exists())))
    offending = []
    for relative, tree in source_files():
        if relative.startswith(("scheduler/", "tests/", "tools/", "bench/", "starters/")):  # a starter subclasses one
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
