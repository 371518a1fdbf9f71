"""The choice of scheduler (issue 22 point 1): the article's or the vLLM twin, in scenario files, links, traces, the
sidebar and the policy lab. A scheduler cannot change mid-run: choosing the other one starts the run again."""

import json
from dataclasses import replace

import pytest
from streamlit.testing.v1 import AppTest

from engine.inputs.scenario import ScenarioError, load_scenario, preset_paths
from engine.run.engine import Engine
from engine.traces.trace import read_trace, trace_dict
from session.links import LinkError, link_of, open_link, parse_link
from tests.helpers.app import page_app

GOOD = """title = "t"
narrative = "n"
[config]
max_num_seqs = 2
max_num_batched_tokens = 64
max_model_len = 20
num_kvcache_blocks = 10
kvcache_block_size = 4
[workload]
requests = [{ prompt_token_ids = [1, 2, 3], max_tokens = 2 }]
"""
SCENARIOS = {path.stem: load_scenario(path) for path in preset_paths()}


def test_a_scenario_file_names_its_scheduler_and_a_bad_one_is_refused(tmp_path):
    path = tmp_path / "twin.toml"
    path.write_text('scheduler = "vllm"\n' + GOOD)
    assert load_scenario(path).spec.scheduler == "vllm"
    path.write_text(GOOD)
    assert load_scenario(path).spec.scheduler == "article"
    path.write_text('scheduler = "sglang"\n' + GOOD.replace("[config]", '[config]\nschedule_policy = "lof"\n'
                                                                           "chunked_prefill_size = 8"))
    sglang = load_scenario(path).spec
    assert sglang.scheduler == "sglang"
    assert [sglang.config.value(key) for key in ("schedule_policy", "chunked_prefill_size")] == ["lof", 8]
    path.write_text('scheduler = "orca"\n' + GOOD)
    with pytest.raises(ScenarioError) as refused:
        load_scenario(path)
    assert refused.value.key == "scheduler" and "'orca' is not a scheduler; use one of article, vllm, sglang" in str(
        refused.value)


def test_a_link_carries_the_scheduler_only_when_it_is_not_the_presets_own():
    link = parse_link({"scenario": "02_preemption", "scheduler": "vllm", "frame": "5"}, SCENARIOS)
    lab = open_link(link, SCENARIOS, "fake")
    lab.run(link.frame)
    assert lab.inputs.spec.scheduler == "vllm"
    assert link_of(lab, SCENARIOS, lang="en").params()["scheduler"] == "vllm"
    plain = open_link(parse_link({"scenario": "02_preemption"}, SCENARIOS), SCENARIOS, "fake")
    assert "scheduler" not in link_of(plain, SCENARIOS, lang="en").params()
    custom = {"scenario": "custom", "requests": "4", "scheduler": "vllm", "frame": "3"}
    assert open_link(parse_link(custom, SCENARIOS), SCENARIOS, "fake").inputs.spec.scheduler == "vllm"
    sglang = open_link(parse_link({**custom, "scheduler": "sglang"}, SCENARIOS), SCENARIOS, "fake")
    sglang.run(3)
    assert link_of(sglang, SCENARIOS, lang="en").params()["scheduler"] == "sglang"


def test_a_bad_scheduler_in_a_link_names_the_parameter():
    with pytest.raises(LinkError) as refused:
        parse_link({"scenario": "02_preemption", "scheduler": "orca"}, SCENARIOS)
    assert "scheduler='orca'" in str(refused.value) and "article, vllm, sglang" in str(refused.value)


def test_a_trace_records_its_scheduler_and_an_older_one_reads_as_the_articles(preemption_preset):
    twin = Engine(replace(SCENARIOS["02_preemption"].spec_for("fake"), scheduler="vllm"))
    twin.run()
    data = trace_dict(twin, "twin")
    assert read_trace(json.dumps(data))[1]["scheduler"] == "vllm"
    old = trace_dict(preemption_preset, "old")
    assert "scheduler" not in old  # the article's traces stay as they were
    assert read_trace(json.dumps(old))[1]["scheduler"] == "article"
    with pytest.raises(ValueError, match="'orca' decided this trace, a scheduler this app does not have"):
        read_trace(json.dumps({**data, "scheduler": "orca"}))


def controls(app) -> set[str]:
    """The settings the sidebar offers, by key."""
    sidebar = app.sidebar
    return {w.key.removeprefix("cfg_") for w in (*sidebar.number_input, *sidebar.toggle, *sidebar.selectbox)
            if w.key and w.key.startswith("cfg_")}


