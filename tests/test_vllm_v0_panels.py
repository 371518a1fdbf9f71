"""The V0 twin's panels in the generic shapes (scheduler/vllm_v0/panels.py): the step's card holds the
SchedulingBudget V0 built that step, number for number (a spy on the twin's own budget objects), the step's phase
and the reason V0 had for it (read back from the queues and events of the frames), the chunked prefill's partial
prefills; the watermark on the GPU pool is the block manager's; both said in both languages; and a trace whose shaped
panel is not its shape or says words the catalogues lack is refused."""

import json
from dataclasses import replace

import pytest

import scheduler.vllm_v0.scheduler as v0_scheduler
from engine.inputs.scenario import SCENARIOS_DIR, load_scenario
from engine.run.engine import Engine
from engine.run.recipe import Change
from engine.traces.trace import TRACE_VERSION, TraceError, read_trace, trace_dict
from i18n import text
from player.assets import PLAYER_DIR
from scheduler.contract import GPU_POOL
from scheduler.factory import SCHEDULERS
from scheduler.panel_shapes import Card, Mark, PoolMarks, Said
from scheduler.vllm_v0.budget import PartialPrefillMetadata, SchedulingBudget
from scheduler.vllm_v0.panels import STEP_PANEL, WATERMARK_PANEL
from viz.panels import BUILDERS, panel_views

PRESETS = ("vllm_v0_swap_vs_recompute", "vllm_v0_watermark", "vllm_v0_one_free_block_vs_v1",
           "vllm_v0_priority_inversion")


@pytest.fixture
def budgets(monkeypatch):
    """Every SchedulingBudget the twin builds, in order (one per schedule())."""
    built = []

    class Spied(SchedulingBudget):
        def __init__(self, *args):
            super().__init__(*args)
            built.append(self)

    monkeypatch.setattr(v0_scheduler, "SchedulingBudget", Spied)
    return built


def _run(name: str, steps: int | None = None, **config) -> Engine:
    spec = load_scenario(SCENARIOS_DIR / f"{name}.toml").spec
    engine = Engine(replace(spec, config=replace(spec.config, **config)))
    engine.run(steps)
    return engine


@pytest.mark.parametrize("name", PRESETS)
def test_the_card_holds_the_budget_v0_built_at_each_step(budgets, name):
    engine = _run(name)
    frames = [engine.frames[k] for k in range(len(engine.frames))]
    assert len(budgets) == len(frames) - 1 > 5
    for frame, budget in zip(frames[1:], budgets, strict=True):
        card = frame.panel(STEP_PANEL.id)
        assert [(m.used, m.limit) for m in card.meters] == [(budget.num_batched_tokens, budget.token_budget),
                                                            (budget.num_curr_seqs, budget.max_num_seqs)]
        assert any(line.key.endswith(".cached") for line in card.lines) == (budget.num_cached_tokens > 0)
        views = {lang: dict(panel_views(frame, None, lang))[STEP_PANEL.id] for lang in ("en", "zh")}
        assert [m[1:3] for m in views["en"]["meters"]] == [[m.used, m.limit] for m in card.meters]
        assert views["en"]["meters"][0][0] == \
            f"num_batched_tokens: {budget.num_batched_tokens} of {budget.token_budget} (token_budget)"
        assert views["zh"]["meters"][1][0].startswith(f"num_curr_seqs：{budget.num_curr_seqs} / {budget.max_num_seqs}")


def _reasons(frame) -> list[str]:
    return [line.key.removeprefix("vllm_v0.panel.") for line in frame.panel(STEP_PANEL.id).lines]


@pytest.mark.parametrize("name", PRESETS)
def test_each_step_says_whether_it_prefilled_and_why_not(name):
    engine = _run(name)
    for k in range(1, len(engine.frames)):
        frame, before = engine.frames[k], engine.frames[k - 1]
        swapped, (phase, *_) = before.queue("swapped"), _reasons(frame)
        admitted = len(frame.events_of("admitted"))
        if admitted:
            assert phase == "phase.prefills_admitted" and frame.batch.kind == "prefill"
            assert frame.panel(STEP_PANEL.id).lines[0].values["n"] == admitted
        elif swapped:
            assert phase == "phase.swapped_waiting"
            assert frame.panel(STEP_PANEL.id).lines[0].values["head"] == swapped[0]
        else:
            assert phase == "phase.no_prefill_admitted"
    told = [k for k in range(1, len(engine.frames)) if _reasons(engine.frames[k])[0] == "phase.swapped_waiting"]
    assert bool(told) == (name == "vllm_v0_swap_vs_recompute")


