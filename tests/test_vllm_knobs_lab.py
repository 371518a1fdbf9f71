"""The policy lab under the vLLM twin, one vLLM knob turned at a time (issue 32, point 5): fcfs vs priority queue,
whole vs chunked prefill, prefix caching on vs off, on the `vllm_knobs` preset made for them. Each pair of runs
differs in that one Config field, their decisions part, and the lab names the parting steps in both languages."""

from dataclasses import fields
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from engine.analysis.compare import compare, variants_for
from engine.analysis.partings import partings
from engine.inputs.scenario import SCENARIOS_DIR, load_scenario
from i18n import join_and, text
from viz.lockstep import parting_sentence, partings_answer

PAGE = str(Path(__file__).resolve().parents[1] / "app_pages" / "policy_lab.py")
KNOBS = {"fcfs vs priority": "queue_policy", "whole vs chunked prefill": "chunked_prefill",
         "prefix caching on vs off": "enable_prefix_caching"}
PRESET = load_scenario(SCENARIOS_DIR / "vllm_knobs.toml")


def twin_runs(comparison: str, lang: str):
    spec = PRESET.spec
    return compare(variants_for(comparison, spec.config, lang, "vllm"), spec.workload, seed=spec.seed, cost=spec.cost)


@pytest.mark.parametrize("comparison", KNOBS)
def test_each_comparison_turns_one_knob_of_the_twin_and_its_decisions_part(comparison):
    runs = twin_runs(comparison, "en")
    assert PRESET.spec.scheduler == "vllm" and all(run.engine.spec.scheduler == "vllm" for run in runs)
    differ = {f.name for f in fields(runs[0].config) if getattr(runs[0].config, f.name) != getattr(runs[1].config,
                                                                                                    f.name)}
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


def test_runs_that_never_part_say_so():
    runs = twin_runs("fcfs vs priority", "en")
    assert partings_answer([(run.label, run.frames) for run in runs[:1]] * 2, lang="en") == \
        text("en", "lockstep.answer.never")


def test_the_lab_page_names_where_the_twins_fcfs_and_priority_runs_part():
    at = AppTest.from_file(PAGE, default_timeout=60)
    at.run()
    at.selectbox(key="workload_choice").select("vllm_knobs").run()
    at.selectbox(key="comparison").select("fcfs vs priority").run()
    assert at.selectbox(key="comparison_scheduler_vllm_knobs").value == "vllm"  # the preset's own scheduler
    at.button(key="run").click().run()
    assert not at.exception and not at.error
    steps = join_and("en", [p.step for p in partings([run.frames for run in twin_runs("fcfs vs priority", "en")])])
    assert any("**where the decisions part**: at" in m.value and steps in m.value for m in at.markdown)
