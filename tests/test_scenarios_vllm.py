"""The vLLM twin's presets (issue 22 point 5) hold what their narratives say beyond their key frames (those are
checked by tests/test_scenarios.py): what the article's scheduler does instead, and what real vLLM says at start-up.
A trace opens decided by the scheduler it records; the sidebar warns, in both languages, where the pool cannot hold
one request of max_model_len tokens."""

import json
from dataclasses import replace

import pytest

from engine.analysis.partings import partings
from engine.analysis.vllm_args import vllm_notes, vllm_would_start
from engine.inputs.scenario import SCENARIOS_DIR, load_scenario, preset_paths
from engine.run.engine import Engine
from engine.traces.trace import trace_dict
from i18n import count
from session.lab import open_trace
from tests.helpers.app import lab

RESUME = load_scenario(SCENARIOS_DIR / "vllm_resume_cached.toml")
POOL = load_scenario(SCENARIOS_DIR / "vllm_pool_too_small.toml")


def run(spec, **changes) -> Engine:
    engine = Engine(replace(spec, **changes))
    engine.run()
    return engine


def test_the_resume_preset_the_articles_scheduler_decides_alike_and_without_caching_all_is_recomputed():
    twin, article = run(RESUME.spec), run(RESUME.spec, scheduler="article")
    assert partings([article.frames, twin.frames]) == []
    hit = next(e for e in twin.frames[9].events if e.kind == "prefix_hit")
    assert hit.block_ids == (3, 4) and hit.num_tokens == 8
    assert article.frames[9].batch.num_tokens == (3,) and article.frames[9].requests[1].block_table[0] == 2
    uncached = run(RESUME.spec, config=replace(RESUME.spec.config, enable_prefix_caching=False))
    assert uncached.frames[9].batch.num_tokens == (11,)


def test_the_pool_preset_stalls_under_the_twin_and_the_articles_scheduler_aborts_request_0_at_step_11():
    twin = Engine(POOL.spec)
    assert twin.run() == "stalled" and twin.step_count == 11
    article = run(POOL.spec, scheduler="article")
    assert [e.seq_id for e in article.frames[11].events if e.kind == "aborted"] == [0]
    assert article.frames[-1].requests[2].status == "finished"


def test_only_the_pool_preset_asks_for_more_than_its_pool_and_the_vllm_notes_say_vllm_would_not_start():
    assert [p.stem for p in preset_paths() if not vllm_would_start(load_scenario(p).spec.config)] == [
        "vllm_pool_too_small"]
    notes = vllm_notes(POOL.spec.config, "en", scheduler="vllm")
    assert any("vLLM would not start" in n and "max seq len (32)" in n and "estimated maximum model length is 16" in n
               for n in notes)
    assert any("vLLM 不会以这些参数启动" in n for n in vllm_notes(POOL.spec.config, "zh", scheduler="vllm"))
    assert not any("would not start" in n for n in vllm_notes(RESUME.spec.config, "en", scheduler="vllm"))


def test_a_trace_opens_decided_by_the_scheduler_it_records():
    twin, article = run(POOL.spec), run(POOL.spec, scheduler="article")
    assert open_trace(json.dumps(trace_dict(twin, "twin")).encode()).scheduler == "vllm"
    assert open_trace(json.dumps(trace_dict(article, "article")).encode()).scheduler == "article"


def test_an_opened_twin_trace_says_so_in_the_sidebar_with_the_pool_warning(app):
    app.run()
    data = json.dumps(trace_dict(run(POOL.spec), "pool")).encode()
    app.file_uploader[0].set_value(("pool.json", data, "application/json")).run()
    assert not app.exception and lab(app).is_trace and lab(app).scheduler == "vllm"
    assert any("Decided by: vLLM V1 (as the trace records)." in c.value for c in app.sidebar.caption)
    assert any("This scheduler does not read these settings (they are greyed out" in c.value
               for c in app.sidebar.caption)
    assert any("max_model_len = 32, but the KV pool holds 16 tokens" in w.value and "waiting for good" in w.value
               for w in app.sidebar.warning)


