"""Shareable links (session/links.py): a run becomes a query string that reopens the same run at the same frame;
every value a link cannot use is refused with a message that names it."""

import pytest

from engine.inputs.scenario import load_scenario, preset_paths
from engine.run.adaptive import AdaptiveBatch
from scheduler import Config
from session.lab import CustomSetup, Lab, RunInputs
from session.link_changes import pack
from session.links import Link, LinkError, link_of, open_link, parse_link, parse_link_or_fallback, replay
from session.run_cache import RunCache

SCENARIOS = {path.stem: load_scenario(path) for path in preset_paths()}


def reopened(params: dict) -> Lab:
    link = parse_link(params, SCENARIOS)
    lab = open_link(link, SCENARIOS, "fake")
    assert replay(lab, link, lambda at, frame: at.run(frame - at.cursor)) is None
    return lab


def shown(lab: Lab, last: int | None = None) -> list[tuple]:
    """What frames 0..last show (wall times left out: they are measured)."""
    frames = (lab.frames[k] for k in range(lab.last + 1 if last is None else last + 1))
    return [(f.config, f.batch, f.waiting, f.running, f.blocks, f.sim_time_s,
             [(r.id, r.status, r.num_tokens, r.block_table) for r in f.requests]) for f in frames]


def test_a_custom_setup_round_trips_through_its_link():
    params = {"scenario": "custom", "requests": "5", "prompts": "chat", "max_tokens": "6", "arrivals": "poisson",
              "seed": "3", "temperature": "0.5", "max_num_seqs": "2", "num_kvcache_blocks": "12",
              "prefill_first": "0", "overlap": "1", "adaptive": "40-150-1-3", "frame": "7", "present": "1"}
    lab = reopened(params)
    assert lab.inputs.custom == CustomSetup(5, "chat", 6, "poisson") and lab.inputs.spec.seed == 3
    assert {r.temperature for r in lab.inputs.spec.workload} == {0.5} and len(lab.inputs.spec.workload) == 5
    config, options = lab.config_in_effect(0), lab.options_in_effect(0)
    assert (config.max_num_seqs, config.num_kvcache_blocks, config.value("prefill_first")) == (2, 12, False)
    assert options.overlap and options.adaptive == AdaptiveBatch(0.04, 0.15, 1, 1, 3)
    assert lab.cursor == 7
    assert link_of(lab, SCENARIOS, present=True, lang="en").params() == params


def test_the_custom_form_and_its_link_make_the_same_run():
    """A custom run started from a preset keeps the preset's settings: the link carries them."""
    preset = SCENARIOS["02_preemption"]
    setup = CustomSetup(requests=4, max_tokens=5)
    lab = Lab(RunInputs.from_custom(setup, preset.spec.config, "fake", seed=9))
    lab.run(6)
    params = link_of(lab, SCENARIOS, lang="en").params()
    assert params["num_kvcache_blocks"] == str(preset.spec.config.num_kvcache_blocks) and params["seed"] == "9"
    again = reopened(params)
    assert "eos" not in params and again.inputs == lab.inputs and shown(again) == shown(lab)


def test_a_preset_link_carries_frame_0_settings_as_parameters_and_later_changes_in_changes():
    lab = Lab(RunInputs.from_scenario(SCENARIOS["01_prefill_first"], "fake", seed=4))
    lab.set_config(max_num_seqs=2)
    lab.run(3)
    lab.set_config(max_num_seqs=1)  # at frame 3: in changes=, with its frame
    lab.run(2)
    lab.goto(4)
    params = link_of(lab, SCENARIOS, lang="en").params()
    assert params == {"scenario": "01_prefill_first", "seed": "4", "max_num_seqs": "2",
                      "changes": pack([[3, {"max_num_seqs": "1"}]]), "frame": "4"}
    again = reopened(params)
    assert again.config_in_effect(0).max_num_seqs == 2 and again.config_in_effect(3).max_num_seqs == 1
    assert again.cursor == 4 and shown(again) == shown(lab, 4)


def five_changes(lab: Lab) -> Lab:
    """Preset 02 with five changes made mid-run: settings, a request added by hand, a KV pool rebuild, an option."""
    lab.run(2)
    lab.set_config(max_num_seqs=1)
    lab.run(2)
    lab.add_request("Explain the KV cache in one sentence.", 6, priority=2)
    lab.run(1)
    lab.set_config(num_kvcache_blocks=lab.config_in_effect().num_kvcache_blocks + 8)  # rebuilds the pool
    lab.run(2)
    lab.set_options(overlap=True)
    lab.run(1)
    lab.set_config(max_num_seqs=3, prefill_first=False)
    lab.run(30)
    lab.goto(9)
    return lab


