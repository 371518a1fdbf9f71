"""The stage: stepping controls, the frame slider, and what the frame shows. It is one fragment, so stepping
and playing redraw only the stage, never the whole page."""

from __future__ import annotations

import html

import streamlit as st

from engine.metrics import run_metrics, speculation_metrics
from session.lab import LabError
from ui.state import USER_ERRORS, lab, report, settings_in_effect, sync_url
from viz.adaptive import adaptive_batch_figure
from viz.block_grid import block_grid_figure, block_tables_figure
from viz.charts import batch_figure, queues_and_kv_figure
from viz.colors import request_color
from viz.glossary import CLOCKS, MODEL_CAVEAT, legend_lines, metric_definitions
from viz.key_strip import key_frame_strip
from viz.metrics_table import request_rows, run_summary, speculation_sentence
from viz.narrate import key_frame_note, narrate
from viz.overlap import WINDOW, frame_timings, overlap_timeline_figure
from viz.queues import queue_figure
from viz.sizing import sizing_for
from viz.texts import pending_change, progress_text, request_texts, title_in_effect
from viz.timeline import timeline_figure

SPEEDS = {"slow (1 step/s)": 1.0, "normal (2 steps/s)": 0.5, "fast (5 steps/s)": 0.2}
PLOT_CONFIG = {"displayModeBar": False}


def _attempt(action, *args):
    try:
        action(*args)
        st.session_state.notice = None
    except USER_ERRORS as e:
        report(e)


def _on_slider():
    _attempt(lab().goto, st.session_state.frame_slider)


def _on_reset():
    st.session_state.playing = False
    _attempt(lab().reset)


def _jump_to(step: int):
    """Jump to a key frame, running the engine up to it when it is not recorded yet."""
    def jump():
        if step > lab().last:
            lab().goto(lab().last)
            lab().run(step - lab().last)
        lab().goto(step)
    _attempt(jump)


def _run_steps(steps: int):
    """Run N steps with a progress bar; stopping early (the run is over) is reported."""
    bar = st.progress(0.0, f"Running {steps} steps")
    try:
        done = lab().run(steps, lambda n: bar.progress(n / steps, f"Step {lab().cursor} ({n} of {steps})"))
    finally:
        bar.empty()
    if done < steps:
        raise LabError(f"Stopped after {done} of {steps} steps: the run is over.")


def _escape(text: str) -> str:
    return text.replace("_", "\\_").replace("*", "\\*")


def controls():
    cols = st.columns([1, 1, 1, 1.3, 0.9, 1.2, 1.6])
    cols[0].button("⟲ Reset", on_click=_on_reset, width="stretch", disabled=lab().is_trace)
    cols[1].button("◀ Back", on_click=_attempt, args=(lab().back,), width="stretch")
    step_clicked = cols[2].button("Step ▶", width="stretch", type="primary")
    run_clicked = cols[3].button("Run N steps ▶▶", width="stretch")
    cols[4].number_input("N", 1, 10_000, 10, key="run_n", label_visibility="collapsed")
    # A toggle, not a button: its state survives the timer's reruns, where a button's click could be lost.
    cols[5].toggle("Play ▶", key="playing", help="Step automatically at the chosen speed; switch off to pause.")
    cols[6].selectbox("speed", list(SPEEDS), index=1, key="speed", label_visibility="collapsed")
    if play_interval() != st.session_state.play_interval:
        st.session_state.notice = None
        st.rerun()  # the whole page: the stage's timer starts, stops or changes speed
    if step_clicked:
        with st.spinner(f"Running step {lab().cursor + 1}"):
            _attempt(lab().step)
    if run_clicked:
        _attempt(_run_steps, int(st.session_state.run_n))


def slider():
    if lab().last == 0:
        st.caption("Frame 0 of 0: the empty start. Step to run the scheduler.")
        return
    st.session_state.frame_slider = lab().cursor
    st.slider("Frame", 0, lab().last, key="frame_slider", on_change=_on_slider)
    if strip := key_frame_strip(lab().key_steps, lab().last, lab().cursor):
        st.markdown(strip, unsafe_allow_html=True)


