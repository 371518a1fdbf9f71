"""The policy lab under the vLLM twin, one vLLM knob turned at a time (issue 32, point 5): fcfs vs priority queue,
whole vs chunked prefill, prefix caching on vs off, on the `vllm_knobs` preset made for them, and vLLM 0.32 vs 0.33
on `vllm_versions` (a running request that preempts itself under the priority queue). Each pair of runs differs in
that one Config field, their decisions part, and the lab names the parting steps in both languages."""

import re

import pytest

from engine.analysis.compare import compare, variants_for
from engine.analysis.partings import partings
from engine.inputs.scenario import SCENARIOS_DIR, load_scenario
from i18n import join_and, text
from scheduler.factory import SETTINGS
from tests.helpers.app import page_app
from viz.compare_words import comparison_name
from viz.lockstep import parting_sentence, partings_answer

PRESET = load_scenario(SCENARIOS_DIR / "vllm_knobs.toml")
VERSIONS = load_scenario(SCENARIOS_DIR / "vllm_versions.toml")
KNOBS = {"fcfs vs priority": "queue_policy", "whole vs chunked prefill": "chunked_prefill",
         "prefix caching on vs off": "enable_prefix_caching", "vLLM 0.32 vs 0.33": "vllm_version"}
WORKLOADS = {"vLLM 0.32 vs 0.33": VERSIONS}  # the others run on PRESET


def twin_runs(comparison: str, lang: str):
    spec = WORKLOADS.get(comparison, PRESET).spec
    return compare(variants_for(comparison, spec.config, lang, "vllm"), spec.workload, seed=spec.seed, cost=spec.cost)


@pytest.mark.parametrize("comparison", KNOBS)
def test_each_comparison_turns_one_knob_of_the_twin_and_its_decisions_part(comparison):
    runs = twin_runs(comparison, "en")
    assert WORKLOADS.get(comparison, PRESET).spec.scheduler == "vllm"
    assert all(run.engine.spec.scheduler == "vllm" for run in runs)
    differ = {key for key in SETTINGS if runs[0].config.value(key) != runs[1].config.value(key)}
    assert differ == {KNOBS[comparison]}
    assert partings([run.frames for run in runs])


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("comparison", KNOBS)
def test_the_answer_names_every_parting_step_and_tells_the_first(comparison, lang):
    runs = twin_runs(comparison, lang)
    found = partings([run.frames for run in runs])
    answer = partings_answer([(run.label, run.frames) for run in runs], lang=lang)
    assert join_and(lang, [p.step for p in found]) in answer
    first = parting_sentence(found[0], [run.label for run in runs], lang=lang)
    assert first.split(": ", 1)[-1].split("：", 1)[-1].rstrip(".。") in answer



@pytest.mark.parametrize("lang, pool", [("en", "{n} KV blocks"), ("zh", "{n} 个 KV 缓存块")])
def test_the_presets_story_tells_its_pool_and_names_its_comparisons_as_the_lab_does(lang, pool):
    """The stages draw 16 blocks, the story says as many; it quotes each comparison made for it as the lab's list
    names it (or the name's start)."""
    story = PRESET.narrative_in(lang)
    assert pool.format(n=PRESET.spec.config.num_kvcache_blocks) in story
    quoted = [a or b for a, b in re.findall(r'"([^"]+)"|“([^”]+)”', story)]
    for name in (comparison_name(name, lang) for name in KNOBS if name not in WORKLOADS):
        assert any(name.startswith(q) for q in quoted), name

def test_runs_that_never_part_say_so():
    runs = twin_runs("fcfs vs priority", "en")
    assert partings_answer([(run.label, run.frames) for run in runs[:1]] * 2, lang="en") == \
        text("en", "lockstep.answer.never")


def test_the_lab_page_names_where_the_twins_fcfs_and_priority_runs_part():
    at = page_app("policy_lab")
    at.run()
    at.selectbox(key="workload_choice").select("vllm_knobs").run()
    at.selectbox(key="comparison").select("fcfs vs priority").run()
    assert at.selectbox(key="comparison_scheduler_vllm_knobs").value == "vllm"  # the preset's own scheduler
    at.button(key="run").click().run()
    assert not at.exception and not at.error
    steps = join_and("en", [p.step for p in partings([run.frames for run in twin_runs("fcfs vs priority", "en")])])
    assert any("**where the decisions part**: at" in m.value and steps in m.value for m in at.markdown)


@pytest.mark.parametrize("lang, said", [
    ("en", "Step 5: vLLM 0.32 only runs its decode batch (1 request); vLLM 0.33 prefills a chunk of request 2 "
           "(2 tokens)."),
    ("zh", "第 5 步：“vLLM 0.32”只运行了它的解码批次（1 个请求）；“vLLM 0.33”为请求 2（2 个 token）预填充了一段。")])
def test_0_32_and_0_33_part_where_a_running_request_preempts_itself_and_the_lab_says_what_each_did(lang, said):
    """vllm_versions' step 5: 1 preempts itself; 0.32 ends the loop over running requests (the VIP 2 sits out),
    0.33 goes on to 2's last prompt chunk. Step 6 follows from it (0.32 prefills that chunk then)."""
    v032, v033 = twin_runs("vLLM 0.32 vs 0.33", lang)
    assert (v032.config.value("vllm_version"), v033.config.value("vllm_version")) == ("0.32", "0.33")
    assert [r.engine.frames.decided_by.version for r in (v032, v033)] == ["0.32", "0.33"]
    found = partings([v032.frames, v033.frames])
    assert [p.step for p in found] == [5, 6]
    assert parting_sentence(found[0], [v032.label, v033.label], lang=lang) == said
    assert join_and(lang, [5, 6]) in VERSIONS.narrative_in(lang)
    for run in (v032, v033):  # both preempt 1 for itself: the parting is what comes after it
        assert [(e.seq_id, e.for_seq_id) for e in run.frames[5].events_of("preempted")] == [(1, 1)]


def test_the_lab_page_runs_0_32_against_0_33_under_the_twin_and_says_the_article_does_not_read_the_release():
    at = page_app("policy_lab")
    at.run()
    at.selectbox(key="workload_choice").select("vllm_versions").run()
    at.selectbox(key="comparison").select("vLLM 0.32 vs 0.33").run()
    assert at.selectbox(key="comparison_scheduler_vllm_versions").value == "vllm"
    at.button(key="run").click().run()
    assert not at.exception and not at.error
    runs = at.session_state.compare_runs
    assert [r.label for r in runs] == ["vLLM 0.32", "vLLM 0.33"]
    assert any("**where the decisions part**: at 2 steps, 5 and 6" in m.value for m in at.markdown)
    at.selectbox(key="comparison_scheduler_vllm_versions").select("article").run()
    assert any("one run twice" in i.value for i in at.info)
