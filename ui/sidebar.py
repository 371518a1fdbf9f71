"""The sidebar: scenario, model, scheduler settings, adding a request, opening a trace."""

from __future__ import annotations

import json
from collections.abc import Callable

import streamlit as st

from engine.analysis.export import comparison_traces
from engine.run.adaptive import AdaptiveBatch
from engine.run.limits import BOUNDS
from i18n import Message, message_of, messages, text
from scheduler import SCHEDULER_KINDS
from scheduler.factory import scheduler_info, settings_of
from scheduler.settings import SettingSpec
from session.lab import (
    ARRIVALS,
    CUSTOM,
    PROMPTS,
    CustomSetup,
    LabError,
    RunInputs,
    open_trace,
    real_model_installed,
)
from ui.assignment import lock_note, locked
from ui.language import current_lang, said, t
from ui.setting_input import setting_input
from ui.state import (
    USER_ERRORS,
    ensure_model,
    inputs_for,
    lab,
    presets,
    report,
    run_narrative,
    settings_in_effect,
)
from viz.glossary import changed_settings, input_help, model_caveat, setting, variant_label
from viz.texts import branch_notice


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
        _restart(current.with_runner(state.runner).with_seed(int(state.seed)).with_temperature(state.temperature))
    except USER_ERRORS as e:
        report(e)


def _on_scheduler():
    """The other scheduler chosen: a scheduler cannot change mid-run, so the run starts again from frame 0 (said when
    it was shown at a later frame)."""
    current, frame = lab().inputs, lab().cursor
    if current is not None:
        chosen = st.session_state.scheduler_choice
        try:
            _restart(current.with_scheduler(chosen))
            if frame > 0:
                st.session_state.notice = Message("sidebar.scheduler_restarted", frame=frame,
                                                  scheduler=Message(scheduler_info(chosen).name))
        except USER_ERRORS as e:
            report(e)


def scheduler_choice():
    """The scheduler a run is decided by (a trace's as it records it), the release it mirrors where it offers a
    choice, and what it declares for the sidebar: the shared settings it does not read, how it picks a preemption
    victim, and the warning of its system's start-up check (vLLM's: the pool cannot hold one request of
    max_model_len tokens)."""
    here, lang = lab(), current_lang()
    if not here.frames:  # nothing open yet
        return
    if here.is_trace:
        st.caption(t("sidebar.trace_scheduler", name=text(lang, scheduler_info(here.scheduler).name)))
    else:
        st.session_state.scheduler_choice = here.scheduler  # what this run was built with
        st.radio(t("sidebar.scheduler"), SCHEDULER_KINDS, key="scheduler_choice", on_change=_on_scheduler,
                 format_func=lambda kind: text(lang, scheduler_info(kind).name), help=t("sidebar.scheduler_help"),
                 disabled=locked("scheduler"))
    info, config = scheduler_info(here.scheduler), here.config_in_effect()
    if info.start_warning and (warning := info.start_warning(config)):  # the system it mirrors would not start
        st.warning(said(warning))
    if info.version_setting:  # the release it mirrors, a choice beside it
        _config_control(next(s for s in info.own_settings if s.key == info.version_setting), config, lang)
    notes = [t("sidebar.scheduler_ignores", system=info.system,
               names=t("list.sep").join(setting(name, lang)[0] for name in info.ignored))] if info.ignored else []
    unmodelled = info.message("sidebar.unmodelled")  # the kind's own word on what its system has that it lacks
    if messages(lang, unmodelled):
        notes.append(t(unmodelled))
    if info.sidebar_note:
        notes.append(t(info.sidebar_note))
    if notes:
        st.caption(" ".join(notes))


