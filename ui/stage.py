"""The stage: the browser-side player (player/, fed by session/feed.py) and, below it, the views drawn on the
server. Step, Back, Play, the slider and key frames act in the browser on frames already sent; the player asks
for more with a target step. It is one fragment, so the player's requests rerun only the stage."""

from __future__ import annotations

import html
import math
import time

import streamlit as st

from i18n import text
from player.assets import player_sources
from scheduler.factory import scheduler_info
from session.feed import Request, run_header
from session.lab import LabError
from ui.assignment import assignment_panel
from ui.class_desk import desk
from ui.classroom import (
    PLAYING,
    class_banner,
    follow_lead,
    is_following,
    is_lecturer,
    keep_within_bound,
    note_seen,
    publish_lead,
    stage_bound,
    take_seat,
    url_params,
)
from ui.errors import LOG, logged
from ui.handout import handout_view, print_layout
from ui.language import current_lang, said, t
from ui.predict import predict
from ui.state import (
    USER_ERRORS,
    as_this_session,
    attendee,
    compute_whole_run,
    copy_link,
    feed,
    lab,
    note_attendance,
    report,
    run_narrative,
    run_title,
    settings_in_effect,
    sync_url,
)
from viz.adaptive import adaptive_batch_figure
from viz.charts import batch_figure, queues_and_kv_figure
from viz.colors import request_color
from viz.glossary import clock, legend_lines, metric_definitions, model_caveat
from viz.handout import MAX_HANDOUT_FRAMES, FirstFrames, Handout
from viz.metrics_table import as_table, request_rows, run_summary, speculation_sentence
from viz.overlap import WINDOW, frame_timings, overlap_timeline_figure
from viz.texts import pending_change, progress_text, request_texts, title_in_effect
from viz.timeline import segments_figure

PLOT_CONFIG = {"displayModeBar": False}
CHART_STEPS = 2000  # steps the charts over time draw, the last ones up to the frame shown
PLAYER_KEY = "stage_player"
MAX_PLAY_SPEED = 20  # the player's fastest speed, steps per second


@st.cache_resource(show_spinner=False)
def _component_sources() -> tuple[str, str]:
    """The player's JS as the module a v2 component runs (its default export mounts the player), and its CSS."""
    js, css = player_sources()
    return js + "\nexport default function (component) { return window.SchedlabPlayer.mount(component); }\n", css


def _player():
    js, css = _component_sources()
    return st.components.v2.component("schedlab_stage_player", js=js, css=css, isolate_styles=False)


def _attempt(action, *args):
    try:
        action(*args)
        st.session_state.notice = None
    except USER_ERRORS as e:
        report(e)


def _on_reset():
    _attempt(lab().reset)


def _run_steps(steps: int):
    """Run N steps with a progress bar; stopping early (the run is over) is reported."""
    bar = st.progress(0.0, t("stage.running_steps", steps=steps))
    try:
        done = lab().run(steps, lambda n: bar.progress(n / steps, t("stage.step_progress", step=lab().cursor, n=n,
                                                                    steps=steps)))
    finally:
        bar.empty()
        feed().moved_cursor()
    if done < steps:
        raise LabError("stage.stopped", done=done, steps=steps)


def controls():
    """What stays on the server: a fresh start and running many steps at once."""
    cols = st.columns([1.9, 1.1, 1.5, 4], vertical_alignment="center")
    run_clicked = cols[0].button(t("stage.run_n"), width="stretch")
    cols[1].number_input("N", 1, 10_000, 10, key="run_n", label_visibility="collapsed")
    cols[2].button(t("stage.reset"), on_click=_on_reset, width="stretch", disabled=lab().is_trace)
    if run_clicked:
        _attempt(_run_steps, int(st.session_state.run_n))


