"""Per-session state: this browser session's Lab (its own engine, KV cache and frames), the URL, and the one
model shared read-only by every session of the process."""

from __future__ import annotations

import time
from urllib.parse import urlencode

import streamlit as st
from streamlit import runtime
from streamlit.runtime.scriptrunner import get_script_run_ctx

from engine.inputs.scenario import Scenario, ScenarioError, load_scenario, preset_paths
from i18n import Message, message_of
from runner.share import asking
from session.feed import Feed
from session.lab import Lab, LabError, RunInputs, default_runner
from session.links import link_of, open_link, parse_link, parse_link_or_fallback, replay
from session.precompute import Precompute, precompute_names
from session.roster import Attendee, roster
from ui.language import current_lang, said, t
from viz.glossary import variant_label
from viz.texts import scheduler_story, scheduler_title

# What a user action can raise and the page shows as a message: the lab's refusals, invalid settings or requests
# (ConfigError and RequestRejected are ValueErrors) and a failing model step (torch raises RuntimeError).
USER_ERRORS = (LabError, ValueError, RuntimeError)


@st.cache_resource(show_spinner=False)
def presets() -> tuple[dict[str, Scenario], dict[str, str]]:
    """(scenarios by name, load errors by file name): one broken file does not hide the others."""
    scenarios, errors = {}, {}
    for path in preset_paths():
        try:
            scenarios[path.stem] = load_scenario(path)
        except ScenarioError as e:
            errors[path.name] = e.message
    return scenarios, errors


@st.cache_resource(show_spinner=False)
def shared_model_device() -> str:
    """Load the real model's weights once per process (every session's runner shares them); its device."""
    from engine.run.runner_factory import make_runner
    from scheduler import Config

    return str(make_runner("model", Config(num_kvcache_blocks=1)).device)


@st.cache_resource(show_spinner=False)
def precomputed(runner: str) -> Precompute:
    """The presets $SCHEDLAB_PRECOMPUTE names, run to their ends once per process in the background (started by
    the process's first page, once the model is loaded)."""
    return Precompute(precompute_names(), presets()[0], runner).start()


def ensure_model(runner: str) -> tuple[str, str | None]:
    """(runner to use, device). For the real model: convert it the first time (with a progress bar), load it
    once per process; if that fails, say why and fall back to the fake model."""
    if runner != "model":
        return runner, None
    from runner.default_model import default_model_dir

    bar = st.progress(0.0, t("state.preparing_model"))
    try:
        default_model_dir(lambda fraction, message: bar.progress(min(1.0, fraction), said(message)))
        bar.progress(1.0, t("state.loading_model"))
        return runner, shared_model_device()
    except Exception as e:  # any load failure must become a message, not a traceback
        st.error(t("state.model_failed", error=e))
        return "fake", None
    finally:
        bar.empty()


def inputs_for(name: str, runner: str, temperature: float = 0.0, seed: int | None = None,
               variant: bool = False) -> RunInputs:
    scenarios, _ = presets()
    if name not in scenarios:
        raise LabError("state.no_scenario", name=repr(name))
    return RunInputs.from_scenario(scenarios[name], runner, temperature, seed, variant)


def lab() -> Lab:
    return st.session_state.lab


def run_title() -> str:
    """The run's title in this session's language (a trace keeps the title it was saved with)."""
    here, lang = lab(), current_lang()
    if here.is_trace:
        return said(here.title)
    if here.inputs.custom is not None:
        return t("run.custom")
    scenario = presets()[0].get(here.inputs.scenario_name)
    if scenario is None:
        return here.title
    own = scenario.spec_for(variant=here.inputs.variant).scheduler  # a variant may name its own
    title = scheduler_title(scenario.title_in(lang), own, here.scheduler, lang)
    return t("run.variant", title=title, changes=variant_label(scenario.variant, lang)) if here.inputs.variant \
        else title


def run_narrative() -> str:
    """What the scenario shows (a custom setup: its workload), in this session's language."""
    inputs = lab().inputs
    if inputs.custom is not None:
        setup = inputs.custom
        return t("custom.summary", requests=setup.requests, prompts=t(f"custom.prompts.{setup.prompts}"),
                 arrivals=t(f"custom.arrivals.{setup.arrivals}"))
    scenario = presets()[0].get(inputs.scenario_name)
    if scenario is None:
        return inputs.narrative
    return scheduler_story(scenario.narrative_in(current_lang()), scenario.spec_for(variant=inputs.variant).scheduler,
                           inputs.spec.scheduler, current_lang())


def settings_in_effect() -> tuple:
    """The scheduler settings and engine options of the step after the frame shown: what the sidebar shows. The
    stage reruns the whole page when the frame it moved to runs under others."""
    return lab().config_in_effect(), lab().options_in_effect()


