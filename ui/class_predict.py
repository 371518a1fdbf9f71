"""Predict, then reveal in a class: each student sends an answer, the lecturer sees how the class answered (counts
per choice, how many answered) and reveals it for everyone (session/classroom.py keeps the polls)."""

from __future__ import annotations

import streamlit as st

from session.classroom import Poll
from ui.classroom import is_following, is_lecturer, room
from ui.language import t
from ui.state import feed, lab
from ui.wake import this_session
from viz.predict import Question


def class_poll(question: Question) -> Poll | None:
    """The class's poll on this question, for its lecturer and the students following; None otherwise."""
    here = room()
    if here is None or not (is_lecturer() or is_following()):
        return None
    return here.poll(lab().title, question.step, question.text, question.choices, question.answer)


def revealed_poll(step: int) -> Poll | None:
    """The class's poll on `step` (the frame shown), once the lecturer revealed it."""
    here = room()
    if here is None or not (is_lecturer() or is_following()):
        return None
    poll = here.polls.get((lab().title, step))
    return poll if poll is not None and poll.revealed else None


def before_reveal(poll: Poll, question: Question):
    """The lecturer's tally and reveal button, or a student's answer (the reveal takes the class to the step)."""
    if is_lecturer():
        tally(poll, question)
    elif not poll.revealed:
        vote(poll, question)


def voted_right(poll: Poll) -> bool | None:
    """Whether this student's answer was right; None when they sent none."""
    choice = poll.votes.get(this_session() or "")
    return None if choice is None else choice == poll.answer


def tally(poll: Poll, question: Question):
    counts, here = poll.counts(), room()
    _, following = here.seats()
    lines = [f"- {'✅ ' if poll.revealed and i == poll.answer else ''}{choice}: **{n}**"
             for i, (choice, n) in enumerate(zip(question.choices, counts, strict=True))]
    st.markdown("\n".join(lines))
    st.caption(t("class.answered", answered=len(poll.votes), students=following))
    if not poll.revealed:
        st.button(t("class.reveal"), key=f"class_reveal_{poll.step}", type="primary", on_click=_reveal,
                  args=(poll,))


def _reveal(poll: Poll):
    """Reveal for everyone: the lecturer goes to the step asked about, and the class with them."""
    room().reveal(poll.title, poll.step)
    lab().goto(poll.step)
    feed().moved_cursor()


def _send(poll: Poll, key: str):
    choice = st.session_state.get(key)
    if choice is not None and (session := this_session()):
        room().vote(session, poll.title, poll.step, int(choice))


def vote(poll: Poll, question: Question):
    key = f"class_choice_{poll.step}"
    st.radio(t("predict.choice"), range(len(question.choices)), index=None, key=key, horizontal=True,
             format_func=lambda i: question.choices[i], label_visibility="collapsed")
    st.button(t("class.send"), key=f"class_send_{poll.step}", type="primary", on_click=_send, args=(poll, key))
    if (choice := poll.votes.get(this_session() or "")) is not None:
        st.caption(t("class.sent", answer=question.choices[choice]))
