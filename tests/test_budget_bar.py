"""The stage's token budget bar (viz/budget.py): its segments are the step's batch as each scheduler decided it
(prefill chunks, decodes, speculative lookahead), they add up to the tokens the step scheduled, the requests the
budget held back are named, and its words are in both languages."""

import json
from dataclasses import replace

import pytest

from engine.run.engine import Engine
from engine.run.frame import Frame
from engine.run.recipe import Request, RunSpec
from engine.traces.schema import TraceError, checked_trace
from engine.traces.trace import trace_dict
from scheduler import Config
from tests.helpers.engines import preemption_engine
from viz.budget import DECODE, PHASES, PREFILL, RECOMPUTE, SEGMENT_FIELDS, UNKNOWN, budget_held, budget_segments
from viz.frame_payload import encode, player_strings, stage_view
from viz.glossary import legend

# A short request decoding, a 1,000-token prompt prefilled in chunks beside it (each output token of the fake
# model, drawn from 0..999, is found in that prompt, so its decodes always carry n-gram drafts), and a third
# request that arrives while the chunks spend the budget.
CONFIG = Config(max_num_seqs=4, max_num_batched_tokens=256, max_model_len=1100, num_kvcache_blocks=96,
                kvcache_block_size=16, chunked_prefill=True, mixed_batches=True, num_speculative_tokens=3,
                enable_prefix_caching=False)
WORKLOAD = (Request(prompt_token_ids=tuple(range(1, 9)), max_tokens=12, ignore_eos=True),
            Request(prompt_token_ids=tuple(range(1000)), max_tokens=6, ignore_eos=True, arrival=1),
            Request(prompt_token_ids=tuple(range(5, 25)), max_tokens=3, ignore_eos=True, arrival=2))


def _run(scheduler: str) -> list[Frame]:
    engine = Engine(RunSpec(CONFIG, WORKLOAD, scheduler=scheduler))
    engine.run()
    return list(engine.frames)


def _named(segment: list) -> dict:
    return dict(zip(SEGMENT_FIELDS, segment + [0] * (len(SEGMENT_FIELDS) - len(segment)), strict=True))


@pytest.mark.parametrize("scheduler", ["article", "vllm"])
def test_segments_are_the_steps_batch_as_the_scheduler_decided_it(scheduler):
    frames = _run(scheduler)
    seen = set()
    for before, frame in zip(frames, frames[1:], strict=False):
        segments = [_named(s) for s in budget_segments(frame)]
        assert [s["request"] for s in segments] == list(frame.batch.seq_ids)
        assert sum(s["tokens"] for s in segments) == frame.batch.total_tokens == frame.metrics.num_batched_tokens
        assert frame.batch.total_tokens <= frame.config.max_num_batched_tokens
        speculated = {e.seq_id: e for e in frame.events_of("speculated")}
        for s in segments:
            request, was = frame.requests[s["request"]], before.requests[s["request"]]
            if s["phase"] == PREFILL:  # the chunk's tokens, where it ends, of how many the prompt has
                assert (s["of"], s["drafts"]) == (request.num_prompt_tokens, 0)
                assert s["computed"] == was.num_computed_tokens + s["tokens"] == request.num_computed_tokens
                assert request.num_output_tokens == (s["computed"] == s["of"])  # its first token with its last chunk
                seen.add("chunk" if s["computed"] < s["of"] else "last chunk")
            else:  # one token, and the drafts the model checked with it
                assert s["phase"] == DECODE and s["tokens"] == 1 + s["drafts"]
                drafts = speculated.get(s["request"])
                assert s["drafts"] == (len(drafts.draft_token_ids) if drafts else 0)
                assert s["accepted"] == (drafts.num_accepted if drafts else 0)
                seen.add("lookahead" if s["drafts"] else "decode")
        if {_named(s)["phase"] for s in budget_segments(frame)} == {DECODE, PREFILL}:
            seen.add("mixed")
    assert seen == {"chunk", "last chunk", "decode", "lookahead", "mixed"}