def test_a_link_with_five_mid_run_changes_reproduces_every_frame_in_a_fresh_session():
    lab = five_changes(Lab(RunInputs.from_scenario(SCENARIOS["02_preemption"], "fake"), cache=RunCache(2**30)))
    params = link_of(lab, SCENARIOS, lang="en").params()
    assert params["frame"] == "9" and len(parse_link(params, SCENARIOS).changes) == 5
    again = reopened(params)  # the process's shared cache: computed afresh, not read from the original's
    assert again.cursor == 9 and again.shared_run is not lab.shared_run
    again.run(lab.last - again.last)
    assert again.last == lab.last > 9 and shown(again) == shown(lab)
    assert [c.kind for c in again.shared_run.spec.changes] == ["config", "request", "config", "config", "config"]
    assert [c.to_dict() for c in again.shared_run.spec.changes] == [c.to_dict() for c in lab.shared_run.spec.changes]
    assert link_of(again, SCENARIOS, lang="en").params() == {**params, "frame": str(lab.last)}


def test_old_links_still_open_and_read_back_the_same():
    for params in ({"scenario": "02_preemption", "frame": "19", "present": "1"},
                   {"scenario": "04_chunked_prefill", "variant": "1", "frame": "3"}):
        lab = reopened(params)
        assert lab.inputs.scenario_name == params["scenario"] and lab.cursor == int(params["frame"])
        assert link_of(lab, SCENARIOS, present="present" in params, lang="en").params() == params
    assert parse_link({}, SCENARIOS) == Link(next(iter(SCENARIOS)))


def test_a_class_link_and_a_roster_students_personal_link_open_the_preset_they_name():
    """`?class=` and `&me=` are the class's (ui/classroom.py reads them): a personal link is no unknown parameter
    (it was, and opened the first preset, saying so to the student the roster names)."""
    for params in ({"class": "ABCDE"}, {"class": "ABCDE", "me": "MX93EF77", "scenario": "02_preemption"}):
        link, problem = parse_link_or_fallback(params, SCENARIOS)
        assert problem is None and link.scenario == params.get("scenario", next(iter(SCENARIOS)))


def test_a_preset_with_its_options_switched_at_frame_0():
    lab = reopened({"scenario": "09_adaptive_batch", "adaptive": "off", "overlap": "1", "frame": "2"})
    assert lab.options_in_effect(0) == (True, None) and lab.inputs.spec.adaptive is not None


MALFORMED = [
    ({"scenario": "nope"}, "scenario='nope'"),
    ({"scenario": "custom", "requests": "many"}, "requests='many'"),
    ({"scenario": "custom", "requests": "0"}, "whole number from 1 to 200"),
    ({"scenario": "custom", "max_tokens": "99999"}, "max_tokens="),
    ({"scenario": "custom", "prompts": "poems"}, "use one of random, chat"),
    ({"scenario": "custom", "arrivals": "bursty"}, "arrivals='bursty'"),
    ({"scenario": "custom", "seed": "-1"}, "seed='-1'"),
    ({"scenario": "02_preemption", "requests": "3"}, "add scenario=custom"),
    ({"scenario": "02_preemption", "variant": "1"}, "has no variant"),
    ({"scenario": "custom", "variant": "1"}, "variant="),
    ({"scenario": "02_preemption", "frame": "x"}, "frame='x'"),
    ({"scenario": "02_preemption", "frame": "1000000"}, "whole number from 0 to 100000"),
    ({"scenario": "02_preemption", "present": "yes"}, "present='yes'"),
    ({"scenario": "02_preemption", "temperature": "3"}, "temperature='3'"),
    ({"scenario": "02_preemption", "max_num_seqs": "0"}, "max_num_seqs='0'"),
    ({"scenario": "02_preemption", "num_kvcache_blocks": "1e9"}, "num_kvcache_blocks="),
    ({"scenario": "02_preemption", "prefill_first": "maybe"}, "prefill_first='maybe'"),
    ({"scenario": "02_preemption", "preemption_policy": "random"}, "preemption_policy='random'"),
    ({"scenario": "custom", "max_model_len": "1024"}, "max_num_batched_tokens=512"),
    ({"scenario": "custom", "num_speculative_tokens": "2", "overlap": "1"}, "overlapped scheduling needs"),
    ({"scenario": "custom", "adaptive": "fast"}, "adaptive='fast'"),
    ({"scenario": "custom", "adaptive": "200-50-1-4"}, "adaptive='200-50-1-4'"),
    ({"scenario": "custom", "adaptive": "50-200-4-1"}, "adaptive='50-200-4-1'"),
    ({"scenario": "custom", "adaptive": "50-200-1-9999"}, "adaptive="),
    ({"scenario": "custom", "eos": "2"}, "`'eos'` is not one schedlab knows"),
    ({"scenario": "custom", "utm_source": "mail"}, "'utm_source'"),
    ({"scenario": "02_preemption", "changes": "v9.W10"}, "changes='v9.W10'"),
    ({"scenario": "02_preemption", "changes": "v1.%%%"}, "copy the link again"),
    ({"scenario": "02_preemption", "changes": pack([[3, {"max_num_seqs": "0"}]])},
     "the change at frame 3 has `max_num_seqs='0'`: use a whole number from 1"),
    ({"scenario": "02_preemption", "changes": pack([[3, {"eos": "2"}]])}, "eos='2'"),
    ({"scenario": "02_preemption", "changes": pack([[3, {"notebook_block_bug": "1"}]])},
     "the change at frame 3 cannot be made"),
    ({"scenario": "02_preemption", "changes": pack([[4, "hi", 9999, 0]])}, "max_tokens=9999"),
    ({"scenario": "02_preemption", "changes": pack([[4, " ", 5, 0]])}, "prompt=' '"),
    ({"scenario": "02_preemption", "changes": pack([[4, "hi", 5, 0], [2, {"max_num_seqs": "1"}]])},
     "copy the link again"),
    ({"scenario": "02_preemption", "changes": pack([[-1, {"max_num_seqs": "1"}]])}, "copy the link again"),
    ({"scenario": "vllm_vs_article", "vllm_version": "0.31"}, "vllm_version='0.31'"),
    ({"scenario": "vllm_vs_article", "watermark": "1.5"}, "watermark='1.5'"),
    ({"scenario": "vllm_vs_article", "max_num_active_seqs": "9"}, "max_num_seqs=3"),
]