def test_the_sidebar_warns_in_both_languages_when_the_pool_cannot_hold_max_model_len(app):
    app.query_params["scenario"] = "vllm_pool_too_small"
    app.run()
    assert not app.exception
    warning = next(w.value for w in app.sidebar.warning if "max_model_len = 32" in w.value)
    assert "vLLM refuses to start" in warning and "the vLLM twin" in warning
    app.radio(key="scheduler_choice").set_value("article").run()
    assert any("the article's scheduler aborts" in w.value for w in app.sidebar.warning)


def test_the_pool_warning_in_chinese(app):
    app.query_params.update(scenario="vllm_pool_too_small", scheduler="article", lang="zh")
    app.run()
    assert not app.exception
    assert any("vLLM 拒绝以这样的配置启动" in w.value and "文章的调度器会中止" in w.value for w in app.sidebar.warning)


def test_no_warning_where_the_pool_holds_max_model_len(app):
    app.query_params["scenario"] = "vllm_resume_cached"
    app.run()
    assert not app.exception and not any("max_model_len =" in w.value for w in app.sidebar.warning)


VERSUS = load_scenario(SCENARIOS_DIR / "vllm_vs_article.toml")


def test_the_versus_preset_parts_where_its_narrative_says_and_the_labs_comparison_names_those_steps():
    from engine.analysis.compare import compare, variants_for
    from viz.lockstep import lockstep_marks

    spec = VERSUS.spec
    article, twin = compare(variants_for("article vs vllm", spec.config, "en"), spec.workload, seed=spec.seed,
                            cost=spec.cost)
    assert (article.engine.spec.scheduler, twin.engine.spec.scheduler) == ("article", "vllm")
    found = partings([article.frames, twin.frames])
    assert [p.step for p in found] == [3, 4, 5, 6, 8, 9, 10, 12, 13]
    assert "steps 3, 4, 5, 6, 8, 9, 10, 12 and 13" in VERSUS.narrative
    assert "第 3、4、5、6、8、9、10、12 和 13 步" in VERSUS.narrative_in("zh")
    said = dict(lockstep_marks([(article.label, article.frames), (twin.label, twin.frames)], lang="en")["partings"])
    assert said[3] == ("Step 3: the article's scheduler admits request 2 (8 tokens); the vLLM twin only runs its "
                       "decode batch (2 requests).")  # an admission's first chunk is told once, by the admission
    assert said[5].startswith("Step 5: the article's scheduler preempts request 2;")
    assert said[9].endswith("; the vLLM twin admits request 2 (8 tokens).")
    assert article.frames[3].batch.seq_ids == (2,) and set(article.frames[2].running) == {0, 1}  # 0 and 1 paused
    finish = {run.label: next(f.step for f in run.frames if any(e.kind == "finished" and e.seq_id == 2
                                                                for e in f.events)) for run in (article, twin)}
    assert finish == {article.label: 15, twin.label: 13}



def key_note(scenario, step: int, lang: str) -> str:
    return next(k for k in scenario.key_frames if k.step == step).note_in(lang)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_versus_note_says_which_chunk_the_twin_admits_at_step_3_with_the_reserve_off(lang):
    """vllm_vs_article's step 3: with scheduler_reserve_full_isl off the twin admits 2's first chunk of what the
    token budget leaves after 0's and 1's decodes (the lab's parting says so), not the article's chunk of 8."""
    off = run(VERSUS.spec, config=replace(VERSUS.spec.config, scheduler_reserve_full_isl=False))
    batch = off.frames[3].batch
    chunk = dict(zip(batch.seq_ids, batch.num_tokens, strict=True))[2]
    assert chunk == VERSUS.spec.config.max_num_batched_tokens - 2
    assert count(lang, "n.token", chunk) in key_note(VERSUS, 3, lang)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_resume_notes_step_7_blames_no_knob_its_wait_does_not_depend_on(lang):
    """vllm_resume_cached's step 7: 1 waits with scheduler_reserve_full_isl off too (this step's chunk is its whole
    sequence), so the note tells the blocks it needs, not the knob."""
    off = run(RESUME.spec, config=replace(RESUME.spec.config, scheduler_reserve_full_isl=False))
    assert 1 not in off.frames[7].batch.seq_ids and 1 in off.frames[9].batch.seq_ids
    assert "scheduler_reserve_full_isl" not in key_note(RESUME, 7, lang)

