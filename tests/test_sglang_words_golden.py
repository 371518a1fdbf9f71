"""The SGLang stage says what the twin computed (issue 45): over the workloads recorded from SGLang 0.5.23 (the
golden traces, tests/data/refcheck), each run through the engine as the app runs it, every number the narration
states for NO_TOKEN, the budget and the free and evictable slots is the one the twin captured at that step (its
scheduler view: PrefillAdder's rem_* fields, `available_size()`, `evictable_size()`), never one worked out again."""

from functools import cache

import pytest

from engine.run.engine import Engine
from engine.run.recipe import Request, RunSpec
from tools.refcheck.golden import golden_path, read_golden
from tools.refcheck.sglang import ADAPTER
from tools.refcheck.sglang.twin import engine_config
from viz.narrate import narrate


@cache
def runs() -> list[Engine]:
    """Every recorded workload run through the engine under the SGLang kind (the fake model's tokens)."""
    engines = []
    for trace in read_golden(golden_path("sglang", ADAPTER.releases[-1])).traces:
        workload = trace["workload"]
        requests = [Request(prompt_token_ids=tuple(r["prompt"]), max_tokens=r["max_new_tokens"], arrival=r["arrival"],
                            ignore_eos=r["ignore_eos"], priority=r.get("priority") or 0)
                    for r in workload["requests"]]
        engine = Engine(RunSpec(engine_config(workload["config"]), requests, "fake", seed=workload["seed"],
                                scheduler="sglang", max_steps=300))
        engine.run()
        engines.append(engine)
    return engines


def _steps():
    for engine in runs():
        for k in range(1, len(engine.frames)):
            yield engine.frames[k], engine.frames[k - 1]


def _said(number: float) -> str:
    return f"{round(number, 2):g}"


def test_the_runs_meet_every_kind_of_number():
    events = [e for frame, _ in _steps() for e in frame.events]
    assert sum(e.kind == "blocked" and e.reason == "no_token" and e.needed > 0 for e in events) >= 20
    assert sum(e.kind == "blocked" and e.reason == "no_token" and not e.needed for e in events) >= 20
    assert sum(e.kind == "retracted" for e in events) >= 5 and sum(e.kind == "aborted" for e in events) >= 5


def test_free_and_evictable_slots_are_the_allocators_and_the_trees():
    checked = 0
    for frame, before in _steps():
        view, was = frame.panel("radix_tree"), before.panel("radix_tree")
        line = narrate(frame, before, lang="en")[1]
        assert f"{was['available_size']} empty and {was['evictable_size']} evictable (cached, unlocked) at the start" \
               in line, line
        assert f"{view['available_size']} empty and {view['evictable_size']} evictable after it" in line, line
        checked += 1
    assert checked > 3000


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_no_token_says_prefill_adders_own_numbers_at_the_refusal(lang):
    """A NO_TOKEN ends the pass, so the budget the twin captured at the pass's end is the one that refused: the
    sentence's slots left, reserve and ratio are its rem_total_tokens, reserve and new_token_ratio (a request with
    a cached prefix was judged with that prefix locked, so that many fewer were left at its refusal, and the
    sentence says so)."""
    checked = 0
    for frame, before in _steps():
        budget = frame.panel("radix_tree")["budget"]
        for event in frame.events_of("blocked"):
            if event.reason != "no_token":
                continue
            assert budget is not None
            # judged with its cached prefix locked (not evictable) for the while: so many slots fewer then
            assert event.available + event.locked == pytest.approx(budget["rem_total_tokens"], abs=0.005)
            assert event.reserve == pytest.approx(budget["reserve"], abs=0.005)
            said = "\n".join(narrate(frame, before, lang=lang))
            left, reserve = _said(event.available), _said(budget["reserve"])
            if lang == "en":
                assert (f"and {left} are left (rem_total_tokens" if event.needed else f"({left} slots left") in said
                assert (f"future tokens, {reserve} at" if event.needed else f"future tokens, {reserve} at") in said
            else:
                assert (f"而只剩 {left} 个" if event.needed else f"剩 {left} 个槽位") in said, said
                assert f"预留 {reserve}" in said, said
            assert f"new_token_ratio {budget['new_token_ratio']:g}" in said, said
            if event.locked:
                assert (f"its cached prefix, {event.locked} slot" if lang == "en" else "锁住了它已缓存的前缀") in said
            checked += 1
    assert checked >= 40


def test_the_budget_bar_adds_up():
    """reserve + admitted = total_offset; free + evictable - total_offset = rem_total_tokens, as PrefillAdder has
    them (a priority preemption's released reserve taken off the reserve)."""
    budgets = [frame.panel("radix_tree")["budget"] for frame, _ in _steps() if frame.panel("radix_tree")["budget"]]
    for b in budgets:
        assert b["reserve"] + b["admitted_offset"] == pytest.approx(b["total_offset"], abs=0.02)
        assert b["available_and_evictable"] - b["total_offset"] == pytest.approx(b["rem_total_tokens"], abs=0.02)
    assert len(budgets) > 500
