"""A class on the page (session/classroom.py holds it): the lecturer starts one in the sidebar and hands out its
link (`?class=CODE`); a student who opens it follows the lecturer's run, settings and frame, shown above the
stage ("following the lecturer", with "break away" and "follow again"). The lecturer's own link adds the secret
(`&key=...`, kept out of the address bar, which a projector shows): only it shows the class's code, links and the
predictions' tallies. Each student keeps their language and presentation mode; a follower's stage is rerun by the
lecturer's step, Play and Pause (ui/wake.py), not by polling: while the lecturer plays, each follower's player
plays by itself at the lecturer's speed, and lands on the lecturer's frame at the pause."""

from __future__ import annotations

from urllib.parse import urlencode

import streamlit as st

from i18n import Message
from session.classroom import ClassError, Classroom, classes, server_lecturer_key
from ui.language import said, t
from ui.state import feed, lab, settings_in_effect
from ui.wake import this_session, waker

CODE, ROLE, SEEN, PLAYING = "class_code", "class_role", "class_seen", "class_playing"  # session-state keys
LECTURER, STUDENT = "lecturer", "student"


def room() -> Classroom | None:
    """The class this session is in, if any (a class closed by the server's bound drops it)."""
    code = st.session_state.get(CODE)
    if code is None:
        return None
    try:
        return classes().get(code)
    except ClassError:
        st.session_state.pop(CODE, None)
        return None


def is_lecturer() -> bool:
    return room() is not None and st.session_state.get(ROLE) == LECTURER


def is_following() -> bool:
    """A student of a class who has not broken away."""
    return room() is not None and st.session_state.get(ROLE) == STUDENT and st.session_state.get("class_following",
                                                                                                 True)


def join_from_url():
    """Once per session: `?class=CODE` joins as a student, `&key=` the lecturer's secret as the lecturer."""
    state = st.session_state
    if "class_joined" in state:
        return
    state.class_joined = True
    code = st.query_params.get("class")
    if not code:
        return
    try:
        here = classes().get(code)
    except ClassError as e:
        state.notice = e.message
        return
    state[CODE], state[ROLE] = here.code, LECTURER if here.is_lecturer_secret(st.query_params.get("key")) else STUDENT


def url_params() -> dict[str, str]:
    """What the URL keeps of the class: its code only. The lecturer's secret stays out of the address bar, which a
    projector shows; the lecturer's link is in the sidebar, behind a toggle."""
    here = room()
    return {} if here is None else {"class": here.code}


# -- the stage: following, and publishing what the lecturer shows --------------------------------------------


def take_seat():
    """In the stage fragment: this session's seat (or the lecturer's desk), woken by the class."""
    here, session, wake = room(), this_session(), waker()
    if here is None or session is None or wake is None:
        return
    if st.session_state.get(ROLE) == LECTURER:
        here.lecture(session, wake)
    else:
        here.sit(session, wake, following=st.session_state.get("class_following", True))


def follow_lead(in_fragment: bool = False):
    """A following student shows the lecturer's run and frame. Another run (a scenario picked, a branch) is taken
    on a whole page's run, before the sidebar is drawn (it shows the scenario and settings): the stage's fragment
    asks for one."""
    here, state = room(), st.session_state
    if not is_following() or here.lead is None or here.lead.version == state.get(SEEN):
        return
    lead = here.lead
    if in_fragment and (lead.run is not lab().shared_run or lead.scenario != state.get("scenario_choice")):
        st.rerun()
    state[SEEN], settings = lead.version, settings_in_effect()
    frame = lead.frame_now(len(lead.run.engine.frames) - 1)
    lab().follow(lead.run, lead.inputs, frame, ahead=play_ahead(lead.playing))
    feed().moved_cursor(playing=lead.playing)  # the player jumps to the lecturer's frame, and plays or stops there
    if state.get("scenario_choice") != lead.scenario:  # never in a page run that drew the sidebar's selectbox: a
        state.scenario_choice = lead.scenario  # widget's key cannot be set once it is drawn (the stage reran above)
    if lead.predicting and not state.get("predict_mode"):
        state.predict_mode = True
    if in_fragment and settings_in_effect() != settings:
        st.rerun()  # the sidebar shows the settings of the frame moved to


