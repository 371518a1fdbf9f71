"""Predict, then reveal (optional): before the next key frame, ask what will happen there, then show the
answer and the step's narration. Questions come from viz/predict.py; the score is kept per scenario in this
browser session."""

from __future__ import annotations

import streamlit as st

from i18n import Message
from ui.class_predict import before_reveal, class_poll, voted_right
from ui.language import current_lang, t
from ui.state import USER_ERRORS, feed, lab, report
from viz.narrate import narrate
from viz.predict import Question, question_for, question_steps


def scores() -> dict[str, dict[int, bool]]:
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
        st.session_state.notice = Message("predict.pick_first")
        return
    scores().setdefault(lab().title, {})[question.step] = choice == question.answer_text


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
    if not st.toggle(t("predict.toggle"), key="predict_mode", help=t("predict.toggle_help")):
        return
    answers = scores().setdefault(lab().title, {})
    score = st.empty()  # filled last: a class's reveal, drawn below, adds this learner's answer
    ask(answers)
    score.caption(t("predict.score", right=sum(answers.values()), total=len(answers)))


def ask(answers: dict[int, bool]):
    """The question about the next key frame, or its answer once revealed."""
    step = _next_step()
    try:
        frames = _frames_up_to(step) if step is not None else None
    except USER_ERRORS as e:
        report(e)
        frames = None
    if frames is None:
        st.caption(t("predict.nothing_left"))
        return
    question = question_for(*frames, current_lang())
    with st.container(border=True):
        st.markdown(t("predict.ask", question=question.text))
        if (poll := class_poll(question)) is not None:  # in a class, the lecturer reveals it for everyone
            if not before_reveal(poll, question):
                if (right := voted_right(poll)) is not None:
                    answers[step] = right
                revealed(question, frames[1], right)
            return
        if step in answers:
            revealed(question, frames[1], answers[step])
            return
        st.radio(t("predict.choice"), question.choices, index=None, key=f"predict_choice_{step}",
                 label_visibility="collapsed", horizontal=True)
        st.button(t("predict.reveal"), key=f"predict_reveal_{step}", on_click=_check, args=(question,),
                  type="primary")


def revealed(question: Question, after, right: bool | None):
    """The answer (right or not, when the learner answered), the step's narration and a button to go there."""
    lang = current_lang()
    if right is None:
        st.markdown(t("predict.answer", answer=question.answer_text))
    else:
        st.markdown(t("predict.right" if right else "predict.wrong", answer=question.answer_text))
    st.markdown("\n".join(f"- {_literal(line)}" for line in narrate(after, lang=lang)))
    st.button(t("predict.go", step=question.step), key=f"predict_go_{question.step}", on_click=_go_to,
              args=(question.step,))
