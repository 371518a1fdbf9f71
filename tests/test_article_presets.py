"""The "as in the article" presets against the InfraTech notebook's own frames, frame 1 to its last.

tests/data/notebook_frames.json was recorded by running the notebook's own cells in a Jupyter kernel (its header
says how): per demo, its prompts, how many times its cell stepped the engine, and per drawn frame the two panels
(executing, waiting: request ids and lengths), the scheduler's queues, free blocks and block tables.
tests/data/demo2_without_bug_frames.json is demo 2 with the bug fixed, which the notebook never ran (its header
says how it was made).
"""

import json
from dataclasses import replace
from pathlib import Path

import pytest

from engine.inputs import notebook
from engine.inputs.notebook import DEMOS, NotebookDraws, notebook_config, notebook_panels, notebook_prompts
from engine.inputs.scenario import SCENARIOS_DIR, ScenarioError, load_scenario
from engine.run.runner_factory import make_runner
from scheduler import Config, ConfigError, SamplingParams, Sequence
from scheduler.article import Scheduler

DATA = Path(__file__).parent / "data"
NOTEBOOK = json.loads((DATA / "notebook_frames.json").read_text())
WITHOUT_BUG = json.loads((DATA / "demo2_without_bug_frames.json").read_text())["frames"]
PRESETS = {1: "article_1_prefill_first", 2: "article_2_preemption", 3: "article_3_decode_first"}


def test_the_draws_replay_what_the_notebook_printed():
    draws = NotebookDraws()
    assert draws.prompt() == [193, 836, 764, 708, 360, 10]  # its example prompt
    assert [draws.token(), draws.token()] == [722, 276]  # its fake model tried on two sequences
    # its scheduler test: the two requests' first generated tokens, drawn alternately
    assert [draws.token() for _ in range(4)] == [753, 803, 598, 69]


def test_the_replay_steps_each_engine_as_often_as_the_notebook():
    """Each demo's prompts depend on how many tokens the engines before it drew, so on these counts."""
    assert NOTEBOOK["static_figure_steps"] == notebook.STATIC_FIGURE_STEPS
    for demo in NOTEBOOK["demos"].values():
        assert demo["engine_steps"] == len(demo["frames"]) == notebook.STEPS_PER_ANIMATION
        assert [row["frame"] for row in demo["frames"]] == list(range(1, notebook.STEPS_PER_ANIMATION + 1))


@pytest.mark.parametrize("demo", PRESETS)
def test_the_prompts_are_the_notebooks(demo):
    assert notebook_prompts(demo) == NOTEBOOK["demos"][str(demo)]["prompts"]


@pytest.mark.parametrize("demo", PRESETS)
def test_each_preset_runs_the_settings_its_prompts_were_replayed_with(demo):
    """The replay steps each demo with the bug on; only demo 2 shows it (no other prefill exceeds a block)."""
    config = load_scenario(SCENARIOS_DIR / f"{PRESETS[demo]}.toml").spec.config
    assert config.value("notebook_block_bug") == (demo == 2)
    assert replace(config, notebook_block_bug=True) == notebook_config(DEMOS[demo])


def _as_notebook_draws_it(frame, scenario) -> dict:
    """A frame of this run (None: after its end) in the recorded frames' terms."""
    panels = notebook_panels(frame)
    running = list(frame.running) if frame else []
    return {"executing": [list(p) for p in panels.executing], "waiting": [list(p) for p in panels.waiting],
            "running_queue": running, "waiting_queue": [i for i, _ in panels.waiting if i not in running],
            "free_blocks": frame.metrics.num_free_blocks if frame else scenario.spec.config.num_kvcache_blocks,
            "block_tables": {str(i): list(frame.requests[i].block_table) for i in running} if frame else {}}


@pytest.mark.parametrize("demo", PRESETS)
def test_each_article_preset_draws_the_notebooks_frames(demo):
    scenario = load_scenario(SCENARIOS_DIR / f"{PRESETS[demo]}.toml")
    engine = scenario.engine()
    assert engine.run() == "finished"
    problems = []
    for row in NOTEBOOK["demos"][str(demo)]["frames"]:
        k = row["frame"]
        observed = _as_notebook_draws_it(engine.frames[k] if k < len(engine.frames) else None, scenario)
        problems += [f"frame {k}: {key} is {observed[key]}, the notebook's {row[key]}"
                     for key in observed if observed[key] != row[key]]
    assert not problems, "\n".join(problems)