def init_session():
    """Create this session's lab once, opening the run and frame the URL names (session/links.py) when it names one;
    a link that cannot be opened opens the first preset, with a notice saying what to fix."""
    state = st.session_state
    if "lab" in state:
        return
    state.errors, state.notice = {}, None
    scenarios, _ = presets()
    link, state.notice = parse_link_or_fallback(st.query_params.to_dict(), scenarios)
    state.presentation = link.present
    state.runner, state.model_device = ensure_model(default_runner())
    precomputed(state.runner)
    try:
        state.lab = open_link(link, scenarios, state.runner)
        state.scenario_choice = link.scenario
        state.notice = replay(state.lab, link, run_to_frame) or state.notice
    except USER_ERRORS as e:  # a link parse_link passed that the engine still refuses: never a broken session
        state.notice = Message("state.link_refused", error=message_of(e))
        link = parse_link({}, scenarios)
        state.lab = open_link(link, scenarios, state.runner)
        state.scenario_choice = link.scenario


PROGRESS_EVERY_S = 0.2


def attendee() -> Attendee:
    """This session on the server panel's roster (session/roster.py)."""
    ctx = get_script_run_ctx()
    return roster().attendee(ctx.session_id if ctx is not None else "")


def note_attendance(here: Lab):
    """What the server panel says of this session: the run it looks at and the frame it has stepped to."""
    entry = attendee()
    entry.run, entry.steps = "trace" if here.is_trace else here.inputs.scenario_name, here.last


def as_this_session():
    """The model steps taken inside are this session's, in the model worker's turns (runner/share.py)."""
    return asking(who=attendee().name)


def open_sessions() -> list[Attendee]:
    """The sessions whose tabs are open now, as the Streamlit runtime knows them (every one known, without it)."""
    instance = runtime.get_instance() if runtime.exists() else None
    return roster().live(lambda session_id: instance is None or instance.is_active_session(session_id))


def session_gone() -> bool:
    """Whether this session's browser tab has gone (closed or disconnected): Streamlit keeps running its script."""
    ctx = get_script_run_ctx()
    return ctx is not None and runtime.exists() and not runtime.get_instance().is_active_session(ctx.session_id)


def run_to_frame(lab: Lab, frame: int):
    """Run `lab` on to `frame` (a link's, or one of its changes') in chunks of PROGRESS_EVERY_S, each ending with a
    look at the session: when its tab has gone, the run stops there and the server's CPU is released. (A spinner,
    not a progress bar: a spinner takes no place in the page, so the page's later reruns keep the same shape.)"""
    if frame <= lab.cursor:
        return
    note_attendance(lab)
    with st.spinner(t("state.running_to", frame=frame)), asking(background=True):  # nobody watches it step
        lab.run(frame - lab.cursor, _watching(lab))


def compute_whole_run(lab: Lab, bound: int) -> int:
    """The last frame of `lab`'s whole run up to one past `bound` (a handout's; that one more says the run goes
    on), computed on where it is not yet, as `run_to_frame` does: in the model's background share, stopping when
    the tab has gone."""
    with st.spinner(t("state.computing_run", bound=f"{bound:,}")), asking(background=True):
        return lab.compute_to_end(bound + 1, _watching(lab))


def _watching(lab: Lab):
    """A step's callback that looks at the session every PROGRESS_EVERY_S: when its tab has gone, the script run
    ends there (the run keeps the frames computed so far) and the server's CPU is released."""
    checked = [time.monotonic()]

    def on_step(_done: int):
        note_attendance(lab)
        if time.monotonic() - checked[0] >= PROGRESS_EVERY_S:
            if session_gone():
                st.stop()
            checked[0] = time.monotonic()
    return on_step


# Stepper widgets whose value nothing else restores. Streamlit forgets a widget's value after a run that does not
# draw it (a visit to the policy lab); writing them back on every run keeps them for the learner's return.
KEPT_WIDGET_KEYS = ("scenario_choice", "presentation", "run_n", "lower_view", "lang")


def keep_widget_state():
    for key in KEPT_WIDGET_KEYS:
        if key in st.session_state:
            st.session_state[key] = st.session_state[key]


def url_params(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The link to the run and the frame shown, with its changes (and `extra`: the class, ui/classroom.py)."""
    return {**link_of(lab(), presets()[0], st.session_state.presentation, lang=current_lang()).params(),
            **(extra or {})}


def sync_url(extra: dict[str, str] | None = None):
    """The URL names the run and the frame shown, so a link (and a reload) reopens them."""
    params = url_params(extra)
    if st.query_params.to_dict() != params:
        st.query_params.from_dict(params)


def link_here(extra: dict[str, str] | None = None) -> str:
    """The whole address of the run and the frame shown (with `extra`), under this page's own address."""
    return f"{(st.context.url or '').split('?')[0]}?{urlencode(url_params(extra))}"


def copy_link(extra: dict[str, str] | None = None):
    """"Copy link to this frame": the whole address in a code box (its copy icon; the server has no clipboard)."""
    with st.popover(t("stage.copy_link"), icon=":material/link:"):
        st.caption(t("stage.copy_link_help"))
        st.code(link_here(extra), language=None, wrap_lines=True)


def report(error: Exception):
    """Keep a refused action's message for the stage to show (in the language of the page that shows it); the state
    is left as it was."""
    st.session_state.notice = message_of(error)


def feed() -> Feed:
    """What this session's stage player has been sent (session/feed.py)."""
    if "feed" not in st.session_state:
        st.session_state.feed = Feed(current_lang())
    st.session_state.feed.use_language(current_lang())
    return st.session_state.feed
