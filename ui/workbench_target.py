"""What the learner's scheduler runs on, chosen on the Workbench: a preset scenario, a custom workload or the workload
of a trace, on the fake model or the real one (as the sidebar offers them); the run's recipe (engine/run/recipe.py
RunSpec) for `sandbox.run_learner`, or None with the reason shown."""

from __future__ import annotations

from dataclasses import replace

import streamlit as st

from engine.run.limits import BOUNDS, MAX_TRACE_BYTES
from engine.run.recipe import DEFAULT_MAX_STEPS, Request, RunSpec
from engine.traces.trace import UnknownScheduler, read_trace
from i18n import text
from scheduler import Config
from session.lab import ARRIVALS, PROMPTS, CustomSetup, RunInputs, real_model_installed
from ui.language import current_lang, said, t
from ui.state import USER_ERRORS, ensure_model, inputs_for, presets
from viz.glossary import input_help

SOURCES = ("scenario", "custom", "trace")
FIRST_PRESET = "smart_victim_long_prompt"  # where a preemption victim of one's own beats the tail: offered first


def trace_workload(data: bytes) -> RunSpec:
    """The workload of a trace (each request's prompt tokens, arrival, max_tokens and priority as its frames
    recorded them, sampled greedily) under the config its first frame ran with; ValueError (TraceError) for a file
    that is no trace."""
    try:
        store, trace = read_trace(data)
    except UnknownScheduler:  # decided by a kind this process lacks: its workload is still readable
        raise ValueError(t("workbench.trace_unknown_kind")) from None
    last = {r.id: r for r in store[len(store) - 1].requests}
    workload = []
    for summary in trace["requests"]:
        seen = last.get(summary["id"])
        workload.append(Request(arrival=summary["arrival"], prompt_token_ids=tuple(summary["prompt_token_ids"]),
                                max_tokens=seen.max_tokens if seen else max(1, len(summary["output_token_ids"])),
                                priority=seen.priority if seen else 0))
    return RunSpec(store[0].config, tuple(workload), seed=trace["seed"], max_steps=DEFAULT_MAX_STEPS)


def _scenario_spec(runner: str) -> RunSpec:
    scenarios, lang = presets()[0], current_lang()
    names = sorted(scenarios, key=lambda n: n != FIRST_PRESET)
    name = st.selectbox(t("sidebar.scenario"), names, key="workbench_scenario",
                        format_func=lambda n: scenarios[n].title_in(lang), label_visibility="collapsed")
    return inputs_for(name, runner).spec


def _custom_spec(runner: str) -> RunSpec:
    lang, cols = current_lang(), st.columns(4)
    setup = CustomSetup(
        int(cols[0].number_input(t("sidebar.requests"), *BOUNDS["requests"], 8, key="workbench_requests",
                                 help=input_help("requests", lang))),
        cols[1].radio(t("sidebar.prompts"), list(PROMPTS), key="workbench_prompts",
                      format_func=lambda p: text(lang, f"custom.prompts.{p}")),
        int(cols[2].number_input(t("sidebar.max_tokens"), *BOUNDS["max_tokens"], 16, key="workbench_max_tokens",
                                 help=input_help("max_tokens", lang))),
        cols[3].radio(t("sidebar.arrivals"), list(ARRIVALS), key="workbench_arrivals",
                      format_func=lambda a: text(lang, f"custom.arrivals.{a}")))
    return RunInputs.from_custom(setup, Config(), runner).spec


def _trace_spec(runner: str) -> RunSpec | None:
    upload = st.file_uploader(t("workbench.trace_upload"), type=["json"], key="workbench_trace")
    if upload is None:
        st.caption(t("workbench.trace_none"))
        return None
    if upload.size > MAX_TRACE_BYTES:
        st.error(t("workbench.trace_too_big", mb=MAX_TRACE_BYTES // 2**20))
        return None
    try:
        spec = trace_workload(upload.getvalue())
    except ValueError as e:
        st.error(t("workbench.trace_refused", name=upload.name, error=said(e)))
        return None
    st.caption(t("workbench.trace_read", name=upload.name, n=len(spec.workload)))
    return replace(spec, runner=runner)


def target_spec() -> RunSpec | None:
    """The run the learner chose (None where it cannot be built yet, the reason shown)."""
    lang = current_lang()
    cols = st.columns([5, 3], vertical_alignment="bottom")
    source = cols[0].segmented_control(t("workbench.run_on"), SOURCES, key="workbench_source", default="scenario",
                                       format_func=lambda s: text(lang, f"workbench.source.{s}"))
    runners = ["model", "fake"] if real_model_installed() else ["fake"]
    usual = st.session_state.get("runner")  # the stepper's model, where the app offers it
    runner = cols[1].selectbox(t("sidebar.model"), runners, runners.index(usual) if usual in runners else 0,
                               key="workbench_runner", format_func=lambda r: text(lang, f"sidebar.runner.{r}"))
    runner, _ = ensure_model(runner)
    try:
        build = {"scenario": _scenario_spec, "custom": _custom_spec, "trace": _trace_spec}[source or "scenario"]
        return build(runner)
    except USER_ERRORS as e:
        st.error(said(e))
        return None
