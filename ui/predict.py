"""Predict, then reveal (optional): before the next key frame, ask what will happen there, then show the
answer beside the frame it is about (the stage narrates why). Questions come from viz/predict.py; the score is
kept per scenario in this browser session."""

from __future__ import annotations

import streamlit as st

from i18n import Message
from session.classroom import Poll
from ui.class_predict import before_reveal, class_poll, lecturers_predictions, revealed_poll, tally, voted_right
from ui.classroom import is_lecturer
from ui.language import current_lang, t
from ui.state import USER_ERRORS, feed, lab, report
from viz.predict import Question, question_for, question_steps


def _scores() -> dict[str, dict[int, bool]]:
    """{scenario title: {step: answered right}}, this session's answers."""
    return st.session_state.setdefault("predict_scores", {})


def _next_step() -> int | None:
    """The next step to ask about after the cursor: a key frame (or, without key frames, a step with a
    decision); on a run without recorded decisions ahead, the next step."""
    here = lab()
    ahead = [s for s in question_steps(here.key_steps, here.frames, here.last) if s > here.cursor]
    if ahead:
        return ahead[0]
    if here.key_steps or here.is_trace or here.is_over:
        return None
    return here.cursor + 1


def _frames_up_to(step: int):
    """Frames `step - 1` and `step`, running the engine ahead if needed; the cursor stays where it was."""
    here = lab()
    if step > here.last:
        cursor = here.cursor
        here.goto(here.last)
        here.run(step - here.last)
        here.goto(cursor)
    if step > here.last:
        return None
    return here.frames[step - 1], here.frames[step]


def _check(question: Question):
    """Score the choice, then show the step asked about: the answer is revealed beside its own frame."""
    choice = st.session_state.get(f"predict_choice_{question.step}")
    if choice is None:
        st.session_state.notice = Message("predict.pick_first")
        return
    _scores().setdefault(lab().title, {})[question.step] = choice == question.answer_text
    _go_to(question.step)


def _go_to(step: int):
    try:
        lab().goto(step)
        feed().moved_cursor()  # the player jumps there too
        st.session_state.notice = None
    except USER_ERRORS as e:
        report(e)


def _revealed(step: int, right: bool | None, poll: Poll | None):
    """The answer about the frame shown (a step answered before, or revealed to a class), beside it: the stage
    narrates why. `right` is None for whoever did not answer (the lecturer, who sees how the class answered)."""
    here, lang = lab(), current_lang()
    question = question_for(here.frames[step - 1], here.frames[step], lang)
    with st.container(border=True):
        st.markdown(t("predict.ask", question=question.text))
        said = "predict.answer" if right is None else "predict.right" if right else "predict.wrong"
        st.markdown(t(said, answer=question.answer_text))
        if poll is not None and is_lecturer():
            tally(poll, question.choices)
        st.caption(t("predict.why_beside"))


def predict():
    """The toggle and, while it is on, the question about the next key frame (after the answer about the frame
    shown, when it was asked about)."""
    if (lecturers := lecturers_predictions()) is not None:
        st.session_state.predict_mode = lecturers
    if not st.toggle(t("predict.toggle"), key="predict_mode", disabled=lecturers is not None,
                     help=t("predict.toggle_lecturers" if lecturers is not None else "predict.toggle_help")):
        return
    answers, cursor = _scores().setdefault(lab().title, {}), lab().cursor
    score = st.empty()  # filled last: a class's reveal, read below, adds this learner's answer
    if (poll := revealed_poll(cursor)) is not None and (right := voted_right(poll)) is not None:
        answers[cursor] = right
    if cursor in answers or poll is not None:
        _revealed(cursor, answers.get(cursor), poll)
    _ask()
    if not is_lecturer():  # the lecturer reveals, and answers nothing
        score.caption(t("predict.score", right=sum(answers.values()), total=len(answers)))


def _ask():
    """The question about the next key frame: this learner's to reveal, or in a class the lecturer's."""
    step = _next_step()
    try:
        frames = _frames_up_to(step) if step is not None else None
    except USER_ERRORS as e:
        report(e)
        frames = None
    if frames is None:
        st.caption(t("predict.nothing_left"))
        return
    question = question_for(*frames, current_lang(), shown=lab().cursor)
    with st.container(border=True):
        st.markdown(t("predict.ask", question=question.text))
        if (poll := class_poll(question)) is not None:
            before_reveal(poll, question)
            return
        if lecturers_predictions():  # following: the lecturer's question, once their page asks it
            st.caption(t("class.not_asked_yet"))
            return
        st.radio(t("predict.choice"), question.choices, index=None, key=f"predict_choice_{step}",
                 label_visibility="collapsed", horizontal=True)
        st.button(t("predict.reveal"), key=f"predict_reveal_{step}", on_click=_check, args=(question,),
                  type="primary")