def test_a_step_that_preempted_says_it_swapped_nothing_in(tmp_path):
    """The swap preset on 6 GPU blocks and 8 CPU ones: request 2 swapped out, then a preemption while it waits."""
    text_ = (SCENARIOS_DIR / "vllm_v0_swap_vs_recompute.toml").read_text().split("[[key_frames]]")[0]
    path = tmp_path / "tight.toml"
    path.write_text(text_.replace("num_kvcache_blocks = 7", "num_kvcache_blocks = 6")
                    .replace("num_cpu_blocks = 4", "num_cpu_blocks = 8"))
    engine = load_scenario(path).engine()
    engine.run()
    said = []
    for k in range(1, len(engine.frames)):
        frame, swapped = engine.frames[k], engine.frames[k - 1].queue("swapped")
        lines = frame.panel(STEP_PANEL.id).lines
        no_swap_in = [line.values["id"] for line in lines if line.key == "vllm_v0.panel.no_swap_in"]
        assert no_swap_in == ([swapped[0]] if swapped and frame.events_of("preempted") else [])
        said += no_swap_in
    assert said  # the case arose


def test_chunked_prefill_says_its_one_budget_and_marks_each_partial_prefills_share(budgets, monkeypatch):
    slots = []

    class Spied(PartialPrefillMetadata):
        def __init__(self, *args):
            super().__init__(*args)
            slots.append(self.schedulable_prefills)

    monkeypatch.setattr(v0_scheduler, "PartialPrefillMetadata", Spied)
    config = load_scenario(SCENARIOS_DIR / "vllm_v0_swap_vs_recompute.toml").spec.config
    v0 = replace(config.of(SCHEDULERS["vllm_v0"].info.settings), max_num_partial_prefills=2,
                 max_long_partial_prefills=2)
    engine = _run("vllm_v0_swap_vs_recompute", 8, chunked_prefill=True, max_num_batched_tokens=8,
                  sections=(v0,))
    assert len(slots) == len(budgets) == 8 and max(slots) == 2
    for k, (partial, budget) in enumerate(zip(slots, budgets, strict=True), 1):
        card = engine.frames[k].panel(STEP_PANEL.id)
        assert card.title.key == "vllm_v0.panel.title.chunked" and _reasons(engine.frames[k])[0] == "phase.one_budget"
        assert card.lines[1] == Said("vllm_v0.panel.partial", {"n": partial, "max": 2})
        marks = card.meters[0].marks
        assert [m.at for m in marks] == ([budget.token_budget // partial] if partial >= 2 else [])


def test_a_step_after_chunked_prefill_is_turned_off_says_no_partial_prefills():
    engine = _run("vllm_v0_swap_vs_recompute", 2, chunked_prefill=True, max_num_batched_tokens=8)
    engine.change(Change.config(2, {"chunked_prefill": False, "max_num_batched_tokens": 64}))
    engine.run(3)
    keys = [[line.key for line in engine.frames[k].panel(STEP_PANEL.id).lines] for k in (2, 3)]
    assert "vllm_v0.panel.partial" in keys[0] and not any(key.endswith("partial") for key in keys[1])
    assert engine.frames[3].panel(STEP_PANEL.id).title.key == "vllm_v0.panel.title.default"


def test_the_watermark_is_the_block_managers_on_every_frame():
    engine = _run("vllm_v0_watermark")
    bm = engine.scheduler.block_manager
    assert (bm.watermark_blocks, bm.num_total_gpu_blocks) == (2, 200)
    expected = PoolMarks(GPU_POOL, (Mark(198, Said("vllm_v0.panel.watermark", {"n": 2, "at": 198, "total": 200})),))
    assert all(engine.frames[k].panel(WATERMARK_PANEL.id) == expected for k in range(1, len(engine.frames)))
    later = engine.frames[3].events_of("blocked")
    assert [e.watermark for e in later] == [2]  # the number admission decided by is the one drawn
    views = {lang: dict(panel_views(engine.frames[3], None, lang))[WATERMARK_PANEL.id] for lang in ("en", "zh")}
    assert views["en"] == {"shape": "pool_marks", "pool": GPU_POOL, "marks": [
        [198, "watermark: admission and swap-in leave 2 of 200 blocks free (the line: 198 in use)"]]}
    assert views["zh"]["marks"] == [[198, text("zh", "vllm_v0.panel.watermark", n=2, at=198, total=200)]]


def test_no_watermark_no_mark():
    """7 blocks: int(0.01 x 7) = 0 blocks kept free, and nothing is drawn on the pool."""
    engine = _run("vllm_v0_swap_vs_recompute")
    assert engine.scheduler.block_manager.watermark_blocks == 0
    assert not any(WATERMARK_PANEL.id in engine.frames[k].panels for k in range(len(engine.frames)))


def test_only_v0_declares_shaped_panels_today():
    """vLLM V1 and SGLang keep their own renderers and mark no pool (V1's watermark, 0 by default, is told in its
    narration when it holds a request back; SGLang's budget is in its tree panel)."""
    shaped = {kind: [p.shape for p in cls.info.panels if p.shape] for kind, cls in SCHEDULERS.items()}
    assert {kind for kind, shapes in shaped.items() if shapes} == {"vllm_v0"}
    assert shaped["vllm_v0"] == [Card, PoolMarks]


def test_v0s_panels_have_no_code_of_their_own_outside_its_package():
    """Issue 42's "a kind owns its panel": V0's are drawn by the generic shapes; no builder in viz/panels.py, no
    renderer or word of player/ names them (their words are the catalogues' `vllm_v0.panel.*`)."""
    player_files = [path.read_text() for path in PLAYER_DIR.iterdir() if path.suffix in (".js", ".css", ".py")]
    for panel in SCHEDULERS["vllm_v0"].info.panels:
        assert panel.shape is not None and panel.id not in BUILDERS
        assert not any(panel.id in source for source in player_files)


def test_a_trace_with_a_card_that_is_not_one_or_says_unknown_words_is_refused():
    engine = _run("vllm_v0_watermark")
    data = trace_dict(engine)
    store, _ = read_trace(json.dumps(data))
    assert store[3].panels == engine.frames[3].panels
    data["frames"][3]["panels"][STEP_PANEL.id]["lines"][0][0] = "vllm_v0.panel.no_such_words"
    with pytest.raises(TraceError) as refused:
        read_trace(json.dumps(data))
    assert "frames[3].panels.v0_step" in str(refused.value) and "no_such_words" in str(refused.value)
    data["frames"][3]["panels"][STEP_PANEL.id] = {"title": "a card?"}
    with pytest.raises(TraceError, match="card"):
        read_trace(json.dumps(data))
    del data["frames"][3]["panels"][STEP_PANEL.id]
    data["frames"][3]["panels"][WATERMARK_PANEL.id]["marks"][0][2] = {"total": 200}  # a value the words lack
    with pytest.raises(TraceError, match="v0_watermark"):
        read_trace(json.dumps(data))


def test_a_version_4_trace_with_v0s_plain_step_data_opens_without_it():
    """Before the card, V0 recorded its step as plain data under `v0_step` (drawn by no player), in version 4."""
    engine = _run("vllm_v0_watermark")
    data = trace_dict(engine)
    assert data["version"] == TRACE_VERSION == 5
    data["version"] = 4
    data["frames"][3]["panels"] = {STEP_PANEL.id: {"phase": "prefill", "num_batched_tokens": 12}}
    store, _ = read_trace(json.dumps(data))
    assert STEP_PANEL.id not in store[3].panels
    assert store[4].panels == {}  # nor a later frame's: a version 4 trace had no shaped panel
