"""The referee (engine/check/referee.py): every built-in kind's honest trace passes, on the presets and on random
configs and workloads with mid-run changes (property-based); a trace tampered with, as a hostile worker could,
fails with the message id of the rule it breaks and the frame it breaks at."""

import contextlib
import copy
import json
import random
from dataclasses import replace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import load_scenario, preset_paths
from engine.check.invariants import Broken
from engine.check.referee import referee
from engine.check.strategies import configs, requests
from engine.learner import load
from engine.run.engine import Engine
from engine.run.recipe import Request, RunSpec
from engine.traces.schema import checked_trace
from engine.traces.trace import trace_dict, trace_store
from i18n import MessageError
from runner.fake import FakeRunner
from scheduler import Config
from scheduler.factory import SCHEDULERS, scheduler_info
from tests.helpers.source import ROOT
from tools.golden_runs import random_change, random_config

PRESETS = [(path, variant) for path in preset_paths()
           for variant in ((False, True) if load_scenario(path, runner="fake").variant else (False,))]


def run(spec: RunSpec, steps: int | None = None) -> Engine:
    engine = Engine(spec)
    engine.run(steps)
    return engine


def trace_of(engine: Engine) -> dict:
    """The run's trace as the server receives it: JSON, checked."""
    return checked_trace(json.dumps(trace_dict(engine)))


def broken(trace: dict, spec: RunSpec | None = None) -> Broken:
    """The referee's verdict on a copy of `trace` (it must break a rule)."""
    with pytest.raises(Broken) as caught:
        referee(checked_trace(json.dumps(trace)), spec)
    return caught.value


@pytest.fixture(scope="module")
def preemption(preemption_preset) -> tuple[Engine, dict]:
    """Preset 02_preemption (article, a pool of 3 blocks, preemptions) run to its end, and its trace."""
    return preemption_preset, trace_of(preemption_preset)


@pytest.fixture(scope="module")
def shared() -> tuple[Engine, dict]:
    """The vLLM twin with prefix caching: requests sharing a cached prefix (blocks with several holders)."""
    prefix = tuple(range(1, 17))
    workload = [Request(arrival=a, prompt_token_ids=prefix + (100 + a,), max_tokens=6) for a in (0, 0, 2, 3)]
    spec = RunSpec(Config(max_num_seqs=2, num_kvcache_blocks=16, kvcache_block_size=4, enable_prefix_caching=True),
                   tuple(workload), scheduler="vllm")
    engine = run(spec)
    return engine, trace_of(engine)


def with_view(trace: dict, k: int, rid: int, **changes) -> dict:
    """A copy of `trace` whose frame k records request `rid` with `changes` (its other fields as they were)."""
    trace = copy.deepcopy(trace)
    view = trace_store(checked_trace(json.dumps(trace)))[k].requests[rid].to_dict(tokens=False) | changes
    records = [r for r in trace["frames"][k]["requests"] if r["id"] != rid] + [view]
    trace["frames"][k]["requests"] = sorted(records, key=lambda r: r["id"])
    return trace


def with_block(trace: dict, k: int, block, **changes) -> dict:
    """A copy of `trace` whose frame k records `block` (a BlockView) with `changes`."""
    trace = copy.deepcopy(trace)
    record = trace["frames"][k]
    record["blocks"] = [b for b in record["blocks"] if b["id"] != block.id] + [block.to_dict() | changes]
    return trace


def frame_where(engine: Engine, test) -> int:
    return next(k for k, frame in enumerate(engine.frames) if test(frame))


# -- honest traces pass --------------------------------------------------------------------------------------

@pytest.mark.parametrize("path, variant", PRESETS, ids=[p.stem + ":variant" * v for p, v in PRESETS])
def test_every_presets_trace_passes_held_to_its_recipe(path, variant):
    engine = load_scenario(path, runner="fake").engine(variant=variant)
    engine.run()
    referee(trace_of(engine), engine.spec)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("kind", list(SCHEDULERS)[:4])