def test_choosing_the_twin_restarts_the_run_from_frame_0_and_each_scheduler_shows_its_own_settings(app):
    app.run()
    radio = app.radio(key="scheduler_choice")
    assert radio.value == "article" and radio.options == ["the article's (nano-vllm)", "vLLM V1", "SGLang", "vLLM V0"]
    shared = {"max_num_seqs", "num_kvcache_blocks", "kvcache_block_size", "max_num_batched_tokens", "max_model_len",
              "enable_prefix_caching", "chunked_prefill", "queue_policy", "num_speculative_tokens",
              "prompt_lookup_min", "prompt_lookup_max"}
    assert controls(app) == shared | {"prefill_first", "mixed_batches", "preemption_policy"}  # the article's own
    assert not any("does not read these settings" in c.value for c in app.sidebar.caption)  # every shared one
    radio.set_value("vllm").run()
    assert not app.exception and app.session_state.lab.inputs.spec.scheduler == "vllm"
    assert app.session_state.lab.cursor == 0
    assert controls(app) == shared | {"vllm_version", "scheduler_reserve_full_isl", "watermark",
                                      "max_num_scheduled_tokens", "max_num_active_seqs",
                                      "long_prefill_token_threshold", "long_prefill_token_threshold_adaptive"}
    assert any("Its preemption victim follows the queue policy" in c.value for c in app.sidebar.caption)
    app.radio(key="scheduler_choice").set_value("sglang").run()
    assert not app.exception and app.session_state.lab.inputs.spec.scheduler == "sglang"
    assert controls(app) == shared | {"chunked_prefill_size", "max_prefill_tokens", "schedule_policy",
                                      "schedule_conservativeness", "enable_priority_scheduling",
                                      "schedule_low_priority_values_first", "priority_scheduling_preemption_threshold",
                                      "disable_priority_preemption", "retraction_policy"}
    note = next(c.value for c in app.sidebar.caption if "does not read" in c.value)
    assert "retracts" in note and "prefix caching" in note and "has no such choice" not in note
    assert "not modelled by this app" in note and "--disable-radix-cache" in note and "--enable-mixed-chunk" in note
    assert "schedule_policy" not in note and "watermark" not in note
    sidebar = app.sidebar
    assert sidebar.number_input(key="cfg_max_num_seqs").label.startswith("max_running_requests (SGLang's name;")
    assert sidebar.number_input(key="cfg_kvcache_block_size").label.startswith("page_size (SGLang's name;")
    assert sidebar.number_input(key="cfg_num_kvcache_blocks").label.startswith("max_total_tokens ÷ page_size (")
    policy = sidebar.selectbox(key="cfg_schedule_policy")
    assert policy.options == ["lpm", "dfs-weight", "fcfs", "lof"] and policy.value == "fcfs"  # SGLang's default
    assert not sidebar.number_input(key="cfg_chunked_prefill_size").disabled
    assert sidebar.toggle(key="cfg_enable_prefix_caching").disabled  # the radix tree is always on
    policy.select("lpm").run()
    app.sidebar.toggle(key="cfg_enable_priority_scheduling").set_value(True).run()  # under lpm: SGLang refuses it
    assert not app.exception and any("fcfs, lof" in e.value for e in app.sidebar.error)
    assert not app.session_state.lab.config_in_effect().value("enable_priority_scheduling")
    app.sidebar.toggle(key="cfg_enable_priority_scheduling").set_value(False).run()
    app.sidebar.selectbox(key="cfg_schedule_policy").select("fcfs").run()
    assert not app.exception and app.session_state.lab.config_in_effect().value("schedule_policy") == "fcfs"
    app.sidebar.toggle(key="cfg_enable_priority_scheduling").set_value(True).run()
    assert app.sidebar.selectbox(key="cfg_retraction_policy").options == ["length", "priority"]
    app.sidebar.selectbox(key="cfg_retraction_policy").select("priority").run()
    effect = app.session_state.lab.config_in_effect()
    assert not app.exception
    assert [effect.value(key) for key in ("enable_priority_scheduling", "retraction_policy")] == [True, "priority"]
    app.radio(key="scheduler_choice").set_value("vllm_v0").run()  # V0: its own settings under V0's names
    assert not app.exception and app.session_state.lab.inputs.spec.scheduler == "vllm_v0"
    assert controls(app) == shared | {"preemption_mode", "num_cpu_blocks", "max_num_partial_prefills",
                                      "max_long_partial_prefills", "v0_long_prefill_token_threshold", "v0_watermark"}
    assert app.sidebar.selectbox(key="cfg_preemption_mode").options == ["auto", "recompute", "swap"]
    assert app.sidebar.number_input(key="cfg_num_kvcache_blocks").label.startswith("num_gpu_blocks_override")
    assert app.sidebar.number_input(key="cfg_num_speculative_tokens").disabled  # V0's scheduler has no n-gram
    app.sidebar.selectbox(key="cfg_preemption_mode").select("swap").run()
    assert not app.exception and app.session_state.lab.config_in_effect().value("preemption_mode") == "swap"
    app.radio(key="scheduler_choice").set_value("article").run()
    assert app.session_state.lab.inputs.spec.scheduler == "article"
    assert "schedule_policy" not in controls(app) and "enable_priority_scheduling" not in controls(app)