def _apply(error_key: str, change: Callable[[], None]):
    """Make a settings change to the run; a refused one leaves the run as it was and its reason under the control."""
    state = st.session_state
    frame, last = lab().cursor, lab().last
    try:
        change()
        state.errors.pop(error_key, None)
        if frame < last:  # at an earlier frame the run branched: say what was discarded
            state.notice = branch_notice(frame, last, current_lang())
    except USER_ERRORS as e:
        state.errors[error_key] = Message("sidebar.not_applied", error=message_of(e))


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
    names, lang = [*scenarios, CUSTOM], current_lang()
    st.selectbox(t("sidebar.scenario"), names, key="scenario_choice", on_change=_on_scenario,
                 help=input_help("scenario", lang),
                 format_func=lambda n: text(lang, "run.custom") if n == CUSTOM else scenarios[n].title_in(lang))
    for file, error in broken.items():
        st.warning(t("sidebar.preset_broken", file=file, error=error))
    choice = st.session_state.scenario_choice
    if choice == CUSTOM:
        custom_setup()
        return
    if scenarios[choice].variant:
        st.session_state.variant_choice = bool(lab().inputs and lab().inputs.variant)
        st.toggle(t("sidebar.variant", changes=variant_label(scenarios[choice].variant, lang)), key="variant_choice",
                  on_change=_on_variant, help=t("sidebar.variant_help"))
    if lab().inputs is not None:
        if not scenarios[choice].is_translated(lang):
            st.caption(t("sidebar.untranslated", file=scenarios[choice].path.name))
        with st.expander(t("sidebar.story"), expanded=True):
            st.markdown(run_narrative())
            if changes := changed_settings(lab().inputs.config, lab().config_in_effect(), was="was_scenario",
                                           ignore=("max_num_seqs",) if lab().options_in_effect().adaptive else (),
                                           lang=lang):
                st.caption(t("sidebar.story_changed", changes=t("list.sep").join(changes)))


def custom_setup():
    shown = lab().inputs.custom if lab().inputs and lab().inputs.custom else CustomSetup()
    lang = current_lang()
    with st.form("custom_setup"):
        setup = CustomSetup(
            int(st.number_input(t("sidebar.requests"), *BOUNDS["requests"], shown.requests, key="custom_requests",
                                help=input_help("requests", lang))),
            st.radio(t("sidebar.prompts"), list(PROMPTS), list(PROMPTS).index(shown.prompts),
                     format_func=lambda p: text(lang, f"custom.prompts.{p}"), horizontal=True,
                     help=input_help("prompts", lang)),
            int(st.number_input(t("sidebar.max_tokens"), *BOUNDS["max_tokens"], shown.max_tokens,
                                key="custom_max_tokens", help=input_help("max_tokens", lang))),
            st.radio(t("sidebar.arrivals"), list(ARRIVALS), list(ARRIVALS).index(shown.arrivals),
                     format_func=lambda a: text(lang, f"custom.arrivals.{a}"), horizontal=True,
                     help=input_help("arrivals", lang)))
        if st.form_submit_button(t("sidebar.start_custom")):  # under the settings and options shown in the sidebar
            state = st.session_state
            _restart(RunInputs.from_custom(setup, lab().config_in_effect(), state.runner, int(state.seed),
                                           state.temperature, lab().options_in_effect(), lab().scheduler))


def model_controls():
    installed = real_model_installed()
    options = ["model", "fake"] if installed else ["fake"]
    state, inputs = st.session_state, lab().inputs
    state.runner_choice = inputs.runner if inputs else state.runner  # the widgets show what this run was built from
    state.temperature = inputs.temperature if inputs else state.get("temperature", 0.0)
    state.seed = inputs.spec.seed if inputs else state.get("seed", 0)
    lang = current_lang()
    st.radio(t("sidebar.model"), options, key="runner_choice",
             format_func=lambda r: text(lang, f"sidebar.runner.{r}"), on_change=_on_run_inputs,
             help=input_help("model", lang), disabled=locked("runner"))
    if not installed:
        st.caption(t("sidebar.model_missing"))
    elif inputs and inputs.runner != state.runner:  # the notebook's block-size bug runs on the fake model only
        st.caption(t("config.notebook_bug_model"))
    elif inputs and inputs.runner == "model":
        st.caption(t("sidebar.model_on", device=st.session_state.model_device, caveat=model_caveat(lang)))
    cols = st.columns(2)
    cols[0].number_input(t("sidebar.temperature"), *BOUNDS["temperature"], step=0.1, key="temperature",
                         on_change=_on_run_inputs, help=input_help("temperature", lang),
                         disabled=locked("temperature"))
    cols[1].number_input(t("sidebar.seed"), *BOUNDS["seed"], step=1, key="seed", on_change=_on_run_inputs,
                         help=input_help("seed", lang), disabled=locked("seed"))