def test_random_runs_of_every_kind_with_mid_run_changes_pass(kind, seed):
    """Configs, pool rebuilds, requests added by hand, overlap and the adaptive controller switched mid-run (the
    golden runs' random changes)."""
    rng = random.Random(seed)
    config = random_config(rng)
    workload = tuple(Request(arrival=rng.randint(0, 6), prompt_token_ids=tuple(rng.randint(1, 999) for _ in
                                                                               range(rng.randint(1, 12))),
                             max_tokens=rng.randint(1, 20), priority=rng.randint(-2, 2))
                     for _ in range(rng.randint(2, 8)))
    overlap = not config.num_speculative_tokens and rng.random() < 0.4
    engine = Engine(RunSpec(config, workload, seed=seed, overlap=overlap, scheduler=kind, max_steps=300))
    changes = {}
    for _ in range(rng.randint(1, 5)):
        changes.setdefault(rng.randint(0, 12), []).append(random_change(rng, 0))
    while not engine.is_finished and not engine.stalled and engine.step_count < 300:
        for what, change in changes.get(engine.step_count, []):
            with contextlib.suppress(MessageError, ValueError):  # a change this kind refuses
                engine.add_request(change) if what == "request" else engine.set_config(**change)
        engine.step()
    referee(trace_of(engine), engine.spec)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(kind=st.sampled_from(list(SCHEDULERS)[:4]), config=configs(eos=(-1, 7)),
       drawn=requests(most=6, lengths=(1, 30), most_tokens=16, last_arrival=6), seed=st.integers(0, 50),
       overlap=st.booleans())
def test_every_kind_passes_on_drawn_configs_and_workloads(kind, config, drawn, seed, overlap):
    overlap = overlap and not config.num_speculative_tokens
    workload = tuple(Request(arrival=a, prompt_token_ids=tuple(s.token_ids), max_tokens=s.sampling_params.max_tokens,
                             ignore_eos=s.sampling_params.ignore_eos, priority=s.priority) for a, s in drawn)
    engine = run(RunSpec(config, workload, seed=seed, overlap=overlap, scheduler=kind, max_steps=200))
    referee(trace_of(engine), engine.spec)


def test_a_request_ending_by_eos_and_a_run_stopped_early_pass():
    """EOS chosen as the fake model's third output of request 0, so it ends there; a run stopped after 3 steps says
    so and passes with requests left."""
    prompt = (5, 6, 7)
    eos = FakeRunner(64).next_token(0, len(prompt) + 2)
    spec = RunSpec(Config(eos=eos), (Request(prompt_token_ids=prompt, max_tokens=10),))
    engine = run(spec)
    assert engine.requests[0].seq.finish_reason == "eos" and len(engine.requests[0].seq.completion_token_ids) == 3
    referee(trace_of(engine), spec)
    stopped = trace_of(run(spec, steps=2))
    assert stopped["ended"] == "steps"
    referee(stopped, spec)


@pytest.mark.parametrize("kind", list(SCHEDULERS)[:4])
def test_aborts_pass_refused_at_arrival_and_by_a_smaller_pool(kind):
    """A prompt larger than the pool (refused on arrival, or queued for good where the kind waits, as vLLM does),
    then the pool rebuilt smaller mid-run: the requests that no longer fit end aborted."""
    spec = RunSpec(Config(num_kvcache_blocks=12, kvcache_block_size=2, max_model_len=64), (
        Request(prompt_token_ids=tuple(range(1, 31)), max_tokens=4),
        *(Request(arrival=a, prompt_token_ids=tuple(range(40, 40 + 3 * a + 2)), max_tokens=8) for a in range(4))),
        scheduler=kind)
    engine = Engine(spec)
    engine.run(steps=4)
    engine.set_config(num_kvcache_blocks=4)
    engine.run(steps=60)
    aborted = any(r.seq.status.name == "ABORTED" for r in engine.requests)
    assert aborted or scheduler_info(kind).queues_oversized_prompt  # vLLM keeps it waiting
    referee(trace_of(engine), engine.spec)


