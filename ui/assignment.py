"""An assignment on the page (engine/inputs/assignment.py holds it): under the stage, the goals of the scenario shown
with each one's verdict on the run up to the frame shown and the reason, the rules the run broke, and what may be
changed; the sidebar greys out the locked settings and says why (`locked`, `lock_note`). In a class a student
hands in the ended run under the name the class knows them by (bound to their browser: session/classroom.py), with
the link that reopens it (the server's, built from the run judged: never the page's address its browser reports);
the lecturer sees each name's latest verdicts (filtered, sorted, in pages), deletes one, and exports them
(session/submissions.py)."""

from __future__ import annotations

import time

import pandas as pd
import streamlit as st

from engine.inputs.assignment import RUN_SETTINGS, Assignment, Judgement
from engine.inputs.goals import FAIL, OPEN, PASS, gather
from engine.inputs.scenario import Scenario
from engine.run.limits import MAX_APP_STEPS
from i18n import Message, MessageError
from session.names import name_key, shown_name
from session.submissions import Submission
from ui.class_desk import WRAPPED_TABLES
from ui.class_identity import browser_token
from ui.classroom import is_following, is_lecturer, my_name, room
from ui.language import counted, current_lang, said, t
from ui.state import USER_ERRORS, feed, lab, presets, report, url_params
from viz.glossary import setting

ICONS = {PASS: ":green[:material/check_circle:]", FAIL: ":red[:material/cancel:]",
         OPEN: ":gray[:material/hourglass_empty:]"}  # Streamlit's icon font: drawn without an emoji font
MARKS = {PASS: "✓", FAIL: "✗", OPEN: "…"}  # in the lecturer's table, which draws text as it is
SIDEBAR_WORDS = {"overlap": "sidebar.overlap", "adaptive": "sidebar.adaptive", "scheduler": "sidebar.scheduler",
                 "runner": "sidebar.model", "seed": "sidebar.seed", "temperature": "sidebar.temperature",
                 "requests": "sidebar.add"}  # the sidebar's words for the run settings an assignment may free
RUN_TO_END_STEPS = 2000  # steps one click of "Run to the end" takes at most (a longer run: click again)


def current() -> tuple[Scenario, Assignment] | None:
    """The scenario of the run shown, with its assignment; None for a trace, a custom run or a scenario without."""
    here = lab()
    if here.is_trace or here.inputs.custom is not None:
        return None
    scenario = presets()[0].get(here.inputs.scenario_name)
    return None if scenario is None or scenario.assignment is None else (scenario, scenario.assignment)


def locked(name: str) -> bool:
    """Whether the assignment of the run shown locks the setting `name` (a config field or one of RUN_SETTINGS)."""
    found = current()
    return found is not None and found[1].locks(name)


def setting_words(name: str) -> str:
    return t(SIDEBAR_WORDS[name]) if name in RUN_SETTINGS else setting(name, current_lang())[0]


def lock_note():
    """Under a sidebar section whose settings the assignment locks: why they are greyed out."""
    found = current()
    if found is None:
        return
    free = found[1].may_change
    st.caption(":material/lock: " + (t("assignment.locked_note", names=t("list.sep").join(map(setting_words, free)))
                                     if free else t("assignment.locked_all_note")))


def judgement() -> Judgement:
    """The run up to the frame shown, judged (once per run, frame and end)."""
    scenario, assignment = current()
    here = lab()
    key = (here.shared_run.address, here.cursor, here.is_over)
    kept = st.session_state.get("assignment_judged")
    if kept is None or kept[0] != key:
        evidence = gather((here.frames[k] for k in range(here.cursor + 1)), here.is_over)
        kept = (key, assignment.judge(evidence, scenario.spec, here.shared_run.spec))
        st.session_state.assignment_judged = kept
    return kept[1]


def summary(passed: bool, met: int, n: int) -> str:
    return t("assignment.passed") if passed else t("assignment.failed", met=met, n=n)


