"""What a vLLM learner looks for beside the twin's stage (issue 32, point 4): the free block queue head to tail with
its cached blocks and evictions (an event, narrated), the step as vLLM's SchedulerOutput lists it, each request's
num_computed_tokens / num_tokens / num_cached_tokens, and vLLM's log line; all recorded from the twin right after
schedule() (scheduler/output.py), carried by traces, drawn by the player from what the server sent
(viz/scheduler_output_view.py)."""

import json
import re
from dataclasses import replace

import pytest

from engine.inputs.scenario import SCENARIOS_DIR, load_scenario
from engine.run.engine import Engine
from engine.run.recipe import Request, RunSpec
from engine.traces.schema import TraceError, checked_trace
from engine.traces.trace import trace_dict
from scheduler import Config, Sequence, make_scheduler
from scheduler.contract import UnitState
from scheduler.events import Evicted
from scheduler.factory import scheduler_info
from scheduler.output import OUTPUT_PANEL
from session.lab import open_trace
from viz.frame_payload import stage_view
from viz.narrate import narrate
from viz.scheduler_output_view import (
    QUEUE_ENDS,
    counter_rows,
    counters_line,
    free_queue,
    kind_words,
    log_line,
    output_lines,
    scheduler_output,
    scheduler_output_view,
)

LOG = re.compile(r"Engine 000: Avg prompt throughput: [\d.]+ tokens/s, Avg generation throughput: [\d.]+ tokens/s, "
                 r"Running: (\d+) reqs, Waiting: (\d+) reqs, GPU KV cache usage: ([\d.]+)%, "
                 r"Prefix cache hit rate: ([\d.]+)%")


def run(name: str, scheduler: str | None = None) -> Engine:
    spec = load_scenario(SCENARIOS_DIR / f"{name}.toml").spec
    engine = Engine(spec if scheduler is None else replace(spec, scheduler=scheduler))
    engine.run()
    return engine


@pytest.fixture(scope="module")
def resumed():
    return run("vllm_resume_cached")


def test_step_11_evicts_cached_block_5_and_says_so(resumed):
    frame = resumed.frames[11]
    assert frame.events_of("evicted") == [Evicted(1, (5,))]
    assert [e.seq_id for f in resumed.frames for e in f.events_of("evicted")] == [1]  # the run's only eviction
    en, zh = narrate(frame, resumed.frames[10], lang="en"), narrate(frame, resumed.frames[10], lang="zh")
    assert "Taking a block for request 1 evicted block 5 from the prefix cache" in " ".join(en)
    assert "块 5 被逐出前缀缓存" in " ".join(zh)
    view = scheduler_output_view(frame, resumed.frames[10], "zh")
    assert view["evicted"] == [[5, 1]] and view["evicted_text"] == "本步逐出：块 5（为请求 1 取走）。"


def test_the_free_queue_is_the_twins_own_head_to_tail_with_cached_blocks_marked(resumed):
    """The view's queue is what the twin's pool holds after each step (a second twin run, stepped by hand)."""
    spec = load_scenario(SCENARIOS_DIR / "vllm_resume_cached.toml").spec
    assert [free_queue(resumed.frames[k]) for k in (6, 9, 11)] == [[[4, 1], [3, 1]], [[5, 1], [2, 1], [1, 1]],
                                                                   [[2, 1], [1, 1]]]
    engine = Engine(spec)
    for k in range(1, len(resumed.frames)):
        engine.step()
        kv = engine.scheduler.pool
        assert [b for b, _ in free_queue(resumed.frames[k])] == list(kv.free_order())
        assert [b for b, cached in free_queue(resumed.frames[k]) if cached] == \
            [b for b in kv.free_order() if kv.state(b) is UnitState.CACHED]


def test_a_long_free_queue_shows_its_head_and_its_tail():
    config = Config(max_num_seqs=2, max_num_batched_tokens=16, max_model_len=16, num_kvcache_blocks=64,
                    kvcache_block_size=4)
    engine = Engine(RunSpec(config, [Request(prompt_token_ids=(1, 2, 3, 4, 5), max_tokens=2)], scheduler="vllm"))
    engine.run()
    frame = engine.frames[1]
    queue = free_queue(frame)
    assert len(frame.free_block_ids) > 2 * QUEUE_ENDS and queue[QUEUE_ENDS] is None
    assert [e[0] for e in queue[:QUEUE_ENDS]] == list(frame.free_block_ids[:QUEUE_ENDS])
    assert [e[0] for e in queue[-QUEUE_ENDS:]] == list(frame.free_block_ids[-QUEUE_ENDS:])


def test_the_scheduler_output_lists_new_resumed_running_preempted_and_finished_requests(resumed):
    first, preempting, resuming = (scheduler_output(resumed.frames[k]) for k in (1, 6, 9))
    assert first.new_req_ids == (0, 1) and first.new_block_ids == ((0, (1, 2)), (1, (3, 4)))
    assert preempting.running_req_ids == (0,) and preempting.preempted_req_ids == (1,)
    assert preempting.new_block_ids == ((0, (6,)),)
    assert resuming.resumed_req_ids == (1,) and resuming.finished_req_ids == (0,)
    assert resuming.new_block_ids == ((1, (3, 4, 6)),)
    lines = dict(output_lines(resumed.frames[9]))
    assert lines["scheduled_cached_reqs"] == ("CachedRequestData(req_ids=[1], resumed_req_ids={1}, "
                                              "new_block_ids=[[3, 4, 6]], num_computed_tokens=[8])")
    assert lines["num_scheduled_tokens"] == "{1: 3}" and lines["finished_req_ids"] == "{0}"
    assert lines["preempted_req_ids"] == "set()"
    assert dict(output_lines(resumed.frames[6]))["preempted_req_ids"] == "{1}"


