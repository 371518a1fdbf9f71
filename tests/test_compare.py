"""Comparisons: independent runs of one workload, the side-by-side numbers and the generated summary."""

from collections.abc import Callable
from dataclasses import replace
from statistics import fmean

import pytest

from engine.analysis.compare import (
    COMPARISONS,
    GENERATED_CONFIG,
    MAX_VARIANTS,
    MIN_VARIANTS,
    ConfigRun,
    Variant,
    compare,
    generated_workload,
    metric_values,
    run_variant,
    same_capacity,
    span_stats,
    variants_for,
)
from engine.run.engine import Engine
from engine.run.metrics import Span, run_metrics
from engine.run.recipe import RUN_BOUNDS, RunSpec
from i18n import text
from scheduler import ConfigError
from viz.compare_words import metric_rows, summary, verdicts

WORKLOAD = generated_workload(n=40, rate=0.5, seed=1)


@pytest.fixture(scope="module")
def prefill_vs_decode():
    progress = []
    runs = compare(variants_for("prefill-first vs decode-first", GENERATED_CONFIG, "en"), WORKLOAD,
                   on_progress=lambda i, label: progress.append((i, label)))
    assert progress == [(0, "prefill-first"), (1, "decode-first")]
    return runs


def test_each_run_is_the_same_as_a_lone_engine(prefill_vs_decode):
    for run in prefill_vs_decode:
        alone = Engine(RunSpec(run.config, WORKLOAD))
        assert alone.run() == run.stop_reason == "finished"
        alone_run = run_metrics(alone.frames)[0]
        assert (alone_run.num_steps, alone_run.sim_time_s, alone_run.mean_ttft.steps) == \
            (run.run.num_steps, run.run.sim_time_s, run.run.mean_ttft.steps)
        assert len(run.fragmentation) == run.run.num_steps


def test_the_variants_differ_only_where_named():
    base = GENERATED_CONFIG
    prefill, decode = variants_for("prefill-first vs decode-first", base, "en")
    assert prefill.config.value("prefill_first") and not decode.config.value("prefill_first")
    assert prefill.config.max_num_seqs == decode.config.max_num_seqs == base.max_num_seqs
    sizes = variants_for("block size 4 vs 16 vs 64", base, "en")
    assert [v.config.kvcache_block_size for v in sizes] == [4, 16, 64]
    assert {v.config.kv_capacity_tokens for v in sizes} == {base.kv_capacity_tokens}
    assert all(len(variants_for(name, base, lang)) >= 2 for name in COMPARISONS for lang in ("en", "zh"))
    plain, speculative = variants_for("speculation off vs on", base, "en")
    assert (plain.config.num_speculative_tokens, speculative.config.num_speculative_tokens) == (0, 4)
    assert replace(speculative.config, num_speculative_tokens=0) == plain.config


def test_same_capacity_keeps_at_least_one_block():
    assert same_capacity(GENERATED_CONFIG.__class__(num_kvcache_blocks=2, kvcache_block_size=4), 64) \
        .num_kvcache_blocks == 1


def test_an_impossible_variant_is_a_config_error():
    tight = GENERATED_CONFIG.__class__(max_num_batched_tokens=16, max_model_len=32, chunked_prefill=True)
    with pytest.raises(ConfigError, match="max_num_batched_tokens"):
        variants_for("whole vs chunked prefill", tight, "en")


def test_compare_wants_as_many_distinct_configs_as_the_table_of_bounds_allows():
    one = Variant("a", GENERATED_CONFIG)
    assert (MIN_VARIANTS, MAX_VARIANTS) == RUN_BOUNDS["variants"] == (2, 6)
    with pytest.raises(ValueError, match="compare 2 to 6 configs, not 1"):
        compare([one], WORKLOAD)
    with pytest.raises(ValueError, match="compare 2 to 6 configs, not 7"):
        compare([one] * 7, WORKLOAD)
    with pytest.raises(ValueError, match="its own name"):
        compare([one, one], WORKLOAD)


def test_span_stats_by_hand():
    spans = [Span(1, 0.01, 0), Span(3, 0.03, 0), None, Span(2, 0.02, 0)]
    stats = span_stats(spans)
    assert stats["mean steps"] == 2 and stats["p50 steps"] == 2 and stats["p99 steps"] == pytest.approx(2.98)
    assert stats["mean ms"] == pytest.approx(20) and stats["p99 ms"] == pytest.approx(29.8)
    assert span_stats([None])["mean steps"] is None


