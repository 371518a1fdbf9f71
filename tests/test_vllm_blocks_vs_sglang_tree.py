"""vllm_blocks_vs_sglang_tree (issue 31, point 5): the same prefixes under the vLLM twin's hashed blocks and, in the
preset's variant, under the SGLang twin's radix tree; the variant names its scheduler, the lab compares the preset
with its variant in lockstep, and links and lead recipes reopen the variant under the SGLang twin."""


import pytest

from engine.analysis.compare import compare, preset_variants
from engine.analysis.partings import partings
from engine.inputs.scenario import SCENARIOS_DIR, ScenarioError, load_scenario, preset_paths
from i18n import join_and, text
from session.lab import Lab, RunInputs
from session.lead_recipe import LeadRecipes
from session.links import link_of, open_link, parse_link
from session.run_cache import RunCache
from tests.helpers.app import fake_model_app, page_app, player_message
from tests.helpers.engines import GOOD
from viz.glossary import variant_label

PRESET = load_scenario(SCENARIOS_DIR / "vllm_blocks_vs_sglang_tree.toml")


def hits(engine) -> list[tuple[int, int]]:
    """(request, prefix tokens taken from the cache) of every admission with a hit."""
    engine.run()
    return [(e.seq_id, e.num_tokens) for k in range(len(engine.frames))
            for e in engine.frames[k].events_of("prefix_hit")]


def test_the_variant_is_the_same_workload_under_the_sglang_twin_one_slot_a_token_and_as_many_slots():
    base, variant = PRESET.spec_for(), PRESET.spec_for(variant=True)
    assert (base.scheduler, variant.scheduler) == ("vllm", "sglang")
    assert (base.config.kvcache_block_size, variant.config.kvcache_block_size) == (4, 1)
    assert base.config.kv_capacity_tokens == variant.config.kv_capacity_tokens == 48
    assert base.workload == variant.workload
    assert hits(PRESET.engine()) == [(1, 8), (2, 8)]  # whole blocks of 4, at most 11 of 2's 12 tokens
    assert hits(PRESET.engine(variant=True)) == [(1, 10), (2, 11)]  # token by token


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_lab_compares_the_preset_with_its_variant_and_the_story_names_where_they_part(lang):
    runs = compare(preset_variants(PRESET, ("a", "b")), PRESET.spec.workload, seed=PRESET.spec.seed,
                   cost=PRESET.spec.cost)
    assert [r.engine.spec.scheduler for r in runs] == ["vllm", "sglang"]
    assert [p.step for p in partings([r.frames for r in runs])] == [4, 7]
    assert join_and(lang, [4, 7]) in PRESET.narrative_in(lang)
    assert text(lang, "sglang.run_name") in variant_label(PRESET.variant, lang)


def test_the_lab_page_offers_the_presets_own_comparison_first_and_runs_both_schedulers_in_lockstep():
    at = page_app("policy_lab")
    at.query_params["lang"] = "zh"
    at.run()
    at.selectbox(key="workload_choice").select("vllm_blocks_vs_sglang_tree").run()
    assert at.selectbox(key="comparison").value == "variant"
    at.button(key="run").click().run()
    assert not at.exception and not at.error
    runs = at.session_state.compare_runs
    assert [r.engine.spec.scheduler for r in runs] == ["vllm", "sglang"]
    assert [r.label for r in runs] == ["预设", "变体：" + variant_label(PRESET.variant, "zh")]
    at.selectbox(key="workload_choice").select("02_preemption").run()  # no variant: not offered
    assert "variant" not in at.selectbox(key="comparison").options


def test_a_link_to_the_variant_reopens_it_under_the_sglang_twin_without_naming_it_again():
    scenarios = {path.stem: load_scenario(path) for path in preset_paths()}
    lab = Lab(RunInputs.from_scenario(PRESET, "fake", variant=True), cache=RunCache(2**30))
    lab.run(7)
    assert lab.scheduler == "sglang" and lab.key_frames and all(k.variant for k in lab.key_frames)
    params = link_of(lab, scenarios, lang="en").params()
    assert params == {"scenario": "vllm_blocks_vs_sglang_tree", "variant": "1", "frame": "7"}
    link = parse_link(params, scenarios)
    reopened = open_link(link, scenarios, "fake")
    reopened.run(link.frame)
    assert reopened.scheduler == "sglang" and reopened.frames[7].panel("radix_tree")["split"]
    assert all(k.holds(reopened.frames) for k in reopened.key_frames)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_variant_opened_by_a_link_is_not_told_as_run_by_another_scheduler(monkeypatch, lang):
    """The variant names the SGLang twin itself: the title and the story do not say that another scheduler than the
    preset's decides the run (as they do when the sidebar's Scheduler overrides it)."""
    at = fake_model_app(monkeypatch)
    at.query_params.update(scenario="vllm_blocks_vs_sglang_tree", variant="1", frame="4", lang=lang)
    at.run()
    assert player_message(at)["title"] == text(lang, "run.variant", title=PRESET.title_in(lang),
                                                changes=variant_label(PRESET.variant, lang))
    story = next(m.value for m in at.sidebar.markdown if PRESET.narrative_in(lang).strip()[:30] in m.value)
    assert story.strip().startswith(PRESET.narrative_in(lang).strip()[:30]), story[:120]


def test_a_lead_recipe_of_the_variant_builds_it_under_the_sglang_twin_on_another_process():
    lab = Lab(RunInputs.from_scenario(PRESET, "fake", variant=True), cache=RunCache(2**30))
    recipes = LeadRecipes(RunCache(2**30))  # the other process's cache
    run, inputs = recipes.run(recipes.of(lab.shared_run, lab.inputs))
    assert run.spec.scheduler == inputs.spec.scheduler == "sglang"
    assert inputs.key_frames == lab.key_frames


def test_a_variant_naming_no_scheduler_is_refused_with_its_key(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text(GOOD + '[variant]\nscheduler = "tgi"\n')
    with pytest.raises(ScenarioError) as error:
        load_scenario(path)
    assert error.value.key == "variant.scheduler" and "use one of article, vllm, sglang" in str(error.value)
