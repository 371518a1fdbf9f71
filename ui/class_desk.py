"""The lecturer's side of a class: above the stage the desk (who is here, the roster, bringing everyone back,
ending the class), redrawn every ROSTER_EVERY_S so the head counts follow the open tabs; in the sidebar's "Class"
section starting or joining a class, then the students' link, the class's secret for another device, the roster
of personal codes and the exports (session/classroom.py holds it all; ui/classroom.py is the students' side)."""

from __future__ import annotations

import hmac
import html
import os
import time
from urllib.parse import urlencode, urlsplit

import pandas as pd
import streamlit as st

from i18n import Message, MessageError
from session.classroom import ClassError, Classroom, classes, server_lecturer_key
from session.limits import key_guesses
from session.submissions import csv_text
from session.tokens import device_id
from ui.class_identity import browser_token, device, guesser, keep_token, use_token
from ui.classroom import CODE, SEEN, enter, find_class, is_lecturer, room, while_reachable
from ui.language import said, t
from ui.wake import this_session

ROSTER_EVERY_S = 5  # the desk is redrawn so often: a closed tab leaves the counts within that (and a sweep)
ROSTER_ROWS = 8  # rows the roster shows before it scrolls
WRAPPED_TABLES = ("<style>[data-testid=stTable] :is(th, td){white-space:normal;overflow-wrap:anywhere}"
                  "[data-testid=stTable] tbody th{max-width:11rem}</style>")  # a long name wraps in its column
PUBLIC_URL_ENV = "SCHEDLAB_PUBLIC_URL"  # the address students reach this process at (the students' link)
LOOPBACK = ("localhost", "127.0.0.1", "::1", "0.0.0.0")
MARK = {True: "✓", False: "✗", None: ""}


@st.fragment(run_every=ROSTER_EVERY_S)
@while_reachable
def desk():
    """Above the lecturer's stage (a fragment inside the stage's: its own redraws cost only itself)."""
    here = room()
    if here is None or not is_lecturer():
        return
    rows = here.roster()
    tabs, following = here.seats.counts()
    named = sum(row.name is not None for row in rows)
    if st.session_state.get("presentation"):  # the projector: the code is read from the back of the hall
        st.markdown(f"<div class='class-code' style='font-size:2.4rem;font-weight:700;letter-spacing:.18em;"
                    f"line-height:1.1'>{html.escape(here.code)}</div>", unsafe_allow_html=True)
    cols = st.columns([5, 1.6, 1.2], vertical_alignment="center")
    silent = here.store.silent_after_s  # a lecture hall: the tabs of a process gone leave the counts
    cols[0].caption(t("class.leading", code=here.code, students=named, tabs=tabs, following=following),
                    help=None if silent is None else t("class.counts_live", seconds=f"{silent:g}"))
    cols[1].button(t("class.bring_back"), on_click=here.bring_back, disabled=following == tabs, width="stretch",
                   key="class_bring_back", help=t("class.bring_back_help"))
    with cols[2].popover(t("class.end"), width="stretch"):
        st.caption(t("class.end_help"))
        st.button(t("class.end_confirm"), on_click=_end, type="primary", key="class_end")
    with st.expander(t("class.roster", n=named, tabs=tabs)):
        if rows:
            st.markdown(WRAPPED_TABLES, unsafe_allow_html=True)
            with st.container(height=min(len(rows), ROSTER_ROWS) * 38 + 48, border=False):
                st.table(roster_table(rows).set_index(t("class.col.name")))  # text in the page: every script's font
        else:
            st.caption(t("class.roster_empty"))


def roster_table(rows) -> pd.DataFrame:
    """One row per student (and per tab not named yet): their place in the class and each assignment's verdict."""
    assignments = sorted({a for row in rows for a in row.assignments})
    return pd.DataFrame([{
        t("class.col.name"): row.name or t("class.unnamed"),
        t("class.col.where"): t("class.col.gone") if not row.tabs else t("class.col.following")
        if row.following == row.tabs else t("class.col.exploring"),
        t("class.col.tabs"): row.tabs, t("class.col.frame"): row.frame if row.tabs else None,
        t("class.col.answered"): MARK[row.answered] if row.answered is not None else "",
        **{a: MARK[row.assignments.get(a)] for a in assignments}} for row in rows])


def _end():
    """Only a device with the lecturer's rights now (read from the store, not as kept) ends the class."""
    if (here := room()) is None:
        return
    if not here.lectern.is_lecturer(browser_token(), fresh=True):
        st.session_state.class_error = Message("class.end_refused")
        return
    classes().close(here.code)
    for key in (CODE, SEEN):
        st.session_state.pop(key, None)


# -- the sidebar -----------------------------------------------------------------------------------------------


def check_server_key(given: str | None, server_key: str):
    """The server's key, within the limits on wrong keys (TooManyGuesses, ClassError)."""
    who = guesser()
    key_guesses().check(who)
    if not hmac.compare_digest((given or "").encode(), server_key.encode()):
        key_guesses().wrong(who)
        raise ClassError("class.wrong_key")


def _start(given_key: str | None):
    state = st.session_state
    try:
        if (server_key := server_lecturer_key()) is not None:
            check_server_key(given_key, server_key)
        here = classes().start(browser_token(), device())
    except MessageError as e:
        state.class_error = e.message
        return
    state.update({CODE: here.code, "class_error": None})


