"""Coding assignments on the page, in a class (session/coding.py keeps them, session/coding_grade.py grades): under
the stage the lecturer sets one (a starter, the workloads, the goals) and sees each student's latest graded hand-in
per goal and workload (the table and exports of ui/assignment.py), and opens any of them on the stage (the
projector); a student reads each assignment, writes their code from its starter and hands it in (`hand_in_block`:
the Workbench calls it with its editor's code), then sees the server's grade. The page sends code and an
assignment's name, never a verdict: the server grades the code. A hand-in opens on the stage (the code run again in
the sandbox on one workload, its trace read-only) for the lecturer and its author only, from the page or from the
gradebook's link (`?class=CODE&submission=ID`: `open_from_url`)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable

import streamlit as st

from engine.inputs.assignment import Goal
from engine.inputs.goals import MOST_STEPS, PASS, STATS
from engine.run.metrics import LATENCY_SPANS
from i18n import Message, MessageError
from scheduler.factory import DEFAULT_KIND, SCHEDULER_KINDS
from session.classroom import Classroom
from session.coding import SUBMISSION_PARAM, CodingAssignment, checked, hand_in_id
from session.lab import open_trace
from ui.assignment import ICONS, submissions, summary
from ui.class_desk import ROSTER_EVERY_S
from ui.class_identity import browser_token
from ui.classroom import is_lecturer, my_name, room
from ui.language import current_lang, said, t
from ui.state import presets

GRADING_POLL_S = 2  # a student's page looks for its grade so often while its hand-in is being graded
SENT = "coding_sent"  # session-state key: {assignment: Message} what the last hand-in click was told
OPENED = "coding_opened_now"  # session-state key: a hand-in was opened from a fragment: the whole page reruns
WORKBENCH = "app_pages/workbench.py"  # where a student writes and hands in their code


def _starters():
    from starters import BY_ID, STARTERS, source  # the learner's files: read when a class sets coding work
    return STARTERS, BY_ID, source


def coding_panel():
    """Under the stepper's stage, in a class: its coding assignments; the lecturer's form to set one, and the
    hand-ins (redrawn every ROSTER_EVERY_S); a student's grade, and the way to the Workbench to write and hand in."""
    st.session_state.pop(OPENED, None)  # this whole run draws the stage it opened on
    here = room()
    if here is None:
        return
    lecturer = is_lecturer()
    if not lecturer and not here.coding.all():
        return
    with st.container(border=True):
        st.markdown(f"**{t('coding.title')}**")
        if lecturer:
            set_form(here)
            hand_ins()
            return
        for assignment in here.coding.all():
            with st.expander(t("coding.assignment", name=assignment.name), expanded=True):
                describe(assignment)
                st.page_link(WORKBENCH, label=t("coding.to_workbench"), icon=":material/code:")
                grade_view(here, assignment)


@st.fragment(run_every=ROSTER_EVERY_S)
def hand_ins():
    """The lecturer's view of each assignment, redrawn as the desk is: a hand-in graded meanwhile is counted."""
    if st.session_state.pop(OPENED, False):
        st.rerun()  # the whole page: its stage shows the hand-in opened
    here = room()
    if here is None or not is_lecturer():
        return
    for assignment in here.coding.all():
        with st.expander(t("coding.assignment", name=assignment.name), expanded=True):
            describe(assignment)
            lecturer_view(here, assignment)


def describe(assignment: CodingAssignment):
    """The task: its starter's words, the workloads, the goals."""
    _, by_id, _ = _starters()
    starter = by_id.get(assignment.starter)
    if starter is not None:
        st.markdown(f"**{t(starter.title)}** — {t(starter.task)}")
    st.caption(t("coding.workloads", names=t("list.sep").join(assignment.workloads)))
    st.caption("  \n".join(f"- {said(goal.words)}" for goal in assignment.goals))


# -- the lecturer's ------------------------------------------------------------------------------------------