@pytest.mark.parametrize("kind, outputs", [("vllm", 3), ("article", 6)])
def test_stop_tokens_end_a_request_only_where_its_kind_reads_them(kind, outputs):
    """The fake model's third output of request 0 as its stop token, under min_tokens 2: the vLLM twin reads stop
    tokens and ends it there, the article's scheduler does not and runs it to its max_tokens; both pass."""
    prompt = (5, 6, 7)
    stop = FakeRunner(64).next_token(0, len(prompt) + 2)
    spec = RunSpec(Config(), (Request(prompt_token_ids=prompt, max_tokens=6, stop_token_ids=(stop,), min_tokens=2),),
                   scheduler=kind)
    engine = run(spec)
    assert len(engine.requests[0].seq.completion_token_ids) == outputs
    referee(trace_of(engine), spec)
    if kind == "vllm":  # without its stop token in the trace, its end at that token comes early
        trace = trace_of(engine)
        trace["requests"][0]["sampling"]["stop_token_ids"] = []
        assert broken(trace).message.key == "check.finish_early"


# -- tampered traces fail, naming the rule and the frame -----------------------------------------------------

def test_a_block_given_to_two_requests(preemption):
    engine, trace = preemption
    k = frame_where(engine, lambda f: sum(bool(r.block_table) for r in f.requests) >= 2)
    holders = [r for r in engine.frames[k].requests if r.block_table]
    tampered = with_view(trace, k, holders[1].id, block_table=[*holders[1].block_table, holders[0].block_table[0]])
    e = broken(tampered)
    assert (e.message.key, e.step) == ("check.held_twice", k)


def test_a_shared_block_counted_once(shared):
    engine, trace = shared
    k = frame_where(engine, lambda f: any(len(f.block_owners(b.id)) > 1 for b in f.blocks))
    block = next(b for b in engine.frames[k].blocks if len(engine.frames[k].block_owners(b.id)) > 1)
    e = broken(with_block(trace, k, block, ref_count=1))
    assert (e.message.key, e.step) == ("check.held_twice", k)


def test_a_requests_tokens_edited(preemption):
    engine, trace = preemption
    tampered = copy.deepcopy(trace)
    tampered["requests"][2]["output_token_ids"][1] += 1
    e = broken(tampered)
    step = frame_where(engine, lambda f: len(f.requests) > 2 and f.requests[2].num_output_tokens >= 2)
    assert (e.message.key, e.step, e.message.values["seq"]) == ("check.token", step, 2)


@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_any_token_edited_is_caught_where_it_was_written(preemption, data):
    engine, trace = preemption
    last = engine.frames[-1].requests
    rid = data.draw(st.sampled_from([r.id for r in last if r.num_output_tokens]))
    index = data.draw(st.integers(0, last[rid].num_output_tokens - 1))
    tampered = copy.deepcopy(trace)
    tampered["requests"][rid]["output_token_ids"][index] += 1
    written = frame_where(engine, lambda f: len(f.requests) > rid and f.requests[rid].num_output_tokens > index)
    e = broken(tampered)
    assert (e.message.key, e.step, e.message.values["seq"], e.message.values["index"]) == ("check.token", written,
                                                                                             rid, index)


def test_a_finish_moved_earlier(preemption):
    engine, trace = preemption
    finish = frame_where(engine, lambda f: f.requests[0].status == "finished")
    k = finish - 2
    tampered = with_view(trace, k, 0, status="finished", finish_reason="max_tokens", block_table=[])
    e = broken(tampered)
    assert (e.message.key, e.step) == ("check.finish_early", k)
    summary = copy.deepcopy(trace)
    summary["requests"][0]["finish_step"] = k
    e = broken(summary)
    assert (e.message.key, e.message.values["field"]) == ("check.summary", "finish_step")
    assert e.step == len(engine.frames) - 1


