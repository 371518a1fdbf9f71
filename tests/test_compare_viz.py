"""The comparison's figures: one colour per config, every chart on the same step axis, one timeline legend."""

import pytest

from engine.analysis.compare import GENERATED_CONFIG, MAX_VARIANTS, compare, generated_workload, variants_for
from viz.compare import (
    CONFIG_COLORS,
    config_color,
    flat_charts,
    flat_sentence,
    fragmentation_figure,
    key_metrics_figure,
    kv_usage_figure,
    step_range,
    timelines_figure,
    zero_metrics,
)


@pytest.fixture(scope="module")
def runs():
    return compare(variants_for("block size 4 vs 16 vs 64", GENERATED_CONFIG, "en"), generated_workload(30, seed=4))


def test_the_shared_step_axis_covers_the_longest_run(runs):
    longest = max(run.run.num_steps for run in runs)
    assert step_range(runs) == [-0.5, longest + 0.5]
    assert len({run.run.num_steps for run in runs}) > 1  # so the alignment matters


def test_kv_and_fragmentation_have_a_line_per_config(runs):
    for fig in (kv_usage_figure(runs, lang="en"), fragmentation_figure(runs, lang="en")):
        assert [t.name for t in fig.data] == [run.label for run in runs]
        assert [t.line.color for t in fig.data] == [config_color(i) for i in range(len(runs))]
        assert list(fig.layout.xaxis.range) == step_range(runs)
    kv = kv_usage_figure(runs, lang="en").data[1]
    assert list(kv.y) == [f.metrics.kv_usage * 100 for f in runs[1].frames]
    assert list(fragmentation_figure(runs, lang="en").data[2].y) == [share * 100 for share in runs[2].fragmentation]


def test_timelines_share_the_axis_and_a_single_legend(runs):
    fig = timelines_figure(runs, lang="en")
    axes = [fig.layout[f"xaxis{i if i > 1 else ''}"] for i in range(1, len(runs) + 1)]
    assert all(list(axis.range) == step_range(runs) for axis in axes)
    legend_names = [t.name for t in fig.data if t.showlegend]
    assert len(legend_names) == len(set(legend_names)) > 0
    assert [a.text for a in fig.layout.annotations] == [f"Request timeline: {run.label}" for run in runs]


def test_key_metrics_bars_carry_the_numbers(runs):
    fig = key_metrics_figure(runs, lang="en")
    throughput = [t for t in fig.data if t.xaxis == "x"]
    assert [t.y[0] for t in throughput] == [run.run.throughput_tokens_per_step for run in runs]
    preemptions = [t for t in fig.data if t.xaxis == "x5"]
    assert [t.y[0] for t in preemptions] == [run.run.num_preemptions for run in runs]


def test_the_clock_and_limit_charts_show_what_the_optimisations_change():
    from engine.analysis.compare import GENERATED_CONFIG, compare, generated_workload, variants_for
    from viz.compare import batch_limits_figure, clock_figure

    workload = generated_workload(n=30, seed=2)
    sync, over = compare(variants_for("overlap off vs on", GENERATED_CONFIG, "en"), workload)
    clock = clock_figure([sync, over], lang="en")
    assert clock.data[1].y[-1] < clock.data[0].y[-1] and "ms/step" in clock.data[0].name
    fixed, adaptive = compare(variants_for("adaptive batch size off vs on", GENERATED_CONFIG, "en"), workload)
    limits = batch_limits_figure([fixed, adaptive], lang="en")
    assert set(limits.data[0].y) == {16} and len(limits.data[1].y) == adaptive.run.num_steps


def test_flat_lines_become_one_sentence_and_moving_ones_stay_charts(runs):
    flat = flat_charts(runs, lang="en")
    limit = GENERATED_CONFIG.max_num_seqs
    assert flat["batch_limits"] == f"max_num_seqs stayed at {limit} in every step of every config."
    assert flat["kv_usage"] is None and flat["fragmentation"] is None  # these lines move
    assert flat_sentence("x", {"a": [2, 2], "b": [3]}, str, lang="en") == (
        "x did not change during the runs: 2 for a, 3 for b.")
    assert flat_sentence("x", {"a": [2, 3]}, str, lang="en") is None


def test_a_key_metric_zero_everywhere_gets_no_panel():
    quiet = compare(variants_for("prefill-first vs decode-first", GENERATED_CONFIG.__class__(num_kvcache_blocks=500),
                                 "en"),
                    generated_workload(10, seed=2))
    assert "preemptions" in zero_metrics(quiet, lang="en")
    titles = [a.text for a in key_metrics_figure(quiet, lang="en").layout.annotations]
    assert "preemptions" not in titles and "TTFT (steps)" in titles


def test_every_config_a_comparison_holds_has_a_colour_of_its_own():
    assert len(set(CONFIG_COLORS)) == len(CONFIG_COLORS) >= MAX_VARIANTS
