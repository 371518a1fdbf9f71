"""What a vLLM user found wrong trying the three vllm_ presets and the lab (issue 32's "Tried as a vLLM user would",
points 1-10), each checked in both languages where it has words: short runs are not "alike" by an absolute margin,
a prompt's last chunk is a decision, the narration does not apply the article's rules to the twin, a preset run by
another scheduler says so, settings the twin ignores cannot branch the run, 06_priority's story holds under the
twin, the Chinese null block is not "empty", async scheduling is named once and by vLLM's name, an offline player
offers no key frame past its end, and the wording of point 10."""

import re
from dataclasses import replace

import pytest

from engine.analysis.partings import Decision, decisions, partings
from engine.inputs.scenario import SCENARIOS_DIR, load_scenario
from engine.run.engine import Engine
from i18n import CATALOGUES, text
from scheduler.events import ChunkScheduled, Preempted
from scheduler.factory import scheduler_info
from tests.helpers.app import control, fake_model_app, player_message
from tests.helpers.engines import preset_comparison
from viz.compare_words import verdicts
from viz.html_export import run_message
from viz.narrate import describe, narrate

LANGS = ("en", "zh")


def preset_run(name: str, scheduler: str) -> Engine:
    engine = Engine(replace(load_scenario(SCENARIOS_DIR / f"{name}.toml").spec, scheduler=scheduler))
    engine.run()
    return engine


@pytest.fixture(scope="module")
def versus():
    return preset_comparison("vllm_vs_article", "article vs vllm", lang="en")


@pytest.fixture
def app(monkeypatch):
    return fake_model_app(monkeypatch)


# -- 1. "alike within 5%" is 5% of the values, however small ------------------------------------------------------

@pytest.mark.parametrize("lang", LANGS)
def test_a_short_runs_times_apart_by_14_percent_are_not_alike(lang):
    runs = preset_comparison("vllm_vs_article", "article vs vllm", lang=lang)
    times = sorted(run.run.sim_time_s for run in runs)
    assert times[0] < 1 and (times[1] - times[0]) / times[1] > 0.05
    whole = dict(verdicts(runs, lang))[text(lang, "compare.question.whole_workload")]
    assert whole.startswith(runs[1].label) and f"{times[0]:.3g}" in whole and f"{times[1]:.3g}" in whole
    assert "5%" not in whole


# -- 2. a prompt's last chunk is a decision -----------------------------------------------------------------------

def test_the_articles_last_chunk_parts_it_from_the_twins_decodes(versus):
    article, twin = versus
    assert twin.frames[4].batch.kind == "decode" and not article.frames[4].events_of("chunk")
    assert Decision("chunk", 2, 2) in decisions(article.frames[4])
    found = {p.step: p.own for p in partings([article.frames, twin.frames])}
    assert found[4] == ((Decision("chunk", 2, 2),), ())
    assert {10, 13} <= set(found)


def test_the_presets_story_names_every_parting_step(versus):
    steps = [p.step for p in partings([run.frames for run in versus])]
    scenario = load_scenario(SCENARIOS_DIR / "vllm_vs_article.toml")
    named = ", ".join(map(str, steps[:-1])) + f" and {steps[-1]}"
    assert f"parts from it at steps {named}." in " ".join(scenario.narrative_in("en").split())
    assert "、".join(map(str, steps[:-1])) + f" 和 {steps[-1]} 步" in scenario.narrative_in("zh")


# -- 3. after a pool rebuild, the requeued requests did not "sit the step out" ------------------------------------

@pytest.mark.parametrize("lang", LANGS)
def test_a_request_the_rebuild_requeued_is_not_told_as_sitting_out(lang):
    spec = load_scenario(SCENARIOS_DIR / "vllm_vs_article.toml").spec
    engine = Engine(spec)
    engine.run(3)
    engine.set_config(num_kvcache_blocks=8)
    engine.step()
    frame, before = engine.frames[4], engine.frames[3]
    assert frame.events_of("pool_rebuilt") and 1 in before.running and 1 not in frame.batch.seq_ids
    lines = narrate(frame, before, lang=lang)
    assert not any("nano-vllm" in line for line in lines)
    assert any(line.startswith(text(lang, "narrate.blocked.token_budget", id=1, tokens="", available=0,
                                    budget=8)[:8]) for line in lines)


# -- 4. a preset run by another scheduler says so, and a switch says it restarted --------------------------------