def _run_to_end():
    if is_following():  # not offered to a follower (the lecturer moves their stage); a script may send the click
        return
    try:
        with st.spinner(t("assignment.run_to_end")):
            lab().run(min(RUN_TO_END_STEPS, MAX_APP_STEPS - lab().cursor))
        feed().moved_cursor()
    except USER_ERRORS as e:
        report(e)


def assignment_panel():
    """Under the stage, for a scenario with an assignment."""
    found = current()
    if found is None:
        return
    scenario, assignment = found
    judged = judgement()
    with st.container(border=True):
        st.markdown(f"**{t('assignment.title')}**")
        for goal, verdict in judged.verdicts:
            st.markdown(f"{ICONS[verdict.state]} **{said(goal.words)}** {said(verdict.reason)}")
        if judged.broken:
            st.error("\n".join([t("assignment.rules_broken"), *(f"- {said(rule)}" for rule in judged.broken)]))
        free = assignment.may_change
        st.caption(t("assignment.may_change", names=t("list.sep").join(map(setting_words, free))) if free
                   else t("assignment.all_locked"))
        if judged.ended:
            (st.success if judged.passed else st.warning)(summary(judged.passed, judged.count(PASS),
                                                                  len(judged.verdicts)))
        elif is_following():  # running on is breaking away first (which closes the vote on an open question)
            st.caption(t("assignment.not_ended_following"))
        else:
            cols = st.columns([4, 1.4], vertical_alignment="center")
            cols[0].caption(t("assignment.not_ended"))
            cols[1].button(t("assignment.run_to_end"), on_click=_run_to_end, width="stretch",
                           key="assignment_run_to_end")
        if room() is not None and is_lecturer():
            submissions(scenario.name, [goal.words for goal in assignment.goals])
        elif room() is not None:
            hand_in(scenario.name, judged)


def _blocked(judged: Judgement) -> str | None:
    """Why this student cannot hand in now (no name, following, the run not ended), or None."""
    return "assignment.name_first" if my_name() is None else "assignment.submit_following" if is_following() \
        else None if judged.ended else "assignment.submit_at_end"


def _hand_in(assignment_name: str, judged: Judgement):
    if blocked := _blocked(judged):  # the button is disabled then; a script may send its click all the same
        st.session_state.assignment_sent = (assignment_name, Message(blocked))
        return
    try:
        submission = room().hand_in(browser_token(), assignment_name, judged, url_params())  # the run judged here
        st.session_state.assignment_sent = (assignment_name, submission)
    except MessageError as e:
        st.session_state.assignment_sent = (assignment_name, e.message)


def hand_in(assignment_name: str, judged: Judgement):
    """A student's Submit (once the run has ended, on their own, under the name the class knows them by), and what
    they handed in last."""
    blocked = _blocked(judged)
    cols = st.columns([3, 2], vertical_alignment="center")
    cols[0].caption(t(blocked) if blocked else t("assignment.submit_as", name=my_name()))
    cols[1].button(t("assignment.submit"), type="primary", disabled=blocked is not None, width="stretch",
                   on_click=_hand_in, args=(assignment_name, judged), key="assignment_submit")
    sent = st.session_state.get("assignment_sent")
    if sent is None or sent[0] != assignment_name:
        return
    if isinstance(sent[1], Message):
        st.error(said(sent[1]))
        return
    s: Submission = sent[1]
    met = sum(v.state == PASS for _, v in s.goals)
    st.caption(t("assignment.submitted", name=s.name, time=time.strftime("%H:%M:%S", time.localtime(s.at)),
                 verdict=summary(s.passed, met, len(s.goals))))


def _mark(state: str, reason) -> str:
    return t("assignment.verdict", mark=MARKS[state], state=t(f"assignment.state.{state}"), reason=said(reason))


ORDERS = {"name": lambda s: s.key, "passed": lambda s: (not s.passed, s.key), "failed": lambda s: (s.passed, s.key),
          "latest": lambda s: -s.at}  # the lecturer's orders of the table