def set_form(here: Classroom):
    """Set a coding assignment: a name, a starter, the workloads and the goals (every invariant holding, a latency at
    most a built-in kind's on the same workload, no request waiting past a bound)."""
    starters, _, _ = _starters()
    scenarios = presets()[0]
    lang = current_lang()
    with st.expander(t("coding.set"), icon=":material/assignment_add:"), st.form("coding_set", border=False):
        st.text_input(t("coding.name"), key="coding_name", max_chars=60)
        st.selectbox(t("coding.starter"), [s.id for s in starters], key="coding_starter",
                     format_func=lambda i: t(next(s for s in starters if s.id == i).title))
        st.multiselect(t("coding.workloads_pick"), list(scenarios), key="coding_workloads",
                       format_func=lambda n: f"{n}: {scenarios[n].title_in(lang)}")
        st.checkbox(t("goal.contract"), value=True, key="coding_contract")
        st.checkbox(t("coding.vs_on"), value=True, key="coding_vs")
        cols = st.columns(3)
        cols[0].selectbox(t("coding.metric"), LATENCY_SPANS, key="coding_metric",
                          format_func=lambda m: t(f"compare.latency.{m}"))
        cols[1].selectbox(t("coding.stat"), STATS, index=STATS.index("p95"), key="coding_stat")
        cols[2].selectbox(t("coding.baseline"), SCHEDULER_KINDS, index=SCHEDULER_KINDS.index(DEFAULT_KIND),
                          key="coding_baseline", format_func=lambda k: t(f"{k}.run_name"))
        st.number_input(t("coding.max_wait"), 0, MOST_STEPS, 0, key="coding_max_wait",
                        help=t("coding.max_wait_help"))
        if st.form_submit_button(t("coding.set_confirm"), type="primary"):
            _set(here)
    if said_back := st.session_state.get("coding_set_said"):
        ok, message = said_back
        (st.success if ok else st.error)(said(message))


def desk_goals(state) -> tuple[Goal, ...]:
    """The goals the lecturer's form asks for."""
    goals = [Goal("contract", ())] if state.get("coding_contract") else []
    if state.get("coding_vs"):
        goals.append(Goal("latency_vs", (("metric", state.coding_metric), ("stat", state.coding_stat),
                                         ("baseline", state.coding_baseline))))
    if wait := state.get("coding_max_wait"):
        goals.append(Goal("latency", (("metric", "queueing"), ("stat", "max"), ("at_most", float(wait)))))
    return tuple(goals)


def _set(here: Classroom):
    state = st.session_state
    _, by_id, _ = _starters()
    starter = by_id.get(state.get("coding_starter") or "")
    try:
        if not is_lecturer() or starter is None:  # a script may send the form all the same
            raise MessageError("coding.set_refused")
        assignment = checked(state.get("coding_name") or "", starter.id, starter.class_name,
                             [w for w in state.get("coding_workloads") or [] if w in presets()[0]], desk_goals(state))
        here.coding.set(assignment)
        state.coding_set_said = (True, Message("coding.set_done", name=assignment.name))
    except MessageError as e:
        state.coding_set_said = (False, e.message)


def lecturer_view(here: Classroom, assignment: CodingAssignment):
    """The hand-ins' table (ui/assignment.py's, one column per goal and workload) and opening one on the stage."""
    words = [Message("coding.on_workload", workload=w, goal=g.words) for w in assignment.workloads
             for g in assignment.goals]
    key = f"coding_{assignment.name}"
    submissions(assignment.name, words, key=key, drop=here.coding.drop)
    handed = here.submissions.of(assignment.name)
    if handed:
        names = {s.key: s for s in handed}
        cols = st.columns([2, 2, 1.4], vertical_alignment="bottom")
        who = cols[0].selectbox(t("assignment.col.name"), list(names), format_func=lambda k: names[k].name,
                                key=f"{key}_open_who")
        workload = cols[1].selectbox(t("coding.workload"), assignment.workloads, key=f"{key}_open_workload")
        cols[2].button(t("coding.open"), key=f"{key}_open", on_click=open_hand_in,
                       args=(_hand_in_id(names.get(who)), workload), width="stretch")
    st.button(t("coding.remove"), key=f"{key}_remove", icon=":material/delete:", on_click=here.coding.remove,
              args=(assignment.name,))


def _hand_in_id(submission) -> str:
    return (hand_in_id(submission) if submission is not None else None) or ""


# -- a student's ---------------------------------------------------------------------------------------------