def _player_says(name: str):
    """What the player's message `name` holds (its state or a trigger); None, refused with a line in the log, when
    the message came without the player's state (no player sends that; a forged or cut message may)."""
    state = st.session_state.get(PLAYER_KEY)
    if state is None:
        LOG.warning("refused the stage player's %r: the message came without the player's state", name)
        return None
    return state.get(name)


def _refused(name: str, value):
    LOG.warning("refused the stage player's %r: %.200r", name, value)


def _on_player_request():
    st.session_state.player_request = _player_says("request")


def _on_player_frame():
    frame = _player_says("frame")
    if frame is not None and not isinstance(frame, int):
        _refused("frame", frame)
        return
    st.session_state.player_frame = frame
    st.session_state[PLAYING] = 0.0  # the player reports where it stopped


def _on_player_play():
    """A lecturer's player reports each stop as {frame, speed: 0}, Play as the frame it plays from and its speed,
    at once (not 300 ms later): the class plays along (ui/classroom.py)."""
    value = _player_says("play")
    frame, speed = (value.get("frame"), value.get("speed")) if isinstance(value, dict) else (None, None)
    if isinstance(frame, int) and isinstance(speed, int | float) and math.isfinite(speed):
        st.session_state.player_frame = frame
        st.session_state[PLAYING] = float(min(max(speed, 0), MAX_PLAY_SPEED))
    elif value is not None:
        _refused("play", value)


def serve_player() -> str | None:
    """Answer the player's request for frames and follow the frame it shows (a class's follower: no further than
    the lecturer while a question is open); the message for the page, if any."""
    error, feed().bound = None, stage_bound()
    if (value := st.session_state.pop("player_request", None)) is not None:
        request = Request.parse(value)
        if request is None:
            _refused("request", value)
            error = t("stage.bad_request", value=repr(value)[:200])
        else:
            asked = time.perf_counter()
            try:
                feed().serve(lab(), request)
            except USER_ERRORS as e:  # a model step that failed: the frames already sent stay usable
                error = t("stage.compute_failed", error=e)
            attendee().waits.append(time.perf_counter() - asked)
    frame = st.session_state.pop("player_frame", None)
    if isinstance(frame, int) and 0 <= frame <= furthest() and frame != lab().cursor:
        lab().goto(frame)
        st.session_state.notice = None  # what a notice said ("Branched at frame 8", "Stopped after 49 steps") is past
        if settings_in_effect() != st.session_state.get("sidebar_settings"):
            st.rerun()  # the whole page, so the sidebar shows the settings of the frame moved to
    return error


def furthest() -> int:
    """The furthest frame the page draws from: the last stepped to; a follower's, while a question is open, no
    further than the lecturer's (ui/classroom.py `stage_bound`)."""
    bound = stage_bound()
    return lab().last if bound is None else min(lab().last, bound)


def player(error: str | None):
    feed().bound = stage_bound()  # the lecturer's place may have moved since the request was served
    message = feed().message(lab(), run_header(lab(), model_line(), title(lab().frame), current_lang(),
                                               upto=feed().bound))
    message.update(present=bool(st.session_state.presentation), error=error, titles=titles(), leads=is_lecturer(),
                   bound_note=t("class.bound_note"))
    _player()(data=message, key=PLAYER_KEY, on_request_change=_on_player_request,
              on_frame_change=_on_player_frame, on_play_change=_on_player_play)


def model_line() -> str:
    """The stage header's second line: the model, the scheduler that decides the run, the engine's options."""
    return f"{model_name()}{t('stage.scheduler', scheduler=t(scheduler_info(lab().scheduler).run_name))}{modes()}"


def modes() -> str:
    options = lab().options_in_effect()
    return (t("stage.mode_overlap") if options.overlap else "") + (t("stage.mode_adaptive") if options.adaptive
                                                                    else "")


def model_name() -> str:
    """The model the run steps on; the player tells the real model by its name's start, SmolLM2."""
    if lab().is_trace:
        return t("stage.recorded_trace")
    if lab().inputs.runner == "model":
        return t("stage.real_model", device=st.session_state.get('model_device') or t("stage.its_device"))
    return t("stage.fake_model")


