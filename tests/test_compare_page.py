"""The policy-lab page under Streamlit's AppTest: pick a comparison, run it, read the table and the summary;
an impossible config is a plain message, never a traceback."""

import json

from engine.analysis.compare import MAX_VARIANTS
from tests.helpers.app import opened_page


def test_a_named_comparison_runs_and_shows_the_table_and_summary():
    at = opened_page("policy_lab")
    at.selectbox(key="workload_choice").select("02_preemption").run()
    at.selectbox(key="comparison").select("tail vs smart preemption").run()
    assert not at.dataframe and not at.info  # nothing before the run
    at.button(key="run").click().run()
    assert not at.exception and not at.error
    table = at.dataframe[0].value
    assert list(table.columns) == ["metric", "tail preemption", "smart preemption"]
    assert "TTFT p99 steps" in set(table["metric"])
    assert at.info[0].value.startswith(("Against tail preemption, smart preemption",
                                        "smart preemption and tail preemption performed alike"))
    codes = [c.value for c in at.code]
    assert len(codes) == 2 and all(c.startswith("vllm serve ") and "--max-num-seqs" in c for c in codes)
    assert any("Smart preemption" in m.value for m in at.markdown)  # the note on what vLLM lacks
    at.button(key="build_html").click().run()
    assert not at.exception and at.session_state.exports["html"].startswith("<!DOCTYPE html>")
    at.button(key="build_json").click().run()
    data = json.loads(at.session_state.exports["json"])
    assert [r["label"] for r in data["runs"]] == ["tail preemption", "smart preemption"]


def test_a_custom_comparison_of_as_many_configs_as_a_comparison_holds():
    """Six configs (RUN_BOUNDS["variants"]): set by hand in two rows of three, run side by side."""
    at = opened_page("policy_lab")
    at.selectbox(key="workload_choice").select("01_prefill_first").run()
    at.selectbox(key="comparison").select("custom").run()
    at.number_input(key="num_configs").set_value(MAX_VARIANTS).run()
    assert at.number_input(key="num_configs").max == MAX_VARIANTS == 6
    for i in range(MAX_VARIANTS):
        at.text_input(key=f"c{i}_label").input(f"config {i}").run()
    at.button(key="run").click().run()
    assert not at.exception and not at.error
    assert list(at.dataframe[0].value.columns) == ["metric", *(f"config {i}" for i in range(MAX_VARIANTS))]


def test_a_custom_comparison_of_three_configs():
    at = opened_page("policy_lab")
    at.selectbox(key="workload_choice").select("01_prefill_first").run()
    at.selectbox(key="comparison").select("custom").run()
    at.number_input(key="num_configs").set_value(3).run()
    at.text_input(key="c0_label").input("prefill-first").run()
    at.text_input(key="c1_label").input("decode-first").run()
    at.selectbox(key="c1_prefill_first").set_value(False).run()  # the article's own, as it declares it
    at.text_input(key="c2_label").input("big blocks").run()
    at.button(key="run").click().run()
    assert not at.exception and not at.error
    assert list(at.dataframe[0].value.columns) == ["metric", "prefill-first", "decode-first", "big blocks"]
    assert "decode-first" in at.info[0].value


def test_an_impossible_config_is_a_plain_error():
    at = opened_page("policy_lab")
    at.selectbox(key="comparison").select("custom").run()
    at.number_input(key="c0_tokens").set_value(8).run()  # below max_num_seqs and max_model_len, no chunking
    assert not at.exception
    assert at.error and "max_num_batched_tokens=8" in at.error[0].value
    assert "Traceback" not in at.error[0].value and len(at.error) == 1  # only under config 1
    assert at.text_input(key="c1_label").value == "config 2"  # the other config still shows
    assert not at.button  # nothing to run


def test_two_configs_with_one_name_are_refused_in_words():
    at = opened_page("policy_lab")
    at.selectbox(key="comparison").select("custom").run()
    at.text_input(key="c1_label").input("config 1").run()
    at.button(key="run").click().run()
    assert not at.exception and "its own name" in at.error[0].value