def test_metric_rows_line_the_runs_up(prefill_vs_decode):
    rows = metric_rows(prefill_vs_decode, lang="en")
    by_name = {row["metric"]: row for row in rows}
    prefill, decode = prefill_vs_decode
    assert by_name["steps to finish"] == {"metric": "steps to finish", "prefill-first": prefill.run.num_steps,
                                          "decode-first": decode.run.num_steps}
    assert by_name["preemptions"]["decode-first"] == decode.run.num_preemptions
    for name in ("TTFT p99 ms", "TPOT p50 steps", "queueing delay mean steps", "recomputed tokens",
                 "prefix-cache hit rate (%)", "mean internal fragmentation (%)", "throughput (tokens/s)"):
        assert name in by_name
    ttft = sorted(q.ttft.steps for q in prefill.requests)
    assert metric_values(prefill)["TTFT p50 steps"] == pytest.approx((ttft[19] + ttft[20]) / 2)


def test_summary_states_the_measured_differences(prefill_vs_decode):
    prefill, decode = prefill_vs_decode
    text = summary(prefill_vs_decode, "en")
    assert text.startswith("Against prefill-first, decode-first ")
    ratio = metric_values(decode)["TTFT mean steps"] / metric_values(prefill)["TTFT mean steps"]
    assert ratio >= 1.5  # decode-first lets newcomers wait
    assert f"made the first token wait {ratio:.1f}x longer on average" in text
    finish = decode.run.sim_time_s / prefill.run.sim_time_s
    words = f"{finish:.1f}x later" if finish >= 1.5 else f"{finish - 1:.0%} later"
    assert decode.run.sim_time_s > prefill.run.sim_time_s and f"finished all requests {words}" in text
    assert f"had {decode.run.num_preemptions} preemptions against {prefill.run.num_preemptions}" in text


def test_identical_configs_are_reported_alike():
    runs = compare([Variant("a", GENERATED_CONFIG), Variant("b", GENERATED_CONFIG)], WORKLOAD[:10])
    assert summary(runs, "en") == "b and a performed alike on this workload (within 5%)."


def test_a_run_that_stops_early_is_called_out():
    runs = compare([Variant("a", GENERATED_CONFIG), Variant("b", GENERATED_CONFIG)], WORKLOAD, max_steps=5)
    assert runs[0].stop_reason == "max_steps"
    assert "Not every run finished: a, b stopped early" in summary(runs, "en")


def test_overlap_and_adaptive_comparisons_change_only_their_option():
    sync, over = variants_for("overlap off vs on", GENERATED_CONFIG, "en")
    assert (sync.overlap, over.overlap) == (False, True) and sync.config == over.config
    fixed, adaptive = variants_for("adaptive batch size off vs on", GENERATED_CONFIG, "en")
    assert fixed.adaptive is None and adaptive.adaptive is not None and fixed.config == adaptive.config
    runs = compare([sync, over], WORKLOAD)
    assert [r.engine.requests[i].seq.token_ids for r in runs for i in (0, 7)][:2] == \
        [r.engine.requests[i].seq.token_ids for r in runs for i in (0, 7)][2:]
    assert metric_values(runs[1])["mean step time (ms)"] < metric_values(runs[0])["mean step time (ms)"]
    speculative = replace(GENERATED_CONFIG, num_speculative_tokens=2)
    assert [v.config.num_speculative_tokens for v in variants_for("overlap off vs on", speculative, "en")] == [0, 0]


def test_the_verdict_answers_each_question_with_a_winner(prefill_vs_decode):
    """The policy lab's title asks which policy is better, and when: one answer per question."""
    answers = dict(verdicts(prefill_vs_decode, "en"))
    assert list(answers) == ["first token", "later tokens", "whole workload", "each request's finish step", "memory"]
    ttft = {run.label: fmean(q.ttft.steps for q in run.requests if q.ttft) for run in prefill_vs_decode}
    winner = min(ttft, key=ttft.get)
    assert answers["first token"].startswith(f"{winner} ") and " sooner than " in answers["first token"]
    assert f"{ttft[winner]:.1f} steps" in answers["first token"]
    assert "faster than" in answers["later tokens"] or "alike" in answers["later tokens"]
    assert "ran out of KV blocks least: " in answers["memory"] and "mean KV use" in answers["memory"]


def test_a_verdict_between_equal_runs_says_alike():
    runs = compare([Variant("a", GENERATED_CONFIG), Variant("b", GENERATED_CONFIG)], WORKLOAD[:10])
    answers = dict(verdicts(runs, "en"))
    assert all(answers[q].startswith("alike in every config") for q in ("first token", "later tokens",
                                                                         "whole workload"))