def test_a_link_names_the_vllm_release_the_twin_mirrors_and_reopens_it():
    params = {"scenario": "vllm_vs_article", "vllm_version": "0.33", "frame": "3"}
    lab = reopened(params)
    assert lab.frames[3].config.value("vllm_version") == "0.33"
    assert lab.frames[3].decided_by.version == "0.33"
    assert link_of(lab, SCENARIOS, lang="en").params() == params


def test_a_link_carries_vllms_knobs_and_a_mid_run_change_of_one():
    params = {"scenario": "vllm_vs_article", "scheduler_reserve_full_isl": "0", "watermark": "0.2",
              "max_num_scheduled_tokens": "6", "changes": pack([[2, {"watermark": "0.0"}]]), "frame": "4"}
    lab = reopened(params)
    first, later = lab.frames[1].config, lab.frames[4].config
    assert [first.value(key) for key in ("scheduler_reserve_full_isl", "watermark", "max_num_scheduled_tokens")] == \
        [False, 0.2, 6]
    assert later.value("watermark") == 0.0 and not later.value("scheduler_reserve_full_isl")
    assert link_of(lab, SCENARIOS, lang="en").params() == params


def test_a_request_added_with_stop_tokens_and_min_tokens_travels_in_the_link():
    changes = pack([[2, "hello", 6, 0, 0.0, {"stop_token_ids": [3, 9], "min_tokens": 2}]])
    params = {"scenario": "vllm_vs_article", "changes": changes, "frame": "3"}
    lab = reopened(params)
    added = lab.shared_run.spec.changes[-1].payload
    assert (added.stop_token_ids, added.min_tokens) == ((3, 9), 2)
    assert link_of(lab, SCENARIOS, lang="en").params() == params
    with pytest.raises(LinkError, match="min_tokens"):
        parse_link({**params, "changes": pack([[2, "hello", 6, 0, 0.0, {"min_tokens": -1}]])}, SCENARIOS)


@pytest.mark.parametrize(("params", "named"), MALFORMED, ids=[str(p) for p, _ in MALFORMED])
def test_every_malformed_link_is_refused_with_a_message_naming_it(params, named):
    with pytest.raises(LinkError, match="This link's") as refused:
        parse_link(params, SCENARIOS)
    assert named in str(refused.value)


def test_a_new_seed_redraws_a_custom_workload_as_its_link_would():
    setup = CustomSetup(requests=6, arrivals="poisson")
    inputs = RunInputs.from_custom(setup, Config(), "fake", seed=1, temperature=0.5)
    assert inputs.with_seed(2) == RunInputs.from_custom(setup, Config(), "fake", seed=2, temperature=0.5)
    assert inputs.with_seed(2).spec.workload != inputs.spec.workload


def test_a_link_carries_sglangs_priority_settings_and_a_mid_run_change_of_one():
    params = {"scenario": "sglang_priority", "priority_scheduling_preemption_threshold": "6",
              "retraction_policy": "priority", "changes": pack([[4, {"disable_priority_preemption": "1"}]]),
              "frame": "5"}
    lab = reopened(params)
    first, later = lab.frames[1].config, lab.frames[5].config
    assert [first.value(key) for key in ("priority_scheduling_preemption_threshold", "retraction_policy")] == \
        [6, "priority"]
    assert not first.value("disable_priority_preemption") and later.value("disable_priority_preemption")
    assert not lab.frames[3].events_of("preempted")  # 5 - 0 is not more than 6
    assert link_of(lab, SCENARIOS, lang="en").params() == params
    with pytest.raises(LinkError, match="retraction_policy"):
        parse_link({"scenario": "sglang_priority", "enable_priority_scheduling": "0", "retraction_policy": "priority"},
                   SCENARIOS)
