"""The policy lab: one workload under two to six configs (RUN_BOUNDS["variants"]), side by side. A thin page:
engine.analysis.compare runs and measures, viz.compare draws and viz.compare_words says it; this file only wires
widgets to them."""

from dataclasses import replace

import streamlit as st

from engine.analysis.compare import (
    ADAPTIVE,
    COMPARISONS,
    GENERATED_CONFIG,
    MAX_VARIANTS,
    MIN_VARIANTS,
    OWN_SCHEDULERS,
    Variant,
    alike_under,
    compare,
    generated_workload,
    preset_variants,
    variant_spec,
    variants_for,
)
from engine.analysis.export import comparison_json, requests_csv
from engine.analysis.launch import launch_line, launch_notes, launch_system
from engine.run.overlap import check_overlap
from engine.run.recipe import CostModel
from i18n import text
from render.images import run_gif
from scheduler import SCHEDULER_KINDS
from scheduler.config import ConfigError
from scheduler.factory import CONFIG_BOUNDS, DEFAULT_KIND, scheduler_info
from session.own_scheduler import OwnScheduler
from session.own_stage import OwnStage, own_stage
from ui.downloads import built_on_request
from ui.language import current_lang, said, t
from ui.lockstep import lockstep_stages, stopped_notes
from ui.setting_input import setting_input
from ui.state import USER_ERRORS, presets
from ui.workbench_state import own_scheduler
from viz.compare import (
    batch_limits_figure,
    clock_figure,
    flat_charts,
    fragmentation_figure,
    key_metrics_figure,
    kv_usage_figure,
    timelines_figure,
    zero_metrics,
)
from viz.compare_words import comparison_name, metric_rows, summary, verdicts
from viz.glossary import clock, metric_definitions, variant_label
from viz.html_export import animation_html
from viz.lockstep import partings_answer
from viz.metrics_table import as_table

GENERATED = "generated"
CUSTOM_COMPARISON = "custom"  # a comparison of configs set by hand (not a custom scenario: session.lab.CUSTOM)
PRESET_VARIANT = "variant"  # a preset's run against its variant's, offered first for a preset that has one
CONFIGS_IN_A_ROW = 4  # configs set by hand side by side; more go in two rows
# Every chart keeps one toolbar button: the camera, which saves it as a PNG (drawn by plotly.js in the browser).
PLOT_CONFIG = {"displayModeBar": True, "displaylogo": False, "modeBarButtons": [["toImage"]],
               "toImageButtonOptions": {"format": "png", "scale": 2}}

st.set_page_config(page_title=t("lab.page_title"), page_icon="🧮", layout="wide")


def workload_inputs(choice: str):
    """(workload, base config, seed, cost model, scheduler) of the chosen workload."""
    if choice == GENERATED:
        return generated_workload(), GENERATED_CONFIG, 0, CostModel(), DEFAULT_KIND
    spec = presets()[0][choice].spec
    return spec.workload, spec.config, spec.seed, spec.cost, spec.scheduler