def test_each_request_counts_its_tokens_as_vllm_does_after_schedule(resumed):
    # at step 6, 0 has 12 tokens computed and decodes one: vLLM's num_computed_tokens already holds it
    assert counter_rows(resumed.frames[6]) == [[0, 13, 13, 0, 1], [1, 0, 11, 0, None]]
    assert counter_rows(resumed.frames[9]) == [[1, 11, 11, 0, 3]]  # 8 found in the cache: num_cached_tokens stays 0
    versus = run("vllm_vs_article")
    assert [2, 0, 10, -1, None] in counter_rows(versus.frames[3])  # waiting, never scheduled: -1


def test_the_log_line_is_vllms_with_this_steps_queues_pool_and_hit_rate():
    knobs = run("vllm_knobs")
    frame = knobs.frames[1]  # 1 finds 16 of its 20 tokens: 16 of the 40 looked up
    running, waiting, usage, rate = LOG.fullmatch(log_line(frame, knobs.frames[0], "en")).groups()
    assert (int(running), int(waiting)) == (frame.metrics.num_running, frame.metrics.num_waiting)
    assert float(usage) == round(100 * (1 - frame.metrics.num_free_blocks / 16), 1)
    assert float(rate) == 40.0
    assert scheduler_output_view(frame, knobs.frames[0], "en")["counters"] == (
        "vllm:num_preemptions_total 0 · vllm:prefix_cache_queries_total 40 · vllm:prefix_cache_hits_total 16")


def test_the_log_line_and_counters_are_the_words_the_kind_declares_on_its_panel(resumed):
    """The twin's own words on the panel come through its declaration (`PanelKind.words`); a frame whose scheduler is
    not known (no declaration to read) gets neither line, never another kind's."""
    frame, before = resumed.frames[6], resumed.frames[5]
    declared = next(p for p in scheduler_info("vllm").panels if p.id == OUTPUT_PANEL.id)
    assert kind_words(frame) == dict(declared.words) and set(kind_words(frame)) == {"log_line", "counters"}
    assert counters_line(frame, "zh") == counters_line(frame, "en") != ""  # as vLLM prints it, in either language
    unknown = replace(frame, decided_by=None)
    assert kind_words(unknown) == {} and log_line(unknown, before, "en") == counters_line(unknown, "en") == ""
    assert scheduler_output_view(unknown, before, "en")["output"] == output_lines(frame)


@pytest.mark.parametrize("lang, every_step", [("en", "once at every step vLLM tries to admit one"),
                                              ("zh", "vLLM 每一步尝试接纳它时都查找一次")])
def test_a_preempted_requests_lookups_count_once_per_step_tried_and_the_view_says_so(resumed, lang, every_step):
    """1, preempted at step 6, is looked up at steps 7 and 8 (its blocks found, too few free) and 9 (admitted):
    24 of 33 tokens, three lookups of its 11, where the narration tells one prefix hit."""
    said = [scheduler_output_view(resumed.frames[k], resumed.frames[k - 1], lang)["preempted_text"]
            for k in (6, 7, 8, 9, 11)]
    outputs = (scheduler_output(resumed.frames[k]) for k in (7, 8, 9))
    tokens = [(out.preempted_hits, out.preempted_queries) for out in outputs]
    assert not said[0] and tokens == [(8, 11), (16, 22), (24, 33)]
    assert [e.seq_id for k in (7, 8, 9) for e in resumed.frames[k].events_of("prefix_hit")] == [1]
    assert every_step in said[1] and said[3] == said[4]

def test_the_record_is_taken_right_after_schedule_and_a_direct_scheduler_offers_it():
    config = Config(max_num_seqs=2, max_num_batched_tokens=16, max_model_len=16, num_kvcache_blocks=4,
                    kvcache_block_size=4)
    twin, article = make_scheduler("vllm", config), make_scheduler("article", config)
    for sched in (twin, article):
        sched.add(Sequence(list(range(1, 6)), seq_id=0))
    twin.schedule(), article.schedule()
    assert article.panels() == {}
    output = twin.panels()[OUTPUT_PANEL.id]
    assert output.new_req_ids == (0,) and output.requests[0].num_computed_tokens == 5  # 0 + the 5 scheduled


def test_the_article_scheduler_records_none_and_its_traces_keep_their_shape():
    engine = run("vllm_resume_cached", "article")
    assert all(f.panels == {} for f in engine.frames)
    assert all(stage_view(f, lang="en")["panels"] == [] for f in engine.frames)
    assert not any("panels" in frame for frame in trace_dict(engine)["frames"])


def test_a_twin_trace_carries_its_record_and_a_bad_one_is_refused(resumed):
    data = trace_dict(resumed)
    lab = open_trace(json.dumps(data).encode())
    assert [scheduler_output(f) for f in lab.frames] == [scheduler_output(f) for f in resumed.frames]
    data["frames"][9]["panels"][OUTPUT_PANEL.id]["requests"] = [[1, 11]]
    with pytest.raises(TraceError) as refused:
        checked_trace(json.dumps(data))
    assert f"frames[9].panels.{OUTPUT_PANEL.id}.requests[0]" in str(refused.value)