def play_ahead(speed: float) -> int:
    """The frames a follower playing along is sent ahead of the lecturer's, when the run holds them: as many as
    its player asks for ahead while playing (player.js `lookahead`), so Play starts without a round trip."""
    return max(10, int(3 * speed)) if speed else 0


def publish_lead():
    """The lecturer's run and frame, and the speed their player plays at (0 standing still; the player reports
    Play and Pause: ui/stage.py), for the class to follow (a trace cannot be followed)."""
    here = room()
    if is_lecturer() and lab().shared_run is not None:
        here.publish(lab().shared_run, lab().inputs, lab().cursor, st.session_state.get("scenario_choice", ""),
                     bool(st.session_state.get("predict_mode")), st.session_state.get(PLAYING, 0.0))


def _set_following(on: bool):
    """Break away, or follow again: the stage's run that follows takes the seat as it is now, and applies the
    lecturer's place at once."""
    st.session_state.class_following = on
    st.session_state.pop(SEEN, None)


def class_banner():
    """Above the stage: who leads, and a student's one click to break away or follow again."""
    here = room()
    if here is None:
        return
    taken, following = here.seats()
    cols = st.columns([5, 1.4], vertical_alignment="center")
    if is_lecturer():
        cols[0].caption(t("class.leading", code=here.code, students=taken, following=following))
    elif is_following():
        cols[0].info(t("class.following", code=here.code), icon=":material/school:")
        cols[1].button(t("class.break_away"), on_click=_set_following, args=(False,), width="stretch")
    else:
        cols[0].caption(t("class.on_your_own", code=here.code))
        cols[1].button(t("class.follow_again"), on_click=_set_following, args=(True,), type="primary",
                       width="stretch")


# -- the sidebar: starting, joining, the lecturer's links -----------------------------------------------------


def _start(given_key: str | None):
    server_key = server_lecturer_key()
    if server_key is not None and given_key != server_key:
        st.session_state.class_error = Message("class.wrong_key")
        return
    here = classes().start(server_key)
    st.session_state.update({CODE: here.code, ROLE: LECTURER, "class_error": None})


def _join():
    try:
        here = classes().get(st.session_state.get("class_join_code"))
    except ClassError as e:
        st.session_state.class_error = e.message
        return
    st.session_state.update({CODE: here.code, ROLE: STUDENT, "class_following": True, "class_error": None})
    st.session_state.pop(SEEN, None)


def _leave():
    here = room()
    if here is not None and (session := this_session()):
        here.leave(session)
    for key in (CODE, ROLE, SEEN, "class_following"):
        st.session_state.pop(key, None)


def _link(here: Classroom, **extra) -> str:
    """The class's link, built from this page's own address: behind a proxy that serves several server processes,
    each under its own path (README, "Running a class"), it leads to the process that holds the class."""
    base = (st.context.url or "").split("?")[0].rstrip("/")
    return f"{base}/?{urlencode({'class': here.code, **extra})}"


def class_panel():
    """The sidebar's "Class" section."""
    here = room()
    with st.sidebar.expander(t("class.title"), icon=":material/school:", expanded=here is not None):
        if error := st.session_state.get("class_error"):
            st.error(said(error))
        if here is None:
            with st.form("class_start", border=False):
                key = st.text_input(t("class.lecturer_key"), type="password", key="class_key_given") \
                    if server_lecturer_key() else None
                if st.form_submit_button(t("class.start")):
                    _start(key)
                    st.rerun()
            st.text_input(t("class.code"), key="class_join_code", max_chars=12)
            st.button(t("class.join"), on_click=_join)
            return
        if is_lecturer():
            st.markdown(t("class.code_is", code=here.code))
            st.caption(t("class.student_link"))
            st.code(_link(here), language=None)
            if st.toggle(t("class.show_lecturer_link"), key="class_show_secret"):
                st.caption(t("class.lecturer_link"))
                st.code(_link(here, key=here.secret), language=None)
            st.download_button(t("class.export"), here.tallies_csv(), file_name=f"class_{here.code}_predictions.csv",
                               mime="text/csv", disabled=not here.polls)
        else:
            st.caption(t("class.joined", code=here.code))
        st.button(t("class.leave"), on_click=_leave)