def test_a_finish_narrated_that_the_frame_does_not_show(preemption):
    """The stage narrates a frame's events: "request 0 finished" while it still runs is forged."""
    engine, trace = preemption
    k = frame_where(engine, lambda f: f.step and f.requests[0].status == "running")
    tampered = copy.deepcopy(trace)
    tampered["frames"][k]["events"].append({"kind": "finished", "seq_id": 0, "reason": "eos"})
    e = broken(tampered)
    assert (e.message.key, e.step, e.message.values["status"]) == ("check.end_event", k, "RUNNING")


def test_a_batch_over_max_num_seqs(preemption):
    engine, trace = preemption
    k = frame_where(engine, lambda f: f.step and len(f.batch.seq_ids) >= 2)
    tampered = copy.deepcopy(trace)
    tampered["frames"][k]["config"] = {**trace["config"], "max_num_seqs": 1}
    e = broken(tampered)
    assert (e.message.key, e.step) == ("check.batch_seqs", k)
    e = broken(tampered, engine.spec)  # held to its recipe, the lowered limit is forged too: the batch says it first
    assert (e.message.key, e.step) == ("check.batch_seqs", k)


def test_a_computed_count_raised(preemption):
    """A decoding request's computed count raised to its known tokens (the schema's bound): the batch gives less."""
    engine, trace = preemption
    k = frame_where(engine, lambda f: f.step and f.requests[0].status == "running")
    view = engine.frames[k].requests[0]
    assert view.num_computed_tokens < view.num_tokens
    e = broken(with_view(trace, k, 0, num_computed_tokens=view.num_tokens))
    assert (e.message.key, e.step) == ("check.computed_moved", k)


def test_a_status_jumping_from_finished_back_to_running(preemption):
    engine, trace = preemption
    finish = frame_where(engine, lambda f: f.requests[0].status == "finished")
    e = broken(with_view(trace, finish + 1, 0, status="running"))
    assert (e.message.key, e.step) == ("check.status_move", finish + 1)
    assert e.message.values == {"seq": 0, "before": "FINISHED", "after": "RUNNING"}


def test_a_pool_count_off_by_one(preemption):
    engine, trace = preemption
    k = 3
    metrics = copy.deepcopy(trace)
    metrics["frames"][k]["metrics"]["num_free_blocks"] += 1
    e = broken(metrics)
    assert (e.message.key, e.message.values["name"], e.step) == ("check.metric", "num_free_blocks", k)
    held = next(b for b in engine.frames[k].blocks if b.ref_count)
    e = broken(with_block(trace, k, held, ref_count=2))
    assert (e.message.key, e.step) == ("check.holders", k)


def test_a_request_dropped_from_the_trace(preemption):
    """The worker ran the workload less its last request (a consistent trace, and a faster run): held to the recipe
    the server sent, it is caught."""
    engine, _ = preemption
    fewer = run(replace(engine.spec, workload=engine.spec.workload[:-1]))
    referee(trace_of(fewer))  # consistent in itself
    e = broken(trace_of(fewer), engine.spec)
    assert (e.message.key, e.message.values["field"], e.step) == ("check.recipe", "requests", 0)


def test_a_larger_pool_or_a_faster_clock_than_the_recipe(preemption):
    engine, trace = preemption
    larger = run(replace(engine.spec, config=replace(engine.spec.config, num_kvcache_blocks=30)))
    e = broken(trace_of(larger), engine.spec)
    assert (e.message.key, e.message.values["field"], e.step) == ("check.recipe", "config", 0)
    faster = copy.deepcopy(trace)
    for frame in faster["frames"][5:]:
        frame["sim_time_s"] /= 2
    e = broken(faster, engine.spec)
    assert (e.message.key, e.step) == ("check.clock", 5)


def test_progress_no_batch_gives(preemption):
    """A token for a request its step did not batch."""
    engine, trace = preemption
    k, rid = next((f.step, r.id) for f in engine.frames for r in f.requests
                  if f.step and r.status == "waiting" and r.id not in f.batch.seq_ids)
    view = engine.frames[k].requests[rid]
    e = broken(with_view(trace, k, rid, num_tokens=view.num_tokens + 1))
    assert (e.message.key, e.step) == ("check.progress", k)


