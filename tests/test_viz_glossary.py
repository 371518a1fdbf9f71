"""The page's words: settings in plain labels, a request's progress, what a mid-run change does."""

from dataclasses import replace

import pytest

from engine.inputs.scenario import SCENARIOS_DIR, load_scenario
from engine.run.engine import Engine
from engine.run.recipe import Request, RunSpec
from i18n import text
from scheduler import Config
from viz.glossary import SETTING_FIELDS, changed_settings, legend, player_legend, setting, variant_label
from viz.texts import branch_notice, pending_change, progress_text, request_texts, title_in_effect


def test_every_setting_has_a_label_and_help_and_the_legend_explains_the_shorthand():
    from scheduler.factory import SETTINGS
    assert set(SETTINGS) - set(SETTING_FIELDS) == {"eos"}  # every kind's own too, by the ids each declares
    for lang in ("en", "zh"):
        assert all(setting(f, lang).label and len(setting(f, lang).help) > 20 for f in SETTING_FIELDS)
    assert "n-gram" not in setting("prompt_lookup_min", lang="en").label
    shown = {entry.shown for entry in legend(lang="en")}
    assert {"ID:3 (L:12)", "8/16", "block 5 ×3"} <= shown


def test_a_request_stopped_by_max_model_len_says_so_beside_its_progress():
    engine = load_scenario(SCENARIOS_DIR / "01_prefill_first.toml").engine()
    engine.run()
    frame = engine.frames[-1]
    stopped = next(t for t in request_texts(frame, lang="en") if t.status == "finished (max_model_len)")
    text = progress_text(stopped, frame.config.max_model_len, lang="en")
    assert text.startswith(f"{stopped.num_output_tokens}/16 tokens") and "stopped at max_model_len=15" in text


def test_variant_labels_and_changes_read_as_words():
    assert variant_label({"chunked_prefill": True, "max_num_batched_tokens": 64}, lang="en") == (
        "chunked prefill on, token budget per step (max_num_batched_tokens) 64")
    start = Config(num_kvcache_blocks=3, kvcache_block_size=10, max_model_len=15, max_num_batched_tokens=64)
    now = replace(start, num_kvcache_blocks=6, prefill_first=False)
    assert changed_settings(start, now, lang="en") == ["KV blocks in the pool 6 (was 3)",
                                                       "step order decode first (was prefill first)"]
    engine = Engine(RunSpec(start, [Request(0, prompt_token_ids=(1, 2, 3), max_tokens=2)]))
    engine.run(1)
    shown = engine.frames[1]
    assert pending_change(shown, start, lang="en") is None
    assert "The KV pool is rebuilt then (6 blocks of 10 tokens)" in pending_change(shown, now, lang="en")
    assert "rebuilt" not in pending_change(shown, replace(start, prefill_first=False), lang="en")
    assert title_in_effect("T", start, now, ignore=("prefill_first",), lang="en") == (
        "T · now with KV blocks in the pool 6 (the scenario's: 3)")
    assert branch_notice(2, 3, lang="en") == ("Branched at frame 2: frame 3 of the old run discarded; the run goes on "
                                              "from frame 2 under the new settings.")


@pytest.mark.parametrize("lang, counted", [("en", "7 {word}"), ("zh", "7 个{word}")])
def test_the_pool_legends_blank_block_is_named_as_the_kv_cache_title_counts_it(lang, counted):
    """The KV cache's title counts "7 empty" blocks beside the cached-free ones (both free): the legend's blank box
    says "empty" too, not "free", which the narration's free blocks (cached ones too) would contradict."""
    blank = dict(player_legend(lang)["pool"])["sw:free"]
    title = text(lang, "player.pool_title.blocks", size="", reserved="", used=1, cached=1, empty=7,
                 units=text(lang, "player.pool_units.block"))
    assert counted.format(word=blank) in title, (blank, title)


@pytest.mark.parametrize("lang, told", [("en", "The KV pool is rebuilt then (40 token slots)"),
                                        ("zh", "届时 KV 缓存池将重建（40 个 token 槽位）")])
def test_a_pool_change_under_the_sglang_twin_is_told_in_token_slots(lang, told):
    engine = load_scenario(SCENARIOS_DIR / "sglang_evicted_prefix.toml").engine()
    engine.run(2)
    shown = engine.frames[2]
    assert told in pending_change(shown, replace(shown.config, num_kvcache_blocks=40), lang=lang)