def key_frames():
    steps = lab().key_steps
    if not steps:
        return
    cols = st.columns([1.2] + [1] * len(steps) + [max(1, 8 - len(steps))])
    cols[0].markdown("**Key frames**")
    for col, step in zip(cols[1:], steps, strict=False):
        marker = "★ " if step == lab().cursor else ""
        notes = [key_frame_note(k, lab().frames) for k in lab().key_frames_at(step)] if step <= lab().last else []
        col.button(f"{marker}step {step}", key=f"key_{step}", on_click=_jump_to, args=(step,), width="stretch",
                   help=" ".join(text for text, _ in notes) or " ".join(k.note for k in lab().key_frames_at(step)),
                   type="tertiary" if any(not holds for _, holds in notes) else "secondary")
    for here in lab().key_frames_at(lab().cursor):
        text, holds = key_frame_note(here, lab().frames)
        if holds:
            st.info(_escape(text), icon=":material/star:")
        else:  # greyed: a branched run no longer shows what the note says
            st.markdown(f"<div style='color:#9AA5B1'>☆ {html.escape(text)}</div>", unsafe_allow_html=True)


def header():
    frame = lab().frame
    m = frame.metrics
    st.markdown(f"### {title(frame)}")
    st.caption(f"Frame **{frame.step}** of {lab().last} · {frame.batch.kind} batch · "
               f"{m.num_running} running, {m.num_waiting} waiting · KV {m.kv_usage:.0%} used · "
               f"simulated clock: {frame.sim_time_s:.3f} s{measured(frame)} · {model_name()}{modes()}")
    if not lab().is_trace and (change := pending_change(frame.config, lab().config_in_effect(), frame.step)):
        st.info(change, icon=":material/tune:")


def title(frame) -> str:
    """The run's title, naming the settings of the frame shown where they differ from the scenario's."""
    if lab().is_trace:
        return lab().title
    moving = ("max_num_seqs",) if lab().options_in_effect().adaptive else ()  # the controller moves it
    return title_in_effect(lab().title, lab().inputs.config, frame.config, ignore=moving)


def measured(frame) -> str:
    """On the real model, what the step really took here (the simulated clock is the cost model's)."""
    if lab().is_trace or lab().inputs.runner != "model" or frame.step == 0:
        return ""
    return f" · real time of this step: {1000 * (frame.wall_schedule_s + frame.wall_model_s):.0f} ms"


def modes() -> str:
    options = lab().options_in_effect()
    return (" · overlapped scheduling" if options.overlap else "") + (" · adaptive batch size" if options.adaptive
                                                                      else "")


def model_name() -> str:
    if lab().is_trace:
        return "recorded trace"
    if lab().inputs.runner == "model":
        return f"SmolLM2-135M on {st.session_state.get('model_device') or 'its device'}"
    return "fake model"


def narration(frame):
    st.markdown("#### What happened and why")
    lines = narrate(frame, lab().frames[frame.step - 1] if frame.step else None)
    st.markdown(f"**{_escape(lines[0])}**")
    st.markdown("\n".join(f"- {_escape(line)}" for line in lines[1:]) or "_No scheduling decisions this step._")


def texts(frame):
    rows = request_texts(frame)
    if not rows:
        st.caption("No request has arrived yet.")
        return
    if not lab().is_trace and lab().inputs.runner == "model":
        st.caption(MODEL_CAVEAT)
    max_model_len = frame.config.max_model_len
    lines = [f"<div style='margin:0.2rem 0'><b style='color:{request_color(r.request_id)}'>ID:{r.request_id}</b> "
             f"<span style='color:#7B8794'>{r.status} · {progress_text(r, max_model_len)} · prompt "
             f"{html.escape(r.prompt)}</span><br><code style='white-space:pre-wrap'>"
             f"{html.escape(r.output) or '(nothing yet)'}</code></div>" for r in rows]
    st.markdown("".join(lines), unsafe_allow_html=True)