def test_a_batch_that_hides_where_its_chunks_start(preemption):
    """Without num_computed the progress a batch gives cannot be checked: a trace of this writer must keep it."""
    engine, trace = preemption
    tampered = copy.deepcopy(trace)
    for frame in tampered["frames"]:
        del frame["batch"]["num_computed"], frame["batch"]["num_drafts"]
    e = broken(tampered)
    assert (e.message.key, e.step) == ("check.batch_fields", 1)
    referee(checked_trace(json.dumps({k: v for k, v in tampered.items() if k != "ended"})))  # an older trace's


def test_a_run_said_finished_with_requests_left(preemption):
    engine, _ = preemption
    stopped = trace_of(run(engine.spec, steps=5))
    e = broken({**stopped, "ended": "finished"})
    assert (e.message.key, e.step) == ("check.unended", 5)


def test_a_run_said_finished_before_its_last_request_arrived():
    """Every request that arrived has ended, but the recipe has one arriving later: only the recipe shows it."""
    spec = RunSpec(Config(), (Request(prompt_token_ids=(1, 2), max_tokens=2),
                              Request(arrival=9, prompt_token_ids=(3, 4), max_tokens=2)))
    early = trace_of(run(spec, steps=4))
    assert early["ended"] == "steps" and [r["finish_reason"] for r in early["requests"]] == ["max_tokens"]
    referee(early, spec)
    e = broken({**early, "ended": "finished"}, spec)
    assert (e.message.key, e.message.values["field"], e.step) == ("check.recipe", "requests", 4)


# -- a learner's scheduler, and a run on the real model ------------------------------------------------------

IMPATIENT = """from scheduler.article import Scheduler
from scheduler.sequence import SequenceStatus


class Impatient(Scheduler):
    info = Scheduler.info.derive("impatient")

    def postprocess(self, seqs, token_ids):
        events = super().postprocess(seqs, token_ids)
        for seq in seqs:
            if not seq.is_done and seq.num_completion_tokens >= 2:  # two tokens are enough: a run that looks fast
                self.running.remove(seq)
                self._end(seq, SequenceStatus.FINISHED, "max_tokens")
        return events
"""


@pytest.mark.usefixtures("kinds_restored")
def test_a_learners_scheduler_passes_and_one_ending_requests_early_is_caught(tmp_path):
    """The smart victim starter runs as a kind of its own and passes; one that ends every request after two tokens
    (the contract's invariants do not see it) is caught at the first end."""
    (tmp_path / "impatient.py").write_text(IMPATIENT)
    workload = tuple(Request(arrival=a, prompt_token_ids=(1, 2, 3, a + 4), max_tokens=5) for a in range(4))
    for file, verdict in ((ROOT / "starters/smart_victim.py:SmartVictim", None),
                          (tmp_path / "impatient.py:Impatient", "check.finish_early")):
        spec = RunSpec(Config(num_kvcache_blocks=6, kvcache_block_size=2), workload, scheduler=load(str(file)).kind)
        engine = run(spec)
        if verdict is None:
            referee(trace_of(engine), spec)
            continue
        e = broken(trace_of(engine), spec)
        first_end = frame_where(engine, lambda f: any(r.status == "finished" for r in f.requests))
        assert (e.message.key, e.step) == (verdict, first_end)


def test_on_the_real_model_tokens_are_not_replayed_but_the_frames_are_checked(preemption):
    engine, trace = preemption
    model = copy.deepcopy(trace) | {"runner": "model"}
    model["requests"][2]["output_token_ids"][1] += 1
    referee(checked_trace(json.dumps(model)))  # a token the server cannot replay cheaply
    k = frame_where(engine, lambda f: f.step and f.requests[0].status == "running")
    e = broken(with_view(model, k, 0, num_computed_tokens=engine.frames[k].requests[0].num_tokens))
    assert (e.message.key, e.step) == ("check.computed_moved", k)