def title(frame) -> str:
    """The run's title, naming the settings of the frame shown where they differ from the scenario's."""
    if lab().is_trace:
        return run_title()
    moving = ("max_num_seqs",) if lab().options_in_effect().adaptive else ()  # the controller moves it
    return title_in_effect(run_title(), lab().inputs.config, frame.config, ignore=moving, lang=current_lang())


def handout(whole: bool = False) -> Handout:
    """The run on screen, for its handout: frames, key frames, titles and changes as the stage shows them. Its
    frames: those stepped to, or (`whole`) the whole run, computed to its end within the handout's bound; a
    follower's, while a question is open, no further than the lecturer's frame."""
    here, lang, bound = lab(), current_lang(), stage_bound()
    last = here.last if bound is not None or not whole else max(here.last, compute_whole_run(here, MAX_HANDOUT_FRAMES))
    changes = () if here.is_trace else here.shared_run.spec.changes
    return Handout(run_title(), "" if here.is_trace else run_narrative(), model_line(),
                   FirstFrames(here.frames, last if bound is None else min(last, bound)), lang,
                   run_header(here, "", "", lang, upto=bound)["key_frames"], titles(),
                   tuple(c for c in changes if bound is None or c.step <= bound), here.cursor,
                   here.scheduler,  # a trace's as it records it
                   not here.is_trace and here.inputs.runner == "model")


def kept_out_notice():
    """A run too large for the run cache is computed for this student alone: said once it is."""
    if not lab().is_trace and lab().kept_out:
        cache = lab().cache
        st.info(t("stage.kept_out", mb=f"{lab().nbytes / 2**20:.0f}", share=f"{cache.share_bytes / 2**20:.0f}"),
                icon=":material/memory:")


def titles() -> list[list]:
    """[first frame, title] of each stretch of frames run under the same settings (a change made at frame k runs
    from step k + 1): the player titles each frame it holds by the settings that frame ran under."""
    if lab().is_trace:
        return [[0, run_title()]]
    starts, last = sorted({0, *(at + 1 for at, _ in lab().engine.config_changes)}), furthest()
    return [[start, title(lab().frames[start])] for start in starts if start <= last]


def settings_notice():
    """A settings change made at the frame shown, told before its step runs."""
    frame = lab().frame
    if not lab().is_trace and (change := pending_change(frame, lab().config_in_effect(), current_lang())):
        st.info(change, icon=":material/tune:")


def texts():
    frame = lab().frame
    lang = current_lang()
    rows = request_texts(frame, lang)
    if not rows:
        st.caption(t("stage.no_request"))
        return
    if not lab().is_trace and lab().inputs.runner == "model":
        st.caption(model_caveat(lang))
    max_model_len = frame.config.max_model_len
    lines = [f"<div style='margin:0.2rem 0'><b style='color:{request_color(r.request_id)}'>ID:{r.request_id}</b> "
             f"<span style='color:#7B8794'>{r.status} · {progress_text(r, max_model_len, lang)} · "
             f"{html.escape(t('stage.prompt', prompt=r.prompt))}</span><br><code style='white-space:pre-wrap'>"
             f"{html.escape(r.output or t('stage.nothing_yet'))}</code></div>" for r in rows]
    st.markdown("".join(lines), unsafe_allow_html=True)