def test_the_late_requests_are_waiting_in_the_notebooks_frame_19():
    """The notebook queues them at the end of step 19, and so does the engine: frame 19 shows them waiting, before
    any step runs them."""
    scenario = load_scenario(SCENARIOS_DIR / "article_1_prefill_first.toml")
    engine = scenario.engine()
    engine.run(steps=20)
    assert list(engine.frames[19].waiting) == [5, 6, 7]
    assert [i for i, _ in notebook_panels(engine.frames[19]).waiting] == [5, 6, 7]
    assert list(engine.frames[19].batch.seq_ids) == [4] and list(engine.frames[20].batch.seq_ids) == [5, 6, 7]


def _ids(frame, kind):
    return sorted({e.seq_id for e in frame.events_of(kind)})


def _observed(frame) -> dict:
    return {"kind": frame.batch.kind, "batch": list(frame.batch.seq_ids), "waiting": list(frame.waiting),
            "running": list(frame.running), "admitted": _ids(frame, "admitted"),
            "preempted": _ids(frame, "preempted"), "finished": _ids(frame, "finished"),
            "free_blocks": frame.metrics.num_free_blocks,
            "block_tables": {str(r.id): list(r.block_table) for r in frame.requests if r.block_table},
            "lengths": {str(r.id): r.num_tokens for r in frame.requests if r.status == "running"}}


def _expected(row: dict) -> dict:
    return {k: row[k] for k in ("kind", "batch", "waiting", "running", "admitted", "preempted", "finished",
                                "free_blocks", "block_tables", "lengths")}


def test_without_the_bug_demo_2_makes_the_corrected_decisions():
    engine = load_scenario(SCENARIOS_DIR / "article_2_preemption.toml").engine(variant=True)
    assert engine.run() == "finished"
    problems = []
    for row in WITHOUT_BUG:
        if row["frame"] >= len(engine.frames):
            problems += [f"frame {row['frame']}: this run has ended"] if row["kind"] != "idle" else []
            continue
        observed, expected = _observed(engine.frames[row["frame"]]), _expected(row)
        problems += [f"frame {row['frame']}: {k} is {observed[k]}, the corrected run's {expected[k]}"
                     for k in expected if observed[k] != expected[k]]
    assert not problems, "\n".join(problems)
    with_bug = NOTEBOOK["demos"]["2"]["frames"]
    assert WITHOUT_BUG[3]["batch"] != [i for i, _ in with_bug[3]["executing"]]  # frame 4: the recompute waits


def test_the_article_frames_open_at_the_same_numbers():
    """The frames the article names: "frame 19" of demo 1 and "frame 9" of demo 2."""
    demo1 = load_scenario(SCENARIOS_DIR / "article_1_prefill_first.toml").engine()
    demo1.run(steps=20)
    assert list(demo1.frames[19].batch.seq_ids) == [4] and _ids(demo1.frames[20], "admitted") == [5, 6, 7]
    demo2 = load_scenario(SCENARIOS_DIR / "article_2_preemption.toml").engine()
    demo2.run(steps=9)
    assert demo2.frames[9].batch.kind == "prefill" and list(demo2.frames[9].running) == [0, 1, 3]


# -- the notebook's block-size bug ----------------------------------------------------------------------

def _bug_config(**changes) -> Config:
    return Config(**{"max_num_seqs": 3, "max_num_batched_tokens": 64, "max_model_len": 16, "num_kvcache_blocks": 3,
                     "kvcache_block_size": 10, "enable_prefix_caching": False, "notebook_block_bug": True,
                     **changes})


def test_with_the_bug_a_prefill_gets_one_block_however_long():
    scheduler = Scheduler(_bug_config())
    seq = Sequence(list(range(1, 13)), SamplingParams(max_tokens=3), seq_id=0)
    scheduler.add(seq)
    scheduler.schedule()
    assert len(seq.block_table) == 1  # 12 tokens in one block of 10
    scheduler.postprocess([seq], [7])
    scheduler.schedule()  # decodes position 12: not the first slot of a block, so no new block
    assert len(seq.block_table) == 1
    correct = Scheduler(_bug_config(notebook_block_bug=False))
    other = Sequence(list(range(1, 13)), SamplingParams(max_tokens=3), seq_id=1)
    correct.add(other)
    correct.schedule()
    assert len(other.block_table) == 2


@pytest.mark.parametrize("field, value", [("enable_prefix_caching", True), ("chunked_prefill", True),
                                          ("mixed_batches", True), ("num_speculative_tokens", 2)])
def test_the_bug_is_refused_with_what_the_notebook_lacks(field, value):
    with pytest.raises(ConfigError, match=field) as error:
        _bug_config(**{field: value})
    assert error.value.field == "notebook_block_bug"