def custom_variant(i: int, base) -> Variant:
    """Config i of a custom comparison, from its own column of widgets (defaults: the workload's config)."""
    st.markdown(t("lab.config_heading", n=i + 1))
    label = st.text_input(t("lab.name"), t("lab.config_name", n=i + 1), key=f"c{i}_label")
    lang = current_lang()
    scheduler = st.selectbox(t("sidebar.scheduler"), SCHEDULER_KINDS, key=f"c{i}_scheduler",
                             format_func=lambda kind: text(lang, scheduler_info(kind).name),
                             help=t("sidebar.scheduler_help"))
    size = int(st.number_input(t("lab.block_size"), *CONFIG_BOUNDS["kvcache_block_size"], base.kvcache_block_size,
                               key=f"c{i}_size"))
    changes = {
        "chunked_prefill": st.toggle(t("setting.chunked_prefill.label"), base.chunked_prefill, key=f"c{i}_chunked"),
        "enable_prefix_caching": st.toggle(t("setting.enable_prefix_caching.label"), base.enable_prefix_caching,
                                           key=f"c{i}_prefix"),
        "max_num_seqs": int(st.number_input("max_num_seqs", *CONFIG_BOUNDS["max_num_seqs"], base.max_num_seqs,
                                            key=f"c{i}_seqs")),
        "max_num_batched_tokens": int(st.number_input("max_num_batched_tokens",
                                                      *CONFIG_BOUNDS["max_num_batched_tokens"],
                                                      base.max_num_batched_tokens, key=f"c{i}_tokens")),
        "kvcache_block_size": size,
        "num_kvcache_blocks": max(1, base.kv_capacity_tokens // size),
    }
    info = scheduler_info(scheduler)
    for spec in info.own_settings:  # the chosen scheduler's own, as it declares them
        if spec.declared.sidebar and spec.key != info.version_setting:
            changes[spec.key] = setting_input(st, spec, t(spec.label_id), lang, value=base.value(spec.key),
                                              key=f"c{i}_{spec.key}")
    overlap = st.toggle(t("sidebar.overlap"), False, key=f"c{i}_overlap")
    adaptive = ADAPTIVE if st.toggle(t("lab.adaptive", low=f"{ADAPTIVE.low_s * 1000:.0f}",
                                       high=f"{ADAPTIVE.high_s * 1000:.0f}"), False, key=f"c{i}_adaptive") else None
    config = replace(base, **changes)
    check_overlap(config, overlap)
    return Variant(label, config, overlap, adaptive, scheduler)


def scheduler_picker(column, workload: str, default: str) -> str:
    """The scheduler a named comparison runs under; by default the workload's own (a twin preset's is the twin)."""
    lang = current_lang()
    return column.selectbox(t("sidebar.scheduler"), SCHEDULER_KINDS, SCHEDULER_KINDS.index(default),
                            key=f"comparison_scheduler_{workload}", help=t("lab.scheduler_help"),
                            format_func=lambda kind: text(lang, scheduler_info(kind).name))


def choose_variants(base, column, workload: str, scheduler: str) -> list[Variant] | None:
    """The configs to compare, or None when one of them is impossible or they would be one run twice (the reason
    is shown)."""
    lang = current_lang()
    scenario = presets()[0].get(workload)
    own_variant = [PRESET_VARIANT] if scenario is not None and scenario.variant else []
    own_ids = (CUSTOM_COMPARISON, PRESET_VARIANT)  # said by lab.<id>; a named comparison by its title
    comparison = column.selectbox(t("lab.compare"), [*own_variant, *COMPARISONS, CUSTOM_COMPARISON], key="comparison",
                                  format_func=lambda c: text(lang, f"lab.{c}") if c in own_ids
                                  else comparison_name(c, lang))
    if comparison == PRESET_VARIANT:
        return preset_variants(scenario, (text(lang, "compare.variant.preset"), text(
            lang, "compare.variant.its_variant", changes=variant_label(scenario.variant, lang))))
    if comparison in OWN_SCHEDULERS:
        return variants_for(comparison, base, lang)
    if comparison != CUSTOM_COMPARISON:
        chosen = scheduler_picker(column, workload, scheduler)
        variants = variants_for(comparison, base, lang, chosen)
        if alike_under(chosen, variants):
            info = scheduler_info(chosen)
            column.info(t("lab.alike_under", comparison=comparison_name(comparison, lang),
                          name=text(lang, info.name), system=info.system))
            return None
        return variants
    count = int(st.columns(4)[0].number_input(t("lab.how_many"), MIN_VARIANTS, MAX_VARIANTS, MIN_VARIANTS,
                                              key="num_configs"))
    variants = []
    per_row = count if count <= CONFIGS_IN_A_ROW else -(-count // 2)  # more: two rows, as even as they go
    columns = [column for first in range(0, count, per_row) for column in st.columns(per_row)[:count - first]]
    for i, column in enumerate(columns):
        with column:
            try:
                variants.append(custom_variant(i, base))
            except ConfigError as e:  # said under that config; the other columns still show
                st.error(t("lab.impossible", error=e))
                variants.append(None)
    return None if None in variants else variants


def own_choice(column, variants: list[Variant] | None) -> OwnScheduler | None:
    """The learner's scheduler (the Workbench's) as one more stage, when the session has one and the learner adds
    it; where it has none, where to write one."""
    own = own_scheduler()
    if own is None:
        column.caption(t("lab.own_none"))
        return None
    full = variants is not None and len(variants) >= MAX_VARIANTS
    added = column.toggle(t("lab.own_add", name=own.class_name), key="own_add", disabled=full,
                          help=t("lab.own_add_help"))
    if full:
        column.caption(t("lab.own_full", most=MAX_VARIANTS))
    return own if added and not full else None


def run_comparison(variants, workload, base, seed, cost, title: str, own: OwnScheduler | None):
    """The variants' runs and, with `own`, the learner's scheduler's stage on the same workload, config, seed and
    model (made in the sandbox: session/own_stage.py), kept in the session with what stopped it early."""
    bar, n = st.progress(0.0, t("lab.starting")), len(variants) + (own is not None)
    stage = None
    try:
        runs = compare(variants, workload, seed=seed, cost=cost,
                       on_progress=lambda i, label: bar.progress(i / n, t("lab.running", label=label, i=i + 1, n=n)))
        if own is not None:
            bar.progress(len(variants) / n, t("lab.own_running"))
            stage = own_stage(own, variant_spec(Variant("", base), workload, seed=seed, cost=cost), current_lang(),
                              [run.label for run in runs])
            runs += [stage.run] if stage.run is not None else []
    finally:
        bar.empty()
    st.session_state.compare_runs, st.session_state.compare_title = runs, title
    st.session_state.own_stage = stage
    st.session_state.exports = {}  # heavy exports, built on request (see built_on_request)


def own_said(stage: OwnStage | None):
    """What stopped the learner's scheduler early (on its stage, or instead of one), and their code's traceback."""
    if stage is None or stage.said is None:
        return
    if stage.run is None:
        st.error(t("lab.own_no_stage", said=said(stage.said)))
    else:
        st.warning(t("lab.own_ended", label=stage.run.label, said=said(stage.said)))
    if stage.traceback:
        st.caption(t("lab.own_traceback"))
        st.code(stage.traceback, language="python")


def results(runs, title: str):
    lang = current_lang()
    st.subheader(t("lab.results", title=title))
    answers = [*verdicts(runs, lang), (t("lockstep.question"),
                                       partings_answer([(r.label, r.frames) for r in runs], lang=lang))]
    st.markdown("\n".join(t("lab.verdict", question=question, answer=answer) for question, answer in answers))
    own_said(st.session_state.get("own_stage"))
    lockstep_stages(runs)
    st.caption(t("lab.metrics_caption", metrics=metric_definitions(lang), clock=clock("simulated", lang)))
    st.dataframe(as_table(metric_rows(runs, lang=lang)), hide_index=True, width="stretch", height=420,
                 column_config={t("compare.metric"): st.column_config.Column(pinned=True)})  # named as it scrolls
    st.caption(t("lab.in_detail"))
    st.info(summary(runs, lang))
    st.plotly_chart(key_metrics_figure(runs, lang=lang), config=PLOT_CONFIG, key="key_metrics")
    if zero := zero_metrics(runs, lang):
        st.caption(t("lab.zero", metrics=t("list.sep").join(zero)))
    flat = flat_charts(runs, lang)
    left, right = st.columns(2)
    chart_or_sentence(left, flat["kv_usage"], lambda: kv_usage_figure(runs, lang=lang), "kv_usage")
    chart_or_sentence(right, flat["fragmentation"], lambda: fragmentation_figure(runs, lang=lang), "fragmentation")
    left, right = st.columns(2)
    left.plotly_chart(clock_figure(runs, lang=lang), config=PLOT_CONFIG, key="clock")
    chart_or_sentence(right, flat["batch_limits"], lambda: batch_limits_figure(runs, lang=lang), "batch_limits")
    st.caption(t("lab.timelines"))
    st.plotly_chart(timelines_figure(runs, lang=lang), config=PLOT_CONFIG, key="timelines")
    launch_commands(runs)
    exports(runs, title)


def chart_or_sentence(column, flat: str | None, figure, key: str):
    """The chart, or the one line that says it would draw only flat lines."""
    if flat:
        column.caption(flat)
    else:
        column.plotly_chart(figure(), config=PLOT_CONFIG, key=key)


def launch_commands(runs):
    """Each run's config as the command that starts the system its scheduler mirrors, under a heading naming them."""
    kinds = [run.scheduler for run in runs]
    systems = [system for system in dict.fromkeys(map(launch_system, kinds)) if system is not None]
    if not systems:
        return
    st.subheader(t("lab.launch", systems=t("list.sep").join(systems)))
    for tab, run, kind in zip(st.tabs([run.label for run in runs]), runs, kinds, strict=True):
        line = launch_line(run.config, kind, overlap=run.overlap)
        if line is None:
            tab.caption(t("lab.no_launch"))
            continue
        tab.code(line, language="bash", wrap_lines=True)
        for note in launch_notes(run.config, kind, current_lang()):
            tab.markdown(f"- {note}")
        if run.adaptive is not None:
            info = scheduler_info(kind)
            tab.markdown(t("lab.launch_adaptive", system=info.launch.system,
                           flag="--" + info.setting_name("max_num_seqs").replace("_", "-")))


def exports(runs, title: str):
    lang = current_lang()
    st.subheader(t("lab.take_it"))
    json_col, csv_col, html_col = st.columns(3)
    store = st.session_state.exports
    built_on_request(json_col, store, "json", lambda: comparison_json(runs, title), t("lab.build_json"),
                     t("lab.download_json"), "comparison.json", "application/json")
    csv_col.download_button(t("lab.csv"), requests_csv(runs), "requests.csv", "text/csv", key="download_csv")
    built_on_request(html_col, store, "html",
                     lambda: animation_html([(r.label, r.frames) for r in runs], title, lang=lang,
                                           stopped=stopped_notes(runs, lang)), t("lab.build_html"),
                     t("lab.download_html"), "comparison.html", "text/html")
    pick, build = st.columns([2, 1], vertical_alignment="bottom")
    labels = [run.label for run in runs]
    label = pick.selectbox(t("lab.gif_choice"), labels, key="gif_choice")
    built_on_request(build, store, f"gif_{labels.index(label)}",
                     lambda: run_gif(runs[labels.index(label)].frames, label, lang=lang),
                     t("lab.build_gif"), t("lab.download_gif"), f"{label}.gif", "image/gif")
    st.caption(t("lab.exports_caption"))


st.title(t("lab.title"))
st.caption(t("lab.caption", least=MIN_VARIANTS, most=MAX_VARIANTS))
scenarios, _ = presets()
titles = {GENERATED: t("lab.generated")} | {n: s.title_in(current_lang()) for n, s in scenarios.items()}
workload_col, compare_col = st.columns(2)
choice = workload_col.selectbox(t("lab.workload"), list(titles), key="workload_choice", format_func=titles.get,
                                on_change=lambda: st.session_state.pop("comparison", None))  # its own first
workload, base, seed, cost, workload_scheduler = workload_inputs(choice)
try:
    variants = choose_variants(base, compare_col, choice, workload_scheduler)
except USER_ERRORS as e:
    st.error(t("lab.impossible", error=e))
    variants = None
own = own_choice(compare_col, variants)
if variants is not None and st.button(t("lab.run"), type="primary", key="run"):
    try:
        run_comparison(variants, workload, base, seed, cost, titles[choice], own)
    except USER_ERRORS as e:
        st.error(said(e))
if st.session_state.get("compare_runs"):
    results(st.session_state.compare_runs, st.session_state.compare_title)
