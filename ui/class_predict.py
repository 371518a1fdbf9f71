"""Predict, then reveal in a class: each named student sends an answer (one per student, their last counts), the
lecturer sees how the class answered (counts per choice, how many answered), reveals it for everyone, closes it or
asks it again; the counts stay beside the answer after the reveal (session/classroom.py keeps the polls)."""

from __future__ import annotations

import streamlit as st

from session.classroom import ClassError, Poll
from ui.class_identity import browser_token
from ui.classroom import is_following, is_lecturer, my_name, room
from ui.language import t
from ui.state import feed, lab
from ui.wake import this_session
from viz.predict import Question


def class_poll(question: Question) -> Poll | None:
    """The class's poll on this question, for its lecturer (who opens it) and the students following (who find the
    lecturer's), while the lecturer's predictions are on; None otherwise."""
    here = room()
    if here is None or not (is_lecturer() or is_following()):
        return None
    return here.question(browser_token(), lab().title, question.step, question.text, question.choices,
                         question.answer)


def lecturers_predictions() -> bool | None:
    """For a student following: whether the lecturer's predictions are on (their toggle shows it, and only the
    lecturer's switches it); None for anyone else."""
    here = room()
    if here is None or is_lecturer() or not is_following():
        return None
    lead = here.lead
    return lead is not None and lead.predicting


def revealed_poll(step: int) -> Poll | None:
    """The class's poll on `step` (the frame shown), once the lecturer revealed it."""
    here = room()
    if here is None or not (is_lecturer() or is_following()):
        return None
    poll = here.polls.at(lab().title, step)
    return poll if poll is not None and poll.revealed else None


def before_reveal(poll: Poll, question: Question):
    """The lecturer's tally and controls, or a student's answer (the reveal takes the class to the step)."""
    if is_lecturer():
        tally(poll, question.choices)
        controls(poll)
    elif poll.open:
        vote(poll, question)
    else:
        st.caption(t("class.closed"))


def voted_right(poll: Poll) -> bool | None:
    """Whether this student's answer was right; None when they sent none."""
    choice = room().vote_of(browser_token(), poll)
    return None if choice is None else choice == poll.answer


def tally(poll: Poll, choices: tuple[str, ...]):
    """The counts per choice (the right one marked once revealed) and how many of those following answered."""
    counts, following = poll.counts(), room().heads().following_named
    lines = [f"- {'✅ ' if poll.revealed and i == poll.answer else ''}{choice}: **{n}**"
             for i, (choice, n) in enumerate(zip(choices, counts, strict=True))]
    st.markdown("\n".join(lines))
    st.caption(t("class.answered", answered=len(poll.votes), students=following))


def controls(poll: Poll):
    cols = st.columns(3)
    if poll.open:
        cols[0].button(t("class.reveal"), key=f"class_reveal_{poll.step}", type="primary", on_click=_reveal,
                       args=(poll,), width="stretch")
        cols[1].button(t("class.close_question"), key=f"class_close_{poll.step}", width="stretch",
                       on_click=lambda: room().close_poll(poll.title, poll.step))
    else:
        cols[0].caption(t("class.closed_lecturer"))
    cols[2].button(t("class.ask_again"), key=f"class_again_{poll.step}", width="stretch",
                   on_click=lambda: room().ask_again(poll.title, poll.step))


def _reveal(poll: Poll):
    """Reveal for everyone: the lecturer goes to the step asked about, and the class with them."""
    room().polls.reveal(poll.title, poll.step)
    lab().goto(poll.step)
    feed().moved_cursor()


def _send(poll: Poll, key: str):
    choice = st.session_state.get(key)
    if choice is not None and (session := this_session()):
        try:
            room().vote(session, poll.title, poll.step, int(choice))
        except ClassError as e:  # a tab of this browser broke away meanwhile: refused, and said so
            st.session_state.notice = e.message


def vote(poll: Poll, question: Question):
    if my_name() is None:
        st.caption(t("class.name_to_answer"))
        return
    if room().vote_closed(browser_token(), poll.title, poll.step):
        st.caption(t("class.vote_closed"))
        return
    key = f"class_choice_{poll.step}"
    st.radio(t("predict.choice"), range(len(question.choices)), index=None, key=key, horizontal=True,
             format_func=lambda i: question.choices[i], label_visibility="collapsed")
    st.button(t("class.send"), key=f"class_send_{poll.step}", type="primary", on_click=_send, args=(poll, key))
    if (choice := room().vote_of(browser_token(), poll)) is not None:
        st.caption(t("class.sent", answer=question.choices[choice]))