def test_the_bug_is_refused_on_the_real_model():
    with pytest.raises(ConfigError, match="fake model"):
        make_runner("model", _bug_config())


def _notebook_scenario(tmp_path, kind: str, extra: str) -> Path:
    path = tmp_path / "s.toml"
    path.write_text('title = "t"\nnarrative = "n"\n[config]\nmax_model_len = 16\nmax_num_batched_tokens = 64\n'
                    f'[[workload.generate]]\nkind = "{kind}"\n{extra}\n')
    return path


@pytest.mark.parametrize("extra, key, fix", [("demo = 4", "workload.generate[0].demo", "demos 1, 2, 3"),
                                             ("demo = 1\ncount = 3", "workload.generate[0].count", "unknown key")])
def test_a_bad_notebook_workload_names_the_key(tmp_path, extra, key, fix):
    path = _notebook_scenario(tmp_path, "notebook", extra)
    with pytest.raises(ScenarioError) as error:
        load_scenario(path)
    assert error.value.key == key and fix in str(error.value)


def test_a_file_naming_the_notebooks_workload_by_the_articles_kind_still_opens(tmp_path):
    """Files written before the workload had its own name (`kind = "article"`, the kind that declares it) open
    with the same requests."""
    old, new = (load_scenario(_notebook_scenario(tmp_path, kind, "demo = 2")) for kind in ("article", "notebook"))
    assert old.spec_for().workload == new.spec_for().workload == tuple(notebook.notebook_requests(2))


def test_the_player_is_told_of_the_overfull_block_only_with_the_bug():
    from viz.frame_payload import overfull_blocks, stage_view

    scenario = load_scenario(SCENARIOS_DIR / "article_2_preemption.toml")
    buggy, correct = scenario.engine(), scenario.engine(variant=True)
    buggy.run(steps=5)
    correct.run(steps=5)
    assert overfull_blocks(buggy.frames[3]) == {}  # before the recompute
    frame = buggy.frames[4]  # request 2 recomputed: 11 tokens in its one block
    block = frame.requests[2].block_table[0]
    assert overfull_blocks(frame) == {block: 11}
    assert stage_view(frame, lang="en")["overfull"] == [[block, 11]]
    assert overfull_blocks(buggy.frames[5]) == {block: 12}
    assert all(not overfull_blocks(correct.frames[k]) for k in range(6))
    assert stage_view(correct.frames[4], lang="en")["overfull"] == []


def test_free_queue_expectations_compare_in_order_and_block_tables_by_request():
    from engine.inputs.key_frames import KeyFrame

    engine = load_scenario(SCENARIOS_DIR / "prefix_caching_vllm_doc.toml").engine()
    engine.run(steps=6)
    frame = engine.frames[6]
    assert KeyFrame(6, "", {"free_queue": [7, 8, 9, 4, 3, 2, 6, 5, 1, 0]}).mismatches(frame) == []
    assert KeyFrame(6, "", {"free_queue": sorted(range(10))}).mismatches(frame)  # same blocks, other order
    assert KeyFrame(4, "", {"block_tables": {"1": [0, 1, 5, 6]}}).mismatches(engine.frames[4])  # request 0 too


def test_the_articles_frame_opens_by_link_in_the_app(monkeypatch):
    from tests.helpers.app import fake_model_app, lab, no_errors, player_message, shown_view

    app = fake_model_app(monkeypatch)
    app.query_params["scenario"] = "article_2_preemption"
    app.query_params["frame"] = "9"
    app.run()
    assert no_errors(app) and lab(app).cursor == 9
    frame = lab(app).frame
    assert list(frame.batch.seq_ids) == [3] and list(frame.running) == [0, 1, 3]
    assert shown_view(app)["running"] == [0, 1, 3] and player_message(app)["cursor"] == 9
    notes = {step: note for step, note, _holds in player_message(app)["key_frames"]}
    assert "frame 9" in notes[9]  # the key frame's note about the article's frame 9


def test_the_bug_opens_on_the_fake_model_even_when_the_session_runs_the_real_one():
    from session.lab import Lab, RunInputs

    scenario = load_scenario(SCENARIOS_DIR / "article_2_preemption.toml")
    inputs = RunInputs.from_scenario(scenario, "model")
    assert inputs.runner == "fake"
    assert RunInputs.from_scenario(scenario, "model", variant=True).runner == "model"  # no bug: the real model
    lab = Lab(inputs)
    lab.run(4)
    assert lab.frame.step == 4 and list(lab.frame.batch.seq_ids) == [2]