def _join():
    state = st.session_state
    try:
        here = find_class(state.get("class_join_code"))
        if secret := state.get("class_join_secret"):
            who = guesser()
            key_guesses().check(who)
            if not here.lectern.take_lectern(browser_token(), secret, device()):
                key_guesses().wrong(who)
                raise ClassError("class.wrong_secret")
    except MessageError as e:
        state.class_error = e.message
        return
    enter(here)
    state.class_error = None


def _leave():
    here = room()
    if here is not None and (session := this_session()):
        here.seats.leave(session)
    for key in (CODE, SEEN):
        st.session_state.pop(key, None)


def students_link(here: Classroom, **extra) -> str:
    """The class's link: under $SCHEDLAB_PUBLIC_URL (the address students reach this process at) where it is set,
    else under this page's own address: behind a proxy that serves several server processes, each under its own
    path (README, "Running a class"), it leads to the process that holds the class."""
    base = os.environ.get(PUBLIC_URL_ENV) or (st.context.url or "").split("?")[0]
    return f"{base.rstrip('/')}/?{urlencode({'class': here.code, **extra})}"


def reachable(link: str) -> bool:
    """Whether students elsewhere can open `link`: not this machine's own address."""
    return (urlsplit(link).hostname or "") not in LOOPBACK


@while_reachable
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
            st.text_input(t("class.secret_to_lead"), key="class_join_secret", type="password",
                          help=t("class.secret_help"))
            st.button(t("class.join"), on_click=_join)
            return
        keep_token()
        if is_lecturer():
            lecturer_panel(here)
        else:
            st.caption(t("class.joined", code=here.code))
        st.button(t("class.leave"), on_click=_leave)


def lecturer_panel(here: Classroom):
    """The code, the students' link, the class's secret (behind a toggle), the roster's personal codes, exports."""
    st.markdown(t("class.code_is", code=here.code))
    link = students_link(here)
    st.caption(t("class.student_link"))
    st.code(link, language=None, wrap_lines=True)
    if not reachable(link):
        st.caption(t("class.link_loopback", env=PUBLIC_URL_ENV))
    if st.toggle(t("class.show_secret"), key="class_show_secret"):
        st.caption(t("class.secret_is"))
        st.code(here.secret, language=None)
    lecturer_devices(here)
    roster_upload(here)
    st.download_button(t("class.export"), here.polls.tallies_csv, file_name=f"class_{here.code}_predictions.csv",
                       mime="text/csv", key="class_export_polls", on_click="ignore")
    st.download_button(t("class.gradebook"), here.gradebook_csv, file_name=f"class_{here.code}_gradebook.csv",
                       mime="text/csv", key="class_export_grades", on_click="ignore")


def lecturer_devices(here: Classroom):
    """The browsers with the lecturer's rights: each but this one can be revoked; rotating the secret takes the
    rights from all the others (and from any copy of this browser's token: it is given a new one)."""
    devices, mine = here.lectern.devices(), device_id(browser_token())
    with st.popover(t("class.devices", n=len(devices)), width="stretch"):
        st.caption(t("class.devices_help"))
        for n, (id_, found) in enumerate(devices.items()):
            row = st.columns([4, 1.4], vertical_alignment="center")
            said_row = t("class.device_row", agent=found.agent or t("class.device_unknown"),
                         since=time.strftime("%H:%M", time.localtime(found.since)), how=t(f"class.how.{found.how}"))
            if id_ == mine:
                row[0].markdown(f"{said_row} — **{t('class.device_this')}**")
            else:
                row[0].markdown(said_row)
                row[1].button(t("class.revoke"), key=f"class_revoke_{n}", on_click=here.lectern.revoke,
                              args=(browser_token(), id_))
        st.button(t("class.rotate"), key="class_rotate", on_click=_rotate, help=t("class.rotate_help"))


def _rotate():
    """A new secret for the class, this browser the only lecturer's, under a token issued now."""
    if (here := room()) is None:
        return
    fresh = classes().tokens.issue()
    if here.lectern.rotate(browser_token(), fresh, device()) is not None:
        use_token(fresh)
        st.session_state.notice = Message("class.rotated")


def roster_upload(here: Classroom):
    """The lecturer's list of names: each gets a personal link (and its code), which names the student who opens it."""
    with st.popover(t("class.roster_upload"), width="stretch"):
        st.caption(t("class.roster_help"))
        names = st.text_area(t("class.roster_names"), key="class_roster_names", height=120)
        if st.button(t("class.roster_make"), key="class_roster_make"):
            here.names.set_roster(names.splitlines())
        codes = here.names.roster_codes()
        if codes:
            links = {name: students_link(here, me=code) for name, code in codes.items()}
            st.dataframe(pd.DataFrame({t("class.col.name"): list(codes), t("class.col.code"): list(codes.values()),
                                       t("class.col.link"): list(links.values())}), hide_index=True)
            st.download_button(t("class.roster_export"), lambda: _links_csv(links), on_click="ignore",
                               file_name=f"class_{here.code}_personal_links.csv", mime="text/csv",
                               key="class_roster_export")


def _links_csv(links: dict[str, str]) -> str:
    return csv_text(["name", "link"], links.items())