def config_controls():
    config, lang = lab().config_in_effect(), current_lang()
    if lab().is_trace:
        st.caption(t("sidebar.trace_read_only"))
    info = scheduler_info(lab().scheduler)
    for spec in settings_of(info.kind):  # the shared settings, then the run's scheduler's own
        if spec.declared.sidebar and spec.key != info.version_setting:  # the release: beside the scheduler
            _config_control(spec, config, lang)


def _config_control(spec: SettingSpec, config, lang: str):
    """One setting's control, as its declaration says (a number within its bounds, a switch, a choice), showing
    what the next step will run under; a change applies from the frame shown. A shared one the run's scheduler
    does not read is disabled (changing it would branch into the same run)."""
    state, field = st.session_state, spec.key
    key = f"cfg_{field}"
    if field not in state.errors:
        state[key] = config.value(field)
    info = scheduler_info(lab().scheduler)
    label, help_text = setting(field, lang, info)
    unread = field in info.ignored
    if unread:
        scheduler = t(info.name)
        help_text = f"{help_text}\n\n{t('sidebar.scheduler_unread', scheduler=scheduler)}"
    common = {"key": key, "on_change": _on_config, "args": (field,),
              "disabled": lab().is_trace or locked(field) or unread, "help": help_text}
    setting_input(st, spec, label, lang, **common)
    if field in state.errors:
        st.error(said(state.errors[field]))


def optimisation_controls():
    """Overlapped scheduling and adaptive batch size: switched like the scheduler settings, from the frame shown."""
    state, options, lang = st.session_state, lab().options_in_effect(), current_lang()
    if lab().is_trace:
        st.caption(t("sidebar.trace_read_only"))
        return
    controller = options.adaptive or AdaptiveBatch()
    shown = {"opt_overlap": options.overlap, "opt_adaptive": options.adaptive is not None,
             "opt_low_ms": controller.low_s * 1000, "opt_high_ms": controller.high_s * 1000,
             "opt_min_seqs": controller.min_seqs, "opt_max_seqs": controller.max_seqs}
    for key, value in shown.items():
        if ("overlap" if key == "opt_overlap" else "adaptive") not in state.errors:
            state[key] = value  # show what the next step will run under
    st.toggle(t("sidebar.overlap"), key="opt_overlap", on_change=_on_overlap, help=t("sidebar.overlap_help"),
              disabled=locked("overlap"))
    if "overlap" in state.errors:
        st.error(said(state.errors["overlap"]))
    st.toggle(t("sidebar.adaptive"), key="opt_adaptive", on_change=_on_adaptive, help=t("sidebar.adaptive_help"),
              disabled=locked("adaptive"))
    if state.opt_adaptive:
        cols = st.columns(2)
        ms, seqs = tuple(s * 1000 for s in BOUNDS["adaptive_s"]), BOUNDS["max_num_seqs"]
        cols[0].number_input(t("sidebar.low_ms"), *ms, step=5.0, key="opt_low_ms", on_change=_on_adaptive,
                             help=input_help("low_ms", lang))
        cols[1].number_input(t("sidebar.high_ms"), *ms, step=5.0, key="opt_high_ms", on_change=_on_adaptive,
                             help=input_help("high_ms", lang))
        cols[0].number_input(t("sidebar.min_seqs"), *seqs, step=1, key="opt_min_seqs", on_change=_on_adaptive,
                             help=input_help("min_seqs", lang))
        cols[1].number_input(t("sidebar.max_seqs"), *seqs, step=1, key="opt_max_seqs", on_change=_on_adaptive,
                             help=input_help("max_seqs", lang))
    if "adaptive" in state.errors:
        st.error(said(state.errors["adaptive"]))


