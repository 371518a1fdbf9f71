"""The lecturer's side of a class: above the stage the desk (who is here, the roster, bringing everyone back,
ending the class), redrawn every ROSTER_EVERY_S so the head counts follow the open tabs; in the sidebar's "Class"
section starting or joining a class, then the students' link, the class's secret for another device, the roster
of personal codes and the exports (session/classroom.py holds it all; ui/classroom.py is the students' side)."""

from __future__ import annotations

import hmac
import html
import os
from urllib.parse import urlencode, urlsplit

import pandas as pd
import streamlit as st

from i18n import Message, MessageError
from session.classroom import ClassError, Classroom, classes, server_lecturer_key
from session.limits import key_guesses
from session.names import odd_letters
from session.submissions import csv_text
from ui.class_identity import browser_token, guesser, keep_token
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
            table = roster_table(rows, here.names.roster_codes()).set_index(t("class.col.name"))
            with st.container(height=min(len(rows), ROSTER_ROWS) * 38 + 48, border=False):
                st.table(table)  # text in the page: every script's font
            names_control(here)
        else:
            st.caption(t("class.roster_empty"))


def shown_apart(name: str) -> str:
    """A name as the lecturer's desk shows it: letters of another script than the rest of their word spelled out
    beside it (session/names.py `odd_letters`), so two names never look the same there."""
    odd = odd_letters(name)
    return t("class.name_escaped", name=name, letters=t("list.sep").join(f"{c} U+{ord(c):04X}" for c in odd)) \
        if odd else name


def roster_table(rows, codes: dict[str, str]) -> pd.DataFrame:
    """One row per student (and per tab not named yet): their place in the class and each assignment's verdict;
    in a roster class, each name's personal code beside it (`codes`: by name)."""
    assignments = sorted({a for row in rows for a in row.assignments})
    return pd.DataFrame([{
        t("class.col.name"): shown_apart(row.name) if row.name else t("class.unnamed"),
        **({t("class.col.code"): codes.get(row.name, "")} if codes else {}),
        t("class.col.where"): t("class.col.gone") if not row.tabs else t("class.col.following")
        if row.following == row.tabs else t("class.col.exploring"),
        t("class.col.tabs"): row.tabs, t("class.col.frame"): row.frame if row.tabs else None,
        t("class.col.answered"): MARK[row.answered] if row.answered is not None else "",
        **{a: MARK[row.assignments.get(a)] for a in assignments}} for row in rows])


def names_control(here: Classroom):
    """The lecturer frees a name from its browser (a roster name gets a new personal link) or removes it from the
    class; that browser is told (session/class_names.py)."""
    names = here.names.all()
    if not names:
        return
    with st.popover(t("class.names_manage"), icon=":material/manage_accounts:"):
        st.caption(t("class.names_manage_help"))
        st.selectbox(t("class.col.name"), sorted(names), format_func=lambda key: shown_apart(names[key]),
                     key="class_name_managed")
        cols = st.columns(2)
        cols[0].button(t("class.name_release"), key="class_name_release", on_click=_free_name, args=(here, False),
                       width="stretch")
        cols[1].button(t("class.name_remove"), key="class_name_remove", on_click=_free_name, args=(here, True),
                       width="stretch")
        if done := st.session_state.get("class_name_done"):
            st.caption(said(done))


def _free_name(here: Classroom, remove: bool):
    key = st.session_state.get("class_name_managed")
    name = here.names.name(key or "")
    if not is_lecturer() or name is None:  # a name gone meanwhile (another lecturer device)
        return
    if remove:
        here.names.remove(key)
        done = Message("class.name_removed_now", name=name)
    elif code := here.names.release(key):
        done = Message("class.name_new_code", name=name, code=code)
    else:
        done = Message("class.name_released_now", name=name)
    st.session_state.class_name_done = done


def _end():
    if (here := room()) is not None:
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
        here = classes().start(browser_token())
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
            if not here.lectern.take_lectern(browser_token(), secret):
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


def class_address() -> str:
    """The address students reach the class at: $SCHEDLAB_PUBLIC_URL where it is set, else the lecturer's page's
    own: behind a proxy that serves several server processes, each under its own path (README, "Running a class"),
    it leads to the process that holds the class."""
    return (os.environ.get(PUBLIC_URL_ENV) or (st.context.url or "").split("?")[0]).rstrip("/")


def students_link(here: Classroom, **extra) -> str:
    """The class's link, under the class's address."""
    return f"{class_address()}/?{urlencode({'class': here.code, **extra})}"


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
    roster_upload(here)
    st.download_button(t("class.export"), here.polls.tallies_csv, file_name=f"class_{here.code}_predictions.csv",
                       mime="text/csv", key="class_export_polls", on_click="ignore")
    address = class_address()  # read in the page's run: the export is made later, outside it
    st.download_button(t("class.gradebook"), lambda: here.gradebook_csv(address),
                       file_name=f"class_{here.code}_gradebook.csv", mime="text/csv", key="class_export_grades",
                       on_click="ignore")


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
