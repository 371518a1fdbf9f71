"""The preset where the victim exercise's solution beats the article's tail preemption
(scenarios/smart_victim_long_prompt.toml): both run on the fake model, measured by engine/analysis, and the figures
its narrative states in both languages are the measured ones."""

import pytest

from engine.analysis.compare import Variant, metric_values, preset_variants, run_variant
from engine.inputs.scenario import SCENARIOS_DIR, load_scenario
from engine.learner import load
from starters import BY_ID, source
from tests.helpers.learner_files import written

pytestmark = pytest.mark.usefixtures("kinds_restored")  # each test's kinds loaded from files leave no trace

PRESET = SCENARIOS_DIR / "smart_victim_long_prompt.toml"
MEASURES = ("recomputed tokens", "end-to-end latency mean steps")


def measured(scenario, variant: Variant) -> tuple:
    run = run_variant(variant, scenario.spec.workload, "fake", scenario.spec.seed)
    assert run.stop_reason == "finished"
    values = metric_values(run)
    return tuple(values[m] for m in MEASURES)


def test_the_smart_victim_recomputes_half_as_much_and_finishes_sooner_on_average_than_the_tail():
    scenario = load_scenario(PRESET, runner="fake")
    solution, _ = BY_ID["victim"].solution
    smart = load(f"{solution}:SmartVictim").kind
    tail_run, smart_run = (measured(scenario, Variant(kind, scenario.spec.config, scheduler=kind))
                           for kind in ("article", smart))
    assert tail_run == (149, 54.0) and smart_run == (76, 40.5)
    # the built-in smart policy (the preset's variant, the lab's "preset vs its variant") measures the same
    tail_variant, smart_variant = (measured(scenario, v) for v in preset_variants(scenario, ["tail", "smart"]))
    assert (tail_variant, smart_variant) == (tail_run, smart_run)
    for lang in ("en", "zh"):
        told = scenario.narrative_in(lang)
        assert all(f"{figure:g}" in told for figure in (*tail_run, *smart_run)), lang


def test_the_victim_starter_as_it_is_measures_as_the_tail(tmp_path):
    scenario = load_scenario(PRESET, runner="fake")
    kind = load(written(BY_ID["victim"], tmp_path)).kind
    assert measured(scenario, Variant(kind, scenario.spec.config, scheduler=kind)) == (149, 54.0)
    assert "as it is, it recomputes 149 tokens" in source(BY_ID["victim"])  # what its task says


def test_the_stage_tells_whose_choice_a_victim_was():
    """The narration names the chooser of a victim: the tail policy for the article, the kind of one's own whose
    choose_victim chose it."""
    scenario = load_scenario(PRESET, runner="fake")
    solution, _ = BY_ID["victim"].solution
    smart = load(f"{solution}:SmartVictim").kind
    for kind, chooser in (("article", "tail"), (smart, smart)):
        run = run_variant(Variant(kind, scenario.spec.config, scheduler=kind), scenario.spec.workload, "fake")
        assert {e.policy for f in run.frames for e in f.events_of("preempted")} == {chooser}