def hand_in_block(code: Callable[[], tuple[str, str]]):
    """For the Workbench: in a class with coding assignments, hand in the editor's code (`code()`: its source and
    the class that is the scheduler, read when Hand in is clicked) on the assignment picked, and see its grade.
    Nothing outside a class."""
    here = room()
    assignments = [] if here is None else here.coding.all()
    if not assignments:
        return
    by_name = {a.name: a for a in assignments}
    with st.container(border=True):
        picked = by_name[st.selectbox(t("coding.hand_in_on"), list(by_name), key="coding_hand_in_on")]
        name = my_name()
        cols = st.columns([3, 2], vertical_alignment="center")
        cols[0].caption(t("coding.hand_in_as", name=name) if name else t("assignment.name_first"))
        cols[1].button(t("coding.hand_in"), type="primary", disabled=name is None, width="stretch",
                       key="coding_hand_in", on_click=_hand_in, args=(here, picked.name, code))
        if sent := st.session_state.get(SENT, {}).get(picked.name):
            st.error(said(sent))
        grade_view(here, picked, opens=False)  # the stage showing it is the stepper's


def _hand_in(here: Classroom, assignment: str, code: Callable[[], tuple[str, str]]):
    sent = st.session_state.setdefault(SENT, {})
    try:
        here.hand_in_code(browser_token(), assignment, *code())
        sent.pop(assignment, None)
    except MessageError as e:
        sent[assignment] = e.message


def grade_view(here: Classroom, assignment: CodingAssignment, opens: bool = True):
    """Being graded (the page looks again every GRADING_POLL_S), why it could not be, or the latest grade (`opens`:
    with a way to open it on this page's stage)."""
    key = here.names.key_of(browser_token())
    grading = here.coding.grading(key)
    if grading is not None and grading.error is None:
        _grading(here, assignment, grading.id)
        return
    if grading is not None:
        st.error(said(grading.error))
    mine = next((s for s in here.submissions.of(assignment.name) if s.key == key), None)
    if mine is None:
        return
    met = sum(v.state == PASS for _, v in mine.goals)
    (st.success if mine.passed else st.warning)(t("coding.graded", time=time.strftime(
        "%H:%M:%S", time.localtime(mine.at)), verdict=summary(mine.passed, met, len(mine.goals))))
    for goal, verdict in mine.goals:
        st.markdown(f"{ICONS[verdict.state]} **{said(goal)}** {said(verdict.reason)}")
    if not opens:
        return
    cols = st.columns([2, 1.4], vertical_alignment="bottom")
    workload = cols[0].selectbox(t("coding.workload"), assignment.workloads, key=f"coding_mine_{assignment.name}")
    cols[1].button(t("coding.open"), key=f"coding_open_mine_{assignment.name}", on_click=open_hand_in,
                   args=(_hand_in_id(mine), workload), width="stretch")


@st.fragment(run_every=GRADING_POLL_S)
def _grading(here: Classroom, assignment: CodingAssignment, hand_id: str):
    grading = here.coding.grading(here.names.key_of(browser_token()))
    if grading is None or grading.id != hand_id or grading.error is not None:
        st.rerun()  # graded (or refused): the whole page shows it
    st.info(t("coding.grading"), icon=":material/hourglass_empty:")


# -- opening a hand-in on the stage ---------------------------------------------------------------------------


def open_hand_in(hand_id: str, workload: str | None = None):
    """The hand-in run again in the sandbox on `workload` (its assignment's first by default), its trace on this
    page's stage; for the lecturer and its author only (anyone else is told why, in words)."""
    from session.coding_grade import run_again, why_stopped  # the sandbox: only once a hand-in is opened
    here = room()
    try:
        if here is None:
            raise MessageError("coding.no_class")
        hand, assignment = here.opened(browser_token(), hand_id)
        workload = workload if workload in assignment.workloads else assignment.workloads[0]
        ran = run_again(assignment, hand, workload)
        if ran.trace is None:
            raise MessageError("coding.not_opened", why=why_stopped(ran) or Message("coding.no_trace"))
        title = t("coding.trace_title", assignment=assignment.name, name=hand.name, workload=workload)
        st.session_state.lab = open_trace(json.dumps({**ran.trace, "title": title}).encode(), title)
        stopped = why_stopped(ran)
        st.session_state.notice = Message("coding.opened", name=hand.name, workload=workload) if stopped is None \
            else Message("coding.opened_stopped", name=hand.name, workload=workload, why=stopped)
        st.session_state[OPENED] = True
    except MessageError as e:
        st.session_state.notice = e.message


def open_from_url():
    """Once per session: a gradebook's link (`?class=CODE&submission=ID`) opens that hand-in on the stage (after the
    class is entered: ui/classroom.py `join_from_url`)."""
    state = st.session_state
    hand_id = st.query_params.get(SUBMISSION_PARAM)
    if not hand_id or state.get("coding_opened") == hand_id:
        return
    state.coding_opened = hand_id
    open_hand_in(hand_id)