@pytest.mark.parametrize("scheduler", ["article", "vllm"])
def test_the_bar_names_who_the_spent_budget_held_back(scheduler):
    frames = _run(scheduler)
    held = {f.step: budget_held(f) for f in frames if budget_held(f)}
    assert held == {3: [[2, 20, 0]], 4: [[2, 20, 0]]}  # request 2's 20 tokens, none left after the chunk
    assert all(e.reason == "token_budget" for f in frames if f.step in held for e in f.events_of("blocked"))
    assert frames[5].batch.seq_ids[-1] == 2  # admitted once the last chunk left room


def test_a_preempted_request_recomputes_its_prompt_and_output():
    recomputes = [_named(s) for f in preemption_engine().frames for s in budget_segments(f)
                  if _named(s)["phase"] == RECOMPUTE]
    assert recomputes and all(s["of"] > 10 and s["computed"] == s["of"] for s in recomputes)  # 10-token prompts


@pytest.mark.parametrize("scheduler", ["article", "vllm"])
def test_running_requests_the_spent_budget_left_out_are_named(scheduler):
    """Three requests decoding with three drafts each under an 8-token budget: the third sits the step out."""
    config = replace(CONFIG, max_num_seqs=3, max_num_batched_tokens=8, num_kvcache_blocks=200,
                     enable_prefix_caching=True)
    workload = [Request(prompt_token_ids=(*range(1000), i), max_tokens=6, ignore_eos=True) for i in range(3)]
    engine = Engine(RunSpec(config, workload, scheduler=scheduler))
    engine.run()
    frame = next(f for f in engine.frames if len(f.running) == 3 and len(f.batch.seq_ids) == 2)
    assert sum(_named(s)["drafts"] for s in budget_segments(frame)) == 6 and frame.batch.total_tokens == 8
    assert budget_held(frame) == [[2]]
    assert stage_view(frame, lang="en")["sat_out"] == [[2, "token budget used, max_num_batched_tokens=8"]]


def test_a_trace_keeps_the_batch_details_and_an_older_trace_still_draws_a_bar():
    engine = Engine(RunSpec(CONFIG, WORKLOAD))
    engine.run()
    frame = engine.frames[6]
    data = json.loads(json.dumps(frame.to_dict()))
    assert Frame.from_dict(data).batch == frame.batch
    del data["batch"]["num_computed"], data["batch"]["num_drafts"]  # as traces were written before the bar
    older = Frame.from_dict(data)
    assert budget_segments(older) == [[rid, n, UNKNOWN] for rid, n in zip(frame.batch.seq_ids, frame.batch.num_tokens,
                                                                          strict=True)]
    trace = trace_dict(engine)
    trace["frames"][3]["batch"]["num_computed"] = [0]
    with pytest.raises(TraceError) as refused:
        checked_trace(json.dumps(trace))
    assert "frames[3].batch.num_computed" in str(refused.value.message)


def test_the_budget_held_back_travels_only_when_there_is_some():
    frames = _run("vllm")
    views = [stage_view(f, lang="en") for f in frames]
    deltas = [encode(before, view) for before, view in zip(views, views[1:], strict=False)]
    assert [d["budget_held"] for d in deltas if "budget_held" in d] == [[[2, 20, 0]], [[2, 20, 0]]]
    assert all(view["batch"] == budget_segments(frame) for frame, view in zip(frames, views, strict=True))


def test_the_bars_words_are_in_both_languages():
    en, zh = player_strings("en"), player_strings("zh")
    keys = [k for k in en if k.startswith("budget_")]
    assert {f"budget_tip_{phase}" for phase in PHASES} | {"budget_tip_lookahead", "budget_tip_free"} <= set(keys)
    for key in keys:
        assert en[key] != zh[key] and any("\u4e00" <= ch <= "\u9fff" for ch in zh[key]), key
    assert en["budget_sum"].format(used=412, budget=512, pct=80) == "412 of 512 tokens (80%)"
    assert zh["budget_sum"].format(used=412, budget=512, pct=80) == "512 个 token 中用了 412 个（80%）"
    assert [e.shown for e in legend("en")].count("token budget bar") == 1
    assert "token 预算条" in [e.shown for e in legend("zh")]