def charts():
    history = lab().history()[-CHART_STEPS:]  # the last CHART_STEPS frames: a long run's charts stay light
    step, lang = lab().cursor, current_lang()
    if len(history) < step + 1:
        st.caption(t("stage.last_steps", n=f"{CHART_STEPS:,}"))
    cols = st.columns(2)
    cols[0].plotly_chart(queues_and_kv_figure(history, step, lang=lang), config=PLOT_CONFIG, key="chart_queues")
    cols[1].plotly_chart(batch_figure(history, step, lang=lang), config=PLOT_CONFIG, key="chart_batch")
    st.plotly_chart(segments_figure(lab().timeline(), step, lang=lang), config=PLOT_CONFIG, key="chart_timeline")
    engine = lab().engine
    timings = frame_timings(history, step, WINDOW)
    if timings:
        measured = "simulated" if engine is None or engine.runner_kind == "fake" else "measured"
        title = t("chart.overlap_title", n=len(timings), clock=t(f"chart.overlap_{measured}"))
        st.plotly_chart(overlap_timeline_figure(timings, title, current_step=step, lang=lang),
                        config=PLOT_CONFIG, key="chart_overlap")
    if (controller := lab().options_in_effect().adaptive) is not None:  # the sidebar's, at the frame shown
        st.plotly_chart(adaptive_batch_figure(history, controller, wall=engine.runner_kind != "fake",
                                              current_step=step, lang=lang), config=PLOT_CONFIG, key="chart_adaptive")


def metrics():
    run, requests, speculation = lab().metrics()
    lang = current_lang()
    st.caption(t("stage.metrics_caption", frame=lab().cursor, clock=clock("simulated", lang),
                 metrics=metric_definitions(lang)))
    st.dataframe(run_summary(run, lang), hide_index=True)
    st.dataframe(as_table(request_rows(requests, lang)), hide_index=True, width="stretch")
    if sentence := speculation_sentence(speculation, lang):
        st.caption(sentence)


def lower_views():
    """The views drawn on the server, at the frame the player last stopped at."""
    # Only the chosen view is drawn: charts over time cost the browser more than the whole frame.
    views = {"text": texts, "charts": charts, "metrics": metrics, "legend": legend,
             "handout": lambda: handout_view(handout(), lambda: handout(whole=True))}
    lang = current_lang()
    shown = st.segmented_control(t("stage.below"), list(views), key="lower_view", default="text",
                                 format_func=lambda v: text(lang, f"stage.view.{v}"), label_visibility="collapsed",
                                 help=t("stage.below_help"))
    if shown is not None:
        views[shown]()


def legend():
    """What every mark of the stage means (viz.glossary: the browser-side player shows the same marks)."""
    lang = current_lang()
    st.markdown("\n".join(f"- {line}" for line in legend_lines(lang)))
    st.caption(t("legend.clocks", simulated=clock("simulated", lang), real=clock("real", lang),
                 metrics=metric_definitions(lang)))


def stage():
    @st.fragment
    def live():
        # a fragment's rerun runs only this, not the page's own guard nor its share of the model
        with logged("stepping the stage"), as_this_session():
            error = serve_player()
            take_seat()
            follow_lead(in_fragment=True)
            keep_within_bound()  # while a question is open, nothing below draws from a frame past the lecturer's
            publish_lead()  # the lecturer's step reaches the class before the lecturer's own page is drawn
            # A follower's stage is what the lecturer moves it to: no Run N, Reset or link of its own (breaking away
            # gives them back); it is redrawn at every move of the lecturer's, for every student, so it stays light.
            following, leading = is_following(), is_lecturer()
            notice, stage_slot = st.container(), st.container()  # drawn first, filled once Run N and Reset acted
            if not following:
                controls()
            if st.session_state.notice:
                notice.warning(said(st.session_state.notice))
            with stage_slot:
                if leading:
                    desk()  # a fragment redrawn every few seconds: only on the lecturer's page
                class_banner()
                kept_out_notice()
                settings_notice()
                player(error)
                note_seen()  # a tab on its own: how far the frames just sent go
            predict()
            assignment_panel()
            if not following:
                copy_link(url_params())
            lower_views()
            sync_url(url_params())
            publish_lead()  # again: Run N steps moved the cursor meanwhile
            note_attendance(lab())
            feed().compute_ahead(lab())  # the answer is on its way: the engine goes on meanwhile

    live()
    print_layout(handout())  # outside the fragment: sent with a page run, not with each of the stage's steps