def add_request_form():
    lang = current_lang()
    with st.form("add_request", clear_on_submit=False):
        prompt = st.text_area(t("sidebar.prompt"), placeholder=t("sidebar.prompt_placeholder"), height=80,
                              help=input_help("prompt", lang))
        cols = st.columns(2)
        max_tokens = cols[0].number_input(t("sidebar.request_max_tokens"), *BOUNDS["max_tokens"], 16,
                                          key="request_max_tokens", help=input_help("request_max_tokens", lang))
        priority = cols[1].number_input(t("sidebar.priority"), *BOUNDS["priority"], 0, key="request_priority",
                                        help=input_help("priority", lang))
        info = scheduler_info(lab().scheduler)
        greyed = not info.sampling  # vLLM's SamplingParams fields, for a scheduler that reads them
        stops = cols[0].text_input(t("sidebar.stop_token_ids"), key="request_stop_token_ids", disabled=greyed,
                                   help=input_help("stop_token_ids", lang))
        min_tokens = cols[1].number_input(t("sidebar.min_tokens"), *BOUNDS["min_tokens"], 0, key="request_min_tokens",
                                          disabled=greyed, help=input_help("min_tokens", lang))
        if greyed:
            st.caption(t("sidebar.sampling_ignored", name=text(lang, info.name), system=info.system))
        if st.form_submit_button(t("sidebar.add_request"), disabled=locked("requests")):
            try:
                frame, last = lab().cursor, lab().last
                lab().add_request(prompt, max_tokens, priority, "" if greyed else stops, 0 if greyed else min_tokens)
                st.success(t("sidebar.added") + (f" {branch_notice(frame, last, lang)}" if frame < last else ""))
            except USER_ERRORS as e:
                st.error(said(e))
    if st.session_state.runner == "model":
        st.caption(t("sidebar.chat_template"))


def _comparison_runs(upload) -> list[tuple[str, str]] | None:
    """The runs of an uploaded policy-lab comparison (read once per file), or None for a trace."""
    state = st.session_state
    if state.get("comparison_file", (None,))[0] != upload.file_id:
        state.comparison_file = (upload.file_id, comparison_traces(upload.getvalue()))
    return state.comparison_file[1]


def _uploader_words():
    """Streamlit's file uploader writes "Upload" and "20MB per file • JSON" in English whatever the page's language;
    its words are replaced by the catalogue's, drawn by CSS over the hidden originals (it has no option for them)."""
    words = {"button p": t("sidebar.upload_button"),
             "[data-testid=stFileUploaderDropzoneInstructions] span":
                 t("sidebar.upload_limit", mb=st.get_option("server.maxUploadSize"))}
    zone = "[data-testid=stFileUploaderDropzone]"
    st.markdown("<style>" + "".join(
        f"{zone} {selector} {{font-size: 0}} {zone} {selector}::after "
        f"{{content: {json.dumps(label, ensure_ascii=False)}; font-size: 14px}}"
        for selector, label in words.items()) + "</style>", unsafe_allow_html=True)


def trace_uploader():
    """Open a trace, or one run of a policy-lab comparison (each of its runs is a trace), chosen by its label."""
    _uploader_words()
    upload = st.file_uploader(t("sidebar.trace_upload"), type=["json"])
    if upload is None:
        return
    key, data, name = upload.file_id, upload.getvalue(), upload.name
    if runs := _comparison_runs(upload):
        labels = [label for label, _ in runs]
        chosen = st.selectbox(t("sidebar.comparison_run", n=len(runs)), range(len(runs)),
                              format_func=labels.__getitem__, key="comparison_run")
        key, data, name = (upload.file_id, chosen), runs[chosen][1], f"{upload.name}: {labels[chosen]}"
    if st.session_state.get("trace_loaded") == key:
        return
    try:
        st.session_state.lab = open_trace(data, name)
        st.session_state.trace_loaded = key
    except LabError as e:
        st.error(said(e))
        return
    st.rerun()  # the sidebar above (the scheduler that decided it, its warnings) now shows the trace


def sidebar():
    st.session_state.sidebar_settings = settings_in_effect()  # the stage reruns the page when they change
    with st.sidebar:
        st.title("schedlab")
        st.caption(t("sidebar.tagline"))
        scenario_picker()
        scheduler_choice()
        st.toggle(t("sidebar.presentation"), key="presentation", help=input_help("presentation", current_lang()))
        with st.expander(t("sidebar.model"), expanded=False):
            lock_note()
            model_controls()
        with st.expander(t("sidebar.settings"), expanded=False):
            st.caption(t("sidebar.settings_caption"))
            lock_note()
            config_controls()
        with st.expander(t("sidebar.beyond"), expanded=False):
            st.caption(t("sidebar.beyond_caption"))
            lock_note()
            optimisation_controls()
        with st.expander(t("sidebar.add"), expanded=False):
            add_request_form()
        with st.expander(t("sidebar.open_trace"), expanded=False):
            trace_uploader()