def test_a_named_comparison_runs_under_the_scheduler_chosen_and_says_when_the_twin_would_repeat_one_run():
    from engine.analysis.compare import COMPARISONS, GENERATED_CONFIG, OWN_SCHEDULERS, alike_under, variants_for

    base = GENERATED_CONFIG
    assert {v.scheduler for v in variants_for("whole vs chunked prefill", base, "en", "vllm")} == {"vllm"}
    assert {v.scheduler for v in variants_for("whole vs chunked prefill", base, "en")} == {"article"}
    assert [v.scheduler for v in variants_for("article vs vllm", base, "en", "vllm")] == ["article", "vllm"]
    alike = {name for name in COMPARISONS if name not in OWN_SCHEDULERS
             and alike_under("vllm", variants_for(name, base, "en", "vllm"))}
    sglangs_own = {"lpm vs dfs-weight vs fcfs vs lof (SGLang)"}
    assert alike == {"prefill-first vs decode-first", "tail vs smart preemption"} | sglangs_own
    vllms_own = {"whole sequence vs first chunk at admission (vLLM)", "watermark 0 vs 0.1 (vLLM)",
                 "vLLM 0.32 vs 0.33"}
    assert {name for name in COMPARISONS if alike_under("article", variants_for(name, base, "en"))} \
        == vllms_own | sglangs_own


def lab_page():
    from pathlib import Path

    from streamlit.testing.v1 import AppTest

    page = AppTest.from_file(str(Path(__file__).resolve().parents[1] / "app_pages" / "policy_lab.py"),
                             default_timeout=60)
    page.run()
    page.selectbox(key="workload_choice").select("vllm_vs_article").run()
    return page


def test_the_lab_runs_a_named_comparison_under_the_workloads_own_scheduler_and_the_article_vs_twin_one():
    page = lab_page()
    page.selectbox(key="comparison").select("prefix caching on vs off").run()
    chosen = page.selectbox(key="comparison_scheduler_vllm_vs_article")
    assert chosen.value == "vllm" and chosen.options == ["the article's (nano-vllm)", "vLLM V1", "SGLang"]
    page.button(key="run").click().run()
    assert not page.exception and not page.error
    assert [r.engine.spec.scheduler for r in page.session_state.compare_runs] == ["vllm", "vllm"]
    page.selectbox(key="comparison").select("article vs vllm").run()
    assert not [s for s in page.selectbox if s.key == "comparison_scheduler_vllm_vs_article"]
    page.button(key="run").click().run()
    runs = page.session_state.compare_runs
    assert [r.engine.spec.scheduler for r in runs] == ["article", "vllm"]
    assert [r.label for r in runs] == ["the article's scheduler", "the vLLM twin"]


def test_the_lab_says_when_a_comparison_is_one_run_twice_under_the_twin():
    page = lab_page()
    page.selectbox(key="comparison").select("tail vs smart preemption").run()
    assert any("one run twice" in i.value for i in page.info)
    assert not [b for b in page.button if b.key == "run"]
    page.selectbox(key="comparison_scheduler_vllm_vs_article").select("article").run()
    assert not page.info and [b for b in page.button if b.key == "run"]


def test_the_lab_turns_vllms_admission_knobs_under_the_twin_and_says_the_article_does_not_read_them():
    """vllm_vs_article's step 3 (request 2 waits for its whole sequence) is where reserve on and off part."""
    page = lab_page()
    page.selectbox(key="comparison").select("whole sequence vs first chunk at admission (vLLM)").run()
    page.button(key="run").click().run()
    assert not page.exception and not page.error
    on, off = page.session_state.compare_runs
    assert [r.engine.spec.scheduler for r in (on, off)] == ["vllm", "vllm"]
    assert (on.engine.spec.config.scheduler_reserve_full_isl, off.engine.spec.config.scheduler_reserve_full_isl) \
        == (True, False)
    batches = [[f.batch.seq_ids for f in r.engine.frames] for r in (on, off)]
    assert batches[0][:3] == batches[1][:3] and batches[0][3] != batches[1][3]
    page.selectbox(key="comparison").select("watermark 0 vs 0.1 (vLLM)").run()
    page.selectbox(key="comparison_scheduler_vllm_vs_article").select("article").run()
    assert any("one run twice" in i.value for i in page.info)
