"""Predict, then reveal (optional): before the next key frame, ask what will happen there, then show the
answer and the step's narration. Questions come from viz/predict.py; the score is kept per scenario in this
browser session."""

from __future__ import annotations

import streamlit as st

from ui.state import USER_ERRORS, feed, lab, report
from viz.narrate import narrate
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
    choice = st.session_state.get(f"predict_choice_{question.step}")
    if choice is None:
        st.session_state.notice = "Pick an answer first."
        return
    _scores().setdefault(lab().title, {})[question.step] = choice == question.answer_text


def _literal(text: str) -> str:
    """Narration as plain text in Markdown (field names such as max_model_len hold underscores)."""
    return text.replace("_", "\\_").replace("*", "\\*")


def _go_to(step: int):
    try:
        lab().goto(step)
        feed().moved_cursor()  # the player jumps there too
        st.session_state.notice = None
    except USER_ERRORS as e:
        report(e)


def predict():
    """The toggle and, while it is on, the question about the next key frame (or its answer)."""
    if not st.toggle("Predict, then reveal", key="predict_mode",
                     help="Before each key frame, guess what the scheduler will do; then see the answer."):
        return
    answers = _scores().get(lab().title, {})
    right = sum(answers.values())
    st.caption(f"Your predictions in this scenario: {right} of {len(answers)} right.")
    step = _next_step()
    try:
        frames = _frames_up_to(step) if step is not None else None
    except USER_ERRORS as e:
        report(e)
        frames = None
    if frames is None:
        st.caption("Nothing left to predict in this run.")
        return
    question = question_for(*frames)
    with st.container(border=True):
        st.markdown(f"**Predict:** {question.text}")
        if step in answers:
            verdict = "Right" if answers[step] else "Not quite"
            st.markdown(f"{verdict}: the answer is **{question.answer_text}**.")
            st.markdown("\n".join(f"- {_literal(line)}" for line in narrate(frames[1])))
            st.button(f"Go to step {step} ▶", key=f"predict_go_{step}", on_click=_go_to, args=(step,))
            return
        st.radio("Your prediction", question.choices, index=None, key=f"predict_choice_{step}",
                 label_visibility="collapsed", horizontal=True)
        st.button("Reveal", key=f"predict_reveal_{step}", on_click=_check, args=(question,), type="primary")