def test_a_twin_preset_under_the_article_scheduler_names_it_in_title_story_and_header(app):
    app.query_params.update(scenario="vllm_resume_cached", scheduler="article", frame="1")
    app.run()
    message = player_message(app)
    assert message["title"].endswith("decided here by the article's scheduler")
    assert "decided by the article's scheduler" in message["model"]
    story = next(m.value for m in app.sidebar.markdown if "Decided by the vLLM twin" in m.value)
    assert story.startswith("This preset's story tells the decisions of the vLLM twin")


def test_switching_the_scheduler_at_frame_9_says_the_run_restarted(app):
    app.query_params.update(scenario="vllm_resume_cached", frame="9")
    app.run()
    app.radio(key="scheduler_choice").set_value("article").run()
    assert app.session_state["lab"].cursor == 0
    said = " ".join(str(getattr(e, "value", "")) for e in (*app.info, *app.warning, *app.success, *app.toast))
    assert "started again from frame 0 (you were at frame 9)" in said


# -- 5. settings the twin ignores cannot branch the run; the caption says what the victim follows -----------------

def test_the_articles_own_settings_are_not_offered_under_the_twin_and_the_caption_names_the_victims_rule(app):
    app.query_params.update(scenario="vllm_resume_cached", frame="3")
    app.run()
    keys = {w.key for w in (*app.sidebar.selectbox, *app.sidebar.toggle)}
    for field in ("prefill_first", "preemption_policy", "mixed_batches"):
        assert not scheduler_info("vllm").reads(field) and f"cfg_{field}" not in keys
    assert not control(app, "max_num_seqs").disabled and "max_num_seqs" not in scheduler_info("article").ignored
    caption = " ".join(c.value for c in app.sidebar.caption)
    assert "= smart" not in caption and "the tail of the running queue under fcfs" in caption


# -- 6. 06_priority's story holds under the twin -------------------------------------------------------------------

def test_06_priority_says_when_the_twins_vip_waits_and_is_admitted():
    engine = preset_run("06_priority", "vllm")
    vip = 6
    waited = [f.step for f in engine.frames if any(e.seq_id == vip for e in f.events_of("blocked"))]
    admitted = next(f.step for f in engine.frames if any(e.seq_id == vip for e in f.events_of("admitted")))
    scenario = load_scenario(SCENARIOS_DIR / "06_priority.toml")
    story, story_zh = " ".join(scenario.narrative_in("en").split()), scenario.narrative_in("zh")
    assert f"from step {waited[0]} to step {waited[-1]} and is admitted at step {admitted}" in story
    assert f"从第 {waited[0]} 步到第 {waited[-1]} 步在队首等待，到第 {admitted} 步" in story_zh
    assert "under the article's scheduler the VIP gets its first token right away" in story


# -- 7. Chinese: the null block is not an "empty" block -------------------------------------------------------------

def test_chinese_names_vllms_null_block_apart_from_empty_blocks():
    null_block = [key for key in ("vllm.pool_reserved", "vllm.block_reserved", "vllm.null_block")]
    assert all("空块" not in CATALOGUES["zh"][key] and "占位块" in CATALOGUES["zh"][key] for key in null_block)
    title = text("zh", "player.pool_title.blocks", size="", reserved="", used=1, cached=1, empty=7,
                 units=text("zh", "player.pool_units.block"))
    assert "7 个空块" in title  # empty blocks keep the word
    for name in ("vllm_resume_cached", "vllm_vs_article", "vllm_pool_too_small"):
        scenario = load_scenario(SCENARIOS_DIR / f"{name}.toml")
        assert "空块" not in scenario.narrative_in("zh") + "".join(k.note_in("zh") for k in scenario.key_frames)


# -- 8. async scheduling: said once, by vLLM's name ----------------------------------------------------------------

@pytest.mark.parametrize("lang", LANGS)
def test_the_overlap_caption_names_the_mode_once_and_as_vllm_calls_it(lang):
    catalogue = CATALOGUES[lang]
    assert all("--async-scheduling" in catalogue[key] for key in ("stage.mode_overlap", "sidebar.overlap"))
    mode = catalogue["stage.mode_overlap"].split("（")[0].split(" (")[0].strip(" ·")
    assert mode not in catalogue["player.overlapped"]


# -- 9. an offline player exported at frame 6 offers no key frame past it -------------------------------------------