def charts():
    history = lab().history()
    step = lab().cursor
    cols = st.columns(2)
    cols[0].plotly_chart(queues_and_kv_figure(history, step), config=PLOT_CONFIG, key="chart_queues")
    cols[1].plotly_chart(batch_figure(history, step), config=PLOT_CONFIG, key="chart_batch")
    st.plotly_chart(timeline_figure(history, step), config=PLOT_CONFIG, key="chart_timeline")
    engine = lab().engine
    timings = frame_timings(history, step, WINDOW)
    if timings:
        clock = "simulated by the cost model" if engine is None or engine.runner_kind == "fake" else "measured"
        st.plotly_chart(overlap_timeline_figure(timings, f"Scheduling and model work, last {len(timings)} steps "
                                                         f"({clock})", current_step=step),
                        config=PLOT_CONFIG, key="chart_overlap")
    if (controller := lab().options_in_effect().adaptive) is not None:  # the sidebar's, at the frame shown
        st.plotly_chart(adaptive_batch_figure(history, controller, wall=engine.runner_kind != "fake",
                                              current_step=step), config=PLOT_CONFIG, key="chart_adaptive")


def metrics():
    run, requests = run_metrics(lab().history())
    st.caption(f"Up to frame {lab().cursor}. Seconds are read off the {CLOCKS['simulated']}. {metric_definitions()} "
               "A dash: not known yet.")
    st.dataframe(run_summary(run), hide_index=True)
    st.dataframe(request_rows(requests), hide_index=True, width="stretch")
    if sentence := speculation_sentence(speculation_metrics(lab().history())):
        st.caption(sentence)


def frame_views():
    frame = lab().frame
    sizing = sizing_for(st.session_state.presentation)
    st.plotly_chart(queue_figure(frame, "running", sizing), config=PLOT_CONFIG, key="running_queue")
    st.plotly_chart(queue_figure(frame, "waiting", sizing), config=PLOT_CONFIG, key="waiting_queue")
    left, right = st.columns([3, 2], gap="large")
    left.plotly_chart(block_grid_figure(frame, sizing), config=PLOT_CONFIG, key="block_grid")
    left.plotly_chart(block_tables_figure(frame, sizing), config=PLOT_CONFIG, key="block_tables")
    with right:
        narration(frame)
    # Only the chosen view is drawn: charts over time cost the browser more than the whole frame.
    shown = st.segmented_control("Below", ["Generated text", "Charts over time", "Metrics", "Legend"],
                                 key="lower_view", default="Generated text", label_visibility="collapsed",
                                 help="Click the chosen view again to hide it.")
    if shown == "Generated text":
        texts(frame)
    elif shown == "Charts over time":
        charts()
    elif shown == "Metrics":
        metrics()
    elif shown == "Legend":
        legend()


def legend():
    """What every mark of the stage means (viz.glossary: the browser-side player shows the same legend)."""
    st.markdown("\n".join(f"- {line}" for line in legend_lines()))
    st.caption(f"The two clocks: {CLOCKS['simulated']}; {CLOCKS['real']}. {metric_definitions()}")


def _advance_if_playing():
    if not st.session_state.playing:
        return
    if lab().is_over:
        st.session_state.playing = False
        report(LabError("Paused: the run is over."))
        st.rerun()  # the whole page, so the timer stops
    _attempt(lab().step)


def play_interval() -> float | None:
    """Seconds between two steps while playing, None when paused."""
    return SPEEDS.get(st.session_state.get("speed"), 0.5) if st.session_state.playing else None


def stage():
    st.session_state.play_interval = play_interval()

    @st.fragment(run_every=st.session_state.play_interval)
    def live():
        _advance_if_playing()
        header_slot = st.container()
        controls()  # Step and Run act here, so the header above is written after them
        if not st.session_state.playing and settings_in_effect() != st.session_state.get("sidebar_settings"):
            st.rerun()  # the whole page, so the sidebar shows the settings of the frame moved to
        with header_slot:
            header()
        if st.session_state.notice:
            st.warning(st.session_state.notice)
        slider()
        key_frames()
        frame_views()
        sync_url()

    live()