def test_the_verdict_says_alike_on_a_tie_and_names_where_policies_part():
    """Preset 07, tail vs smart: as many preemptions either way (no winner named), but the short request 4 finishes
    sooner under smart preemption, and the verdict says so."""
    from engine.inputs.scenario import SCENARIOS_DIR, load_scenario

    spec = load_scenario(SCENARIOS_DIR / "07_smart_preemption.toml").spec
    runs = compare(variants_for("tail vs smart preemption", spec.config, "en"), spec.workload, seed=spec.seed,
                   cost=spec.cost)
    assert runs[0].run.num_preemptions == runs[1].run.num_preemptions  # the tie the verdict must not break
    answers = dict(verdicts(runs, "en"))
    assert answers["memory"].startswith("alike in every config: 4 preemptions") and "least" not in answers["memory"]
    finish = {run.label: {q.id: q.finish_step for q in run.requests} for run in runs}
    assert finish["smart preemption"][4] < finish["tail preemption"][4]
    assert ("with smart preemption, 1 request(s) finished sooner and 0 later than with tail preemption: "
            f"request 4 (6 tokens) at step {finish['smart preemption'][4]} against {finish['tail preemption'][4]}"
            ) in answers["each request's finish step"]


def made_once() -> Callable[..., ConfigRun]:
    """compare()'s run_variant, making each run once: a variant that differs from one already run only in its label
    is handed that run (a run of the fake model is the same each time it is made)."""
    made = {}

    def run_variant_once(variant: Variant, *inputs) -> ConfigRun:
        key = (replace(variant, label=""), inputs)  # inputs: the workload (a tuple of frozen requests), the settings
        if key not in made:
            made[key] = run_variant(variant, *inputs)
        return made[key]
    return run_variant_once


def test_every_named_comparison_runs_on_every_preset_it_accepts(monkeypatch):
    """The article's presets keep the notebook's block bug (a table's last block fills past its size): the
    block-size comparison once crashed recording them. A preset's comparisons share half their runs (its own config
    is a variant of most), so each run is made once per preset."""
    import engine.analysis.compare
    from engine.inputs.scenario import SCENARIOS_DIR, load_scenario

    for path in sorted(SCENARIOS_DIR.glob("*.toml")):
        spec = load_scenario(path).spec
        monkeypatch.setattr(engine.analysis.compare, "run_variant", made_once())  # this preset's runs only in memory
        for comparison in COMPARISONS:
            try:
                variants = variants_for(comparison, spec.config, "en")
            except ConfigError:  # the lab says why such a comparison cannot run on this preset
                continue
            for variant, run in zip(variants, compare(variants, spec.workload), strict=True):
                assert run.frames, (path.stem, comparison, variant.label)


@pytest.mark.parametrize("lang, said", [("en", "ran out of KV blocks least: 1 preemption (14 tokens recomputed)"),
                                        ("zh", "因 KV 缓存块不足而抢占得最少：抢占 1 次")])
def test_the_memory_answer_counts_one_preemption_in_the_singular(lang, said):
    """vllm_knobs under the vLLM twin, watermark 0 vs 0.1: the watermark run is preempted once, the other twice."""
    from engine.inputs.scenario import SCENARIOS_DIR, load_scenario

    spec = load_scenario(SCENARIOS_DIR / "vllm_knobs.toml").spec
    runs = compare(variants_for("watermark 0 vs 0.1 (vLLM)", spec.config, lang, "vllm"), spec.workload,
                   seed=spec.seed, cost=spec.cost)
    assert said in dict(verdicts(runs, lang))[text(lang, "compare.question.memory")]


@pytest.mark.parametrize("lang, said", [("en", "mean KV use: 56% for watermark 0, 54% for watermark 0.1"),
                                        ("zh", "，而水位线 0 为 2 次（重新计算 20 个 token）；"
                                               "平均 KV 使用率：水位线 0 为 56%、水位线 0.1 为 54%")])
def test_the_memory_answer_says_each_share_apart_from_its_configs_number(lang, said):
    """vllm_knobs under the vLLM twin, watermark 0 vs 0.1: "watermark 0 56%" read as two numbers; the Chinese compares
    with 而, not 对比 (“对比水位线 0 为 2 次”)."""
    from engine.inputs.scenario import SCENARIOS_DIR, load_scenario

    spec = load_scenario(SCENARIOS_DIR / "vllm_knobs.toml").spec
    runs = compare(variants_for("watermark 0 vs 0.1 (vLLM)", spec.config, lang, "vllm"), spec.workload,
                   seed=spec.seed, cost=spec.cost)
    assert said in dict(verdicts(runs, lang))[text(lang, "compare.question.memory")]