PAGE_ROWS = 20  # rows of the table at once: a class of 124 is pages, not a 36,000-pixel page


def shown_submissions(handed: list[Submission], key: str) -> list[Submission]:
    """The table's rows: those whose name holds the filter typed (compared as names are), in the order picked, the
    page picked (the widgets under `key`)."""
    typed = st.session_state.get(f"{key}_filter") or ""
    wanted = name_key(typed) if shown_name(typed) else ""
    kept = sorted((s for s in handed if wanted in s.key), key=ORDERS[st.session_state.get(f"{key}_order") or "name"])
    page = int(st.session_state.get(f"{key}_page") or 1)
    return kept[(page - 1) * PAGE_ROWS:page * PAGE_ROWS]


def submissions(assignment_name: str, goals: list[Message], key: str = "assignment", drop=None):
    """The lecturer's view: each name's latest verdict per goal (`goals`: their words, in order; filtered, sorted,
    in pages), deleting one (`drop(assignment, name key)`: by default the submission), and the class's CSV. Its
    widgets' keys start with `key` (a coding assignment's table beside a scenario's)."""
    here = room()
    handed = here.submissions.of(assignment_name)
    heading = t("assignment.submissions", students=counted("n.student", len(handed)),
                passed=sum(s.passed for s in handed))
    st.markdown(f"**{heading}**")
    if not handed:
        st.caption(t("assignment.none_yet"))
    else:
        st.caption("  \n".join(t("assignment.goal_is", i=i + 1, goal=said(goal)) for i, goal in enumerate(goals)))
        cols = st.columns([2.4, 1.6, 1], vertical_alignment="bottom")
        cols[0].text_input(t("assignment.filter"), key=f"{key}_filter", max_chars=40)
        cols[1].selectbox(t("assignment.order"), list(ORDERS), key=f"{key}_order",
                          format_func=lambda o: t(f"assignment.order.{o}"))
        cols[2].number_input(t("assignment.page"), 1, max(1, -(-len(handed) // PAGE_ROWS)), key=f"{key}_page")
        rows = [{t("assignment.col.name"): s.name,
                 t("assignment.col.passed"): MARKS[PASS if s.passed else FAIL] + " " +
                 t("assignment.yes" if s.passed else "assignment.no"),
                 **{t("assignment.col.goal", i=i + 1): _mark(v.state, v.reason) for i, (_, v) in enumerate(s.goals)},
                 t("assignment.col.rules"): "; ".join(map(said, s.broken)) or t("assignment.rules_kept"),
                 t("assignment.col.time"): time.strftime("%H:%M:%S", time.localtime(s.at))}
                for s in shown_submissions(handed, key)]
        if rows:
            st.markdown(WRAPPED_TABLES, unsafe_allow_html=True)
            st.table(pd.DataFrame(rows).set_index(t("assignment.col.name")))  # text in the page, not a canvas
        else:
            st.caption(t("assignment.none_match"))
        delete_one(assignment_name, handed, key, drop or here.submissions.delete)
    st.download_button(t("assignment.export"), lambda: here.submissions.csv(here.code, current_lang()),
                       file_name=f"class_{here.code}_assignments.csv", mime="text/csv", on_click="ignore",
                       disabled=not handed, key=f"{key}_export")


def delete_one(assignment_name: str, handed: list[Submission], key: str, drop):
    """The lecturer drops one student's submission (a test run, a mistake): they may hand in again."""
    with st.popover(t("assignment.delete"), icon=":material/delete:"):
        names = {s.key: s.name for s in handed}
        st.selectbox(t("assignment.col.name"), list(names), format_func=names.get, key=f"{key}_delete_who")
        st.button(t("assignment.delete_confirm"), type="primary", key=f"{key}_delete", on_click=lambda: (
            drop(assignment_name, st.session_state.get(f"{key}_delete_who") or "")))
