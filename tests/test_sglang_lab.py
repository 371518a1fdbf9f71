"""The policy lab with the SGLang twin (issue 31, point 5): the sglang_lpm_chat preset under SGLang's policies side
by side, and under the three schedulers, whose lockstep parts where the preset's story says, in both languages."""

import pytest

from engine.analysis.compare import OWN_SCHEDULERS, compare, variants_for
from engine.analysis.partings import partings
from engine.inputs.scenario import SCENARIOS_DIR, load_scenario
from i18n import join_and, text
from scheduler.factory import SCHEDULER_KINDS
from viz.compare_words import verdicts
from viz.lockstep import parting_sentence

LPM = load_scenario(SCENARIOS_DIR / "sglang_lpm_chat.toml")
THREE = "article vs vllm vs sglang"
POLICIES = "lpm vs dfs-weight vs fcfs vs lof (SGLang)"


def runs_of(comparison: str, lang: str, scheduler: str = "sglang"):
    spec = LPM.spec
    return compare(variants_for(comparison, spec.config, lang, scheduler), spec.workload, seed=spec.seed,
                   cost=spec.cost)


def test_a_comparison_of_every_scheduler_and_one_of_each_pair():
    assert THREE in OWN_SCHEDULERS and " vs ".join(SCHEDULER_KINDS) in OWN_SCHEDULERS
    assert {name for name in OWN_SCHEDULERS if name.count(" vs ") == 1} == {
        "article vs vllm", "article vs sglang", "vllm vs sglang", "article vs vllm_v0", "vllm vs vllm_v0",
        "sglang vs vllm_v0"}
    assert [v.scheduler for v in variants_for(THREE, LPM.spec.config, "en", "vllm")] == ["article", "vllm", "sglang"]


@pytest.mark.parametrize("lang, said", [
    ("en", "Step 3: the article's scheduler admits requests 1 (14 tokens), 2 (14 tokens) and 3 (2 tokens); the vLLM "
           "twin admits requests 1 (14 tokens) and 2 (14 tokens); the SGLang twin admits requests 3 (2 tokens) and 4 "
           "(2 tokens)."),
    ("zh", None)])
def test_the_three_schedulers_part_where_the_story_says(lang, said):
    runs = runs_of(THREE, lang)
    assert [r.engine.spec.scheduler for r in runs] == ["article", "vllm", "sglang"]
    found = partings([r.frames for r in runs])
    assert [p.step for p in found] == [3, 4, 6]
    assert join_and(lang, [3, 4, 6]) in LPM.narrative_in(lang)
    sentence = parting_sentence(found[0], [r.label for r in runs], lang=lang)
    if said:
        assert sentence == said
    assert all(label in sentence for label in (r.label for r in runs))


def test_sglangs_policies_side_by_side_turn_schedule_policy_alone_and_lpm_parts_from_fcfs_at_step_3():
    runs = runs_of(POLICIES, "en")
    assert [r.config.value("schedule_policy") for r in runs] == ["lpm", "dfs-weight", "fcfs", "lof"]
    assert [r.label for r in runs] == [f"schedule_policy {p}" for p in ("lpm", "dfs-weight", "fcfs", "lof")]
    lpm, fcfs = runs[0], runs[2]
    assert [p.step for p in partings([lpm.frames, fcfs.frames])][0] == 3
    assert lpm.frames[3].batch.seq_ids == (3, 4) and fcfs.frames[3].batch.seq_ids == (1, 2)


def test_the_evicted_prefix_would_have_been_hit_on_a_larger_pool():
    """sglang_evicted_prefix: at step 8 request 3 misses system prompt A, evicted at step 5; on a pool that never
    runs short, the tree keeps A and 3 matches its 10 tokens (admitted a step sooner there)."""
    from dataclasses import replace

    from engine.run.engine import Engine

    preset = load_scenario(SCENARIOS_DIR / "sglang_evicted_prefix.toml")
    small = preset.engine()
    large = Engine(replace(preset.spec, config=replace(preset.spec.config, num_kvcache_blocks=64)))
    small.run(), large.run()
    hits = [[(e.seq_id, e.num_tokens) for f in engine.frames for e in f.events_of("prefix_hit")]
            for engine in (small, large)]
    assert hits == [[], [(3, 10)]]
    assert not any(frame.events_of("evicted") for frame in large.frames)


@pytest.mark.parametrize("lang, sep", [("en", "; "), ("zh", "；")])
def test_the_finish_step_answer_of_three_runs_keeps_one_clause_per_run_apart(lang, sep):
    runs = runs_of(THREE, lang)
    answer = dict(verdicts(runs, lang))[text(lang, "compare.question.each_request")]
    third = runs[2].label
    opening = text(lang, "compare.finish.moved", run=third, base=runs[0].label, requests="", sooner=0, later=0,
                   same=0, more="").split(third)[0]
    assert sep + opening + third in answer