def test_the_optimisation_comparisons_show_their_effect():
    at = opened_page("policy_lab")
    at.selectbox(key="comparison").select("overlap off vs on").run()
    at.button(key="run").click().run()
    assert not at.exception and not at.error
    table = at.dataframe[0].value.set_index("metric")
    step_ms = table.loc["mean step time (ms)"]
    assert step_ms["overlapped scheduling"] < step_ms["synchronous"]
    assert "made each step take" in at.info[0].value and "scheduled while the model computed" in at.info[0].value
    assert any("--async-scheduling" in c.value.split() for c in at.code)
    at.selectbox(key="comparison").select("adaptive batch size off vs on").run()
    at.button(key="run").click().run()
    table = at.dataframe[0].value.set_index("metric")
    fixed, adaptive = table.columns
    assert table.loc["max_num_seqs (range)", fixed] == "16 - 16"
    assert table.loc["max_num_seqs (range)", adaptive] != "16 - 16"
    assert "ran under max_num_seqs from" in at.info[0].value


def test_a_custom_comparison_sets_overlap_and_adaptive_per_config():
    at = opened_page("policy_lab")
    at.selectbox(key="comparison").select("custom").run()
    at.toggle(key="c1_overlap").set_value(True).run()
    at.toggle(key="c1_adaptive").set_value(True).run()
    at.button(key="run").click().run()
    assert not at.exception and not at.error
    runs = at.session_state.compare_runs
    assert (runs[0].engine.overlap, runs[1].engine.overlap) == (False, True) and runs[1].engine.adaptive
    assert runs[1].run.sim_time_s < runs[0].run.sim_time_s


def test_the_summary_is_a_verdict_per_question_then_the_table():
    at = opened_page("policy_lab")
    at.selectbox(key="comparison").select("prefill-first vs decode-first").run()
    at.button(key="run").click().run()
    assert not at.exception and not at.error
    verdict = next(m.value for m in at.markdown if m.value.startswith("- **first token**"))
    assert "- **later tokens**" in verdict and "- **memory**" in verdict and " sooner than " in verdict
    assert any("TTFT: time to first token" in c.value for c in at.caption)


def test_a_chart_that_would_draw_only_flat_lines_says_so_in_one_line():
    at = opened_page("policy_lab")
    at.selectbox(key="comparison").select("prefill-first vs decode-first").run()
    at.button(key="run").click().run()
    assert any(c.value == "max_num_seqs stayed at 16 in every step of every config." for c in at.caption)
    titles = [json.loads(chart.proto.spec)["layout"]["title"]["text"] for chart in at.get("plotly_chart")
              if "title" in json.loads(chart.proto.spec)["layout"]]
    assert "max_num_seqs over time" not in titles


def test_the_lab_shows_a_short_comparison_at_once_and_a_long_one_when_asked(monkeypatch):
    """Preset 07's comparison gets its stages with the results; with fewer frames allowed at once, a button
    builds them, once, and the next rerun keeps them."""
    import ui.lockstep

    at = opened_page("policy_lab")
    at.selectbox(key="workload_choice").select("07_smart_preemption").run()
    at.selectbox(key="comparison").select("tail vs smart preemption").run()
    at.button(key="run").click().run()
    message = json.loads(at.session_state.lockstep_messages["en"])
    assert [run["title"] for run in message["runs"]] == ["tail preemption", "smart preemption"]
    assert message["partings"] and not any(b.key == "lockstep_show" for b in at.button)
    monkeypatch.setattr(ui.lockstep, "AT_ONCE_FRAMES", 50)
    at.button(key="run").click().run()  # a new comparison: its stages not built yet
    assert "en" not in at.session_state.lockstep_messages
    at.button(key="lockstep_show").click().run()
    assert not at.exception and json.loads(at.session_state.lockstep_messages["en"])["partings"] == \
        message["partings"]
    at.button(key="build_json").click().run()  # another rerun: the stages stay, built once
    assert not any(b.key == "lockstep_show" for b in at.button) and not at.exception