def test_the_twin_note_is_in_chinese_too(app):
    app.query_params["lang"] = "zh"
    app.query_params["scheduler"] = "vllm"
    app.run()
    assert not app.exception
    assert app.radio(key="scheduler_choice").options == ["文章的（nano-vllm）", "vLLM V1", "SGLang", "vLLM V0"]
    assert any("它抢占的对象由队列策略决定" in c.value for c in app.sidebar.caption)
    assert app.sidebar.selectbox(key="cfg_vllm_version").label == "vLLM 版本（vLLM 孪生调度器）"
    app.radio(key="scheduler_choice").set_value("sglang").run()
    assert any("本应用未模拟" in c.value and "--disable-radix-cache" in c.value for c in app.sidebar.caption)


def run_custom_comparison(scheduler: str, **selects) -> AppTest:
    """The lab's custom comparison run with its second config under `scheduler` (and `selects`: key -> option)."""
    at = page_app("policy_lab")
    at.run()
    at.selectbox(key="comparison").select("custom").run()
    for key, option in {"c1_scheduler": scheduler, **selects}.items():
        at.selectbox(key=key).select(option).run()
    at.button(key="run").click().run()
    assert not at.exception and not at.error
    return at


def test_a_custom_comparison_runs_the_articles_scheduler_beside_the_twin():
    runs = run_custom_comparison("vllm").session_state.compare_runs
    assert [r.engine.spec.scheduler for r in runs] == ["article", "vllm"]
    assert runs[0].engine.spec.workload == runs[1].engine.spec.workload


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_app_opens_a_link_under_sglang_and_narrates_its_steps(app, lang):
    from tests.helpers.app import button, lab, no_errors

    app.query_params.update({"scenario": "05_prefix_caching", "scheduler": "sglang", "lang": lang})
    app.run()
    app.number_input(key="run_n").set_value(3).run()
    button(app, "Run N steps ▶▶" if lang == "en" else "运行 N 步 ▶▶").click().run()
    assert no_errors(app) and lab(app).inputs.spec.scheduler == "sglang" and lab(app).cursor == 3
    assert lab(app).frames[3].decided_by.system == "SGLang"


def test_a_custom_comparison_runs_sglang_and_exports_its_launch_line():
    """Each run is exported as its own system starts it, under a heading naming both; SGLang's line has SGLang's
    notes (none of vLLM's), and the metric table names the batch limit as each system does."""
    at = run_custom_comparison("sglang", c1_schedule_policy="lpm")
    runs = at.session_state.compare_runs
    assert [r.engine.spec.scheduler for r in runs] == ["article", "sglang"]
    assert runs[1].config.value("schedule_policy") == "lpm" and runs[1].engine.is_finished
    lines = [c.value for c in at.code]
    assert [line.split()[:3] for line in lines] == [["vllm", "serve", "HuggingFaceTB/SmolLM2-135M-Instruct"],
                                                    ["python", "-m", "sglang.launch_server"]]
    assert "--schedule-policy lpm" in lines[1]
    assert "The same configs in vLLM, SGLang" in [h.value for h in at.subheader]
    notes = [m.value for m in at.markdown if m.value.startswith("- ")]
    assert sum("null block" in n for n in notes) == 1 and sum("SGLang's own" in n for n in notes) == 1
    from viz.compare_words import metric_rows
    assert "max_num_seqs / max_running_requests (mean)" in [row["metric"] for row in metric_rows(runs, lang="en")]


def test_under_the_twin_the_vllm_release_is_a_choice_beside_the_scheduler(app):
    app.query_params["scheduler"] = "vllm"
    app.run()
    assert not app.exception
    release = app.sidebar.selectbox(key="cfg_vllm_version")
    assert release.label == "vLLM release (vLLM twin)" and release.options == ["0.32", "0.33"]
    assert release.value == "0.32"
    release.select("0.33").run()
    assert not app.exception and app.session_state.lab.config_in_effect().value("vllm_version") == "0.33"
    app.radio(key="scheduler_choice").set_value("article").run()
    assert "vllm_version" not in controls(app)  # the article's scheduler has no release to choose