def test_an_offline_player_offers_only_the_key_frames_it_holds():
    engine = Engine(load_scenario(SCENARIOS_DIR / "vllm_resume_cached.toml").spec)
    engine.run(6)
    key_frames = [[1, "a", True], [6, "b", True], [7, "c", True], [9, "d", True]]
    message = run_message("run", engine.frames, key_frames, lang="en")
    assert [k[0] for k in message["key_frames"]] == [1, 6]


# -- 10. the words ---------------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def resumed():
    return preset_run("vllm_resume_cached", "vllm")


def test_free_blocks_never_read_as_a_step_number(resumed):
    line = narrate(resumed.frames[6], resumed.frames[5], lang="en")[1]
    assert line == "KV blocks free: 0 at the start of this step, 2 after it (of 6)."
    assert not re.search(r"step \d", line)


@pytest.mark.parametrize("lang", LANGS)
def test_a_one_token_chunk_and_one_freed_block_are_told_in_the_singular(resumed, lang):
    frame = resumed.frames[1]
    chunk = describe(ChunkScheduled(0, 0, 1, 10), frame, lang=lang)
    assert "0–0" not in chunk and "0-0" not in chunk
    preempted = describe(Preempted(1, 0, "tail", (2,)), frame, lang=lang)
    if lang == "en":
        assert chunk.startswith("Request 0 prefilled a chunk: token 0 of 10;")
        assert "block 2 freed" in preempted and "blocks 2" not in preempted
    else:
        assert "第 0 个 token，共 10 个" in chunk


def test_one_paused_request_has_its_decode_paused():
    assert CATALOGUES["en"]["narrate.sat_out.prefill.one"].endswith("so its decode pauses for it.")
    zh = CATALOGUES["zh"]
    assert "再要一个块" not in zh["narrate.preempted.self_tail"] + zh["narrate.preempted.self"]


@pytest.mark.parametrize("lang", LANGS)
def test_the_articles_running_prefill_that_gets_no_chunk_says_why(versus, lang):
    article = preset_run("vllm_vs_article", "article")
    line = narrate(article.frames[7], article.frames[6], lang=lang)[-1]
    expected = {"en": "Request 2 was running but not scheduled in this step: its next prompt chunk (2 tokens) needs "
                      "1 block it does not hold yet; 0 were free at the start of this step.",
                "zh": "请求 2 在运行，但本步没有被调度：它提示词的下一段（2 个 token）还需要 1 个块，"
                      "而本步开始时空闲块为 0 个。"}
    assert line == expected[lang]


def test_the_vs_article_story_does_not_say_vllm_never_pauses_a_decode():
    scenario = load_scenario(SCENARIOS_DIR / "vllm_vs_article.toml")
    assert "never pauses a decode" not in " ".join(scenario.narrative_in("en").split())
    assert "从不为了预填充而暂停解码" not in scenario.narrative_in("zh")


def test_chinese_watermark_wait_has_no_space_inside_a_chinese_phrase():
    """vllm_knobs under watermark 0.1, step 3: 4 waits for the watermark; its Chinese reads "仍有 1 个块保持空闲", no
    space between the count's 块 and 保持 (a space goes only between Chinese and a Latin word or a number)."""
    from engine.analysis.compare import compare, variants_for
    from viz.narrate import narrate

    spec = load_scenario(SCENARIOS_DIR / "vllm_knobs.toml").spec
    _, watermark = compare(variants_for("watermark 0 vs 0.1 (vLLM)", spec.config, "zh", "vllm"), spec.workload,
                           seed=spec.seed, cost=spec.cost)
    said = " ".join(narrate(watermark.frames[3], watermark.frames[2], lang="zh"))
    assert "watermark=0.1 时" in said and "1 个块保持空闲" in said


def test_english_watermark_wait_agrees_with_one_block():
    """vllm_knobs under watermark 0.1, step 3: 4 waits for the watermark, which keeps 1 block free; the English said
    "only if 1 block stay free after it"."""
    from engine.analysis.compare import compare, variants_for
    from viz.narrate import narrate

    spec = load_scenario(SCENARIOS_DIR / "vllm_knobs.toml").spec
    _, watermark = compare(variants_for("watermark 0 vs 0.1 (vLLM)", spec.config, "en", "vllm"), spec.workload,
                           seed=spec.seed, cost=spec.cost)
    said = " ".join(narrate(watermark.frames[3], watermark.frames[2], lang="en"))
    assert "block stay" not in said and "only if it leaves 1 block free" in said
