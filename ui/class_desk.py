"""The lecturer's side of a class: above the stage the desk (who is here, the roster, bringing everyone back,
ending the class), redrawn every ROSTER_EVERY_S so the head counts follow the open tabs; in the sidebar's "Class"
section starting or joining a class, then the students' link, the class's secret for another device, the roster
of personal codes and the exports (session/classroom.py holds it all; ui/classroom.py is the students' side)."""

from __future__ import annotations

import html
import os
import time
from urllib.parse import urlencode, urlsplit

import pandas as pd
import streamlit as st

from engine.run.limits import BOUNDS
from i18n import Message, MessageError
from session import class_door
from session.class_names import DEFAULT_NAMES
from session.classroom import Classroom, classes, heads_of, server_lecturer_key
from session.names import odd_letters
from session.submissions import csv_text
from session.tokens import device_id
from ui.class_identity import browser_token, device, guesser, keep_token, use_token
from ui.classroom import CODE, SEEN, enter, find_class, is_lecturer, room, while_reachable
from ui.language import counted, said, t
from ui.wake import this_session

ROSTER_EVERY_S = 5  # the desk is redrawn so often: a closed tab leaves the counts within that (and a sweep)
ROSTER_ROWS = 8  # rows the roster shows before it scrolls
ROSTER_PAGE = 25  # rows of one page of the roster
ENDED = "class_ended"  # session-state key: (code, predictions CSV, gradebook CSV) of the class this lecturer ended
# A long name wraps in its column; a short one (王小明 beside a verdict's long words) is not broken into lines.
WRAPPED_TABLES = ("<style>[data-testid=stTable] :is(th, td){white-space:normal;overflow-wrap:anywhere}"
                  "[data-testid=stTable] tbody th{max-width:11rem}"
                  "[data-testid=stTable] tr > :first-child{min-width:6rem}</style>")
PUBLIC_URL_ENV = "SCHEDLAB_PUBLIC_URL"  # the address students reach this process at (the students' link)
LOOPBACK = ("localhost", "127.0.0.1", "::1", "0.0.0.0")
MARK = {True: "✓", False: "✗", None: ""}
END_PRESSED = "class_end_pressed"  # "End it now" was pressed: the desk's fragment reruns the whole page
ROTATED = "class_rotated"  # the secret was rotated: the devices' fragment reruns the whole page


@st.fragment(run_every=ROSTER_EVERY_S)
@while_reachable
def desk():
    """Above the lecturer's stage (a fragment inside the stage's: its own redraws cost only itself)."""
    if st.session_state.pop(END_PRESSED, False):
        st.rerun()  # the whole page: the sidebar says the class ended, or why it did not
    here = room()
    if here is None or not is_lecturer():
        return
    rows = here.roster()
    tabs, tabs_following = here.seats.counts()
    named, heads = sum(row.name is not None for row in rows), heads_of(rows)
    if st.session_state.get("presentation"):  # the projector: the code is read from the back of the hall
        st.markdown(f"<div class='class-code' style='font-size:2.4rem;font-weight:700;letter-spacing:.18em;"
                    f"line-height:1.1'>{html.escape(here.code)}</div>", unsafe_allow_html=True)
    cols = st.columns([5, 1.6, 1.2], vertical_alignment="center")
    silent = here.store.silent_after_s  # a lecture hall: the tabs of a process gone leave the counts
    cols[0].caption(t("class.leading", code=here.code, students=counted("n.student", named),
                      tabs=counted("n.tab", tabs), following=counted("n.student", heads.following)),
                    help=None if silent is None else t("class.counts_live", seconds=f"{silent:g}"))
    cols[1].button(t("class.bring_back"), on_click=here.bring_back, disabled=tabs_following == tabs, width="stretch",
                   key="class_bring_back", help=t("class.bring_back_help"))
    with cols[2].popover(t("class.end"), width="stretch"):
        st.caption(t("class.end_help"))
        st.button(t("class.end_confirm"), on_click=_end, type="primary", key="class_end")
    with st.expander(t("class.roster", students=counted("n.student", named), tabs=counted("n.tab", tabs))):
        if rows:
            shown = roster_page(rows)
            st.markdown(WRAPPED_TABLES, unsafe_allow_html=True)
            table = roster_table(shown, here.names.roster_codes()).set_index(t("class.col.name"))
            with st.container(height=min(len(shown), ROSTER_ROWS) * 38 + 48, border=False):
                st.table(table)  # text in the page: every script's font
            names_control(here)
        else:
            st.caption(t("class.roster_empty"))


def roster_page(rows: list) -> list:
    """The rows of the roster's page the lecturer picked (ROSTER_PAGE a page; every row when they fit one)."""
    if len(rows) <= ROSTER_PAGE:
        return rows
    pages = -(-len(rows) // ROSTER_PAGE)
    cols = st.columns([1, 3], vertical_alignment="bottom")
    page = cols[0].number_input(t("class.roster_page"), 1, pages, key="class_roster_page")
    first = (min(page, pages) - 1) * ROSTER_PAGE
    shown = rows[first:first + ROSTER_PAGE]
    cols[1].caption(t("class.roster_rows", first=first + 1, last=first + len(shown), n=len(rows)))
    return shown


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
        **{a: MARK[row.assignments.get(a)] for a in assignments}} for row in rows]).astype(
        {t("class.col.frame"): "Int64"})  # a whole number, blank where no tab is open


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
    """End the class, only from a device with the lecturer's rights now (read from the store, not as kept); what it
    had (both exports) is kept in this lecturer's page until they close it: ending deletes the class's store. A
    callback: it runs even where this run no longer draws the desk (a device whose rights were revoked)."""
    st.session_state[END_PRESSED] = True
    if (here := room()) is None:
        return
    if not here.lectern.is_lecturer(browser_token(), fresh=True):
        st.session_state.class_error = Message("class.end_refused")
        return
    st.session_state[ENDED] = (here.code, here.polls.tallies_csv(), here.gradebook_csv(class_address()))
    classes().close(here.code)
    for key in (CODE, SEEN):
        st.session_state.pop(key, None)


def ended_panel(code: str, predictions: str, gradebook: str):
    """In the sidebar after the lecturer ended the class: it has ended, and what it had, to export."""
    st.warning(t("class.ended_kept", code=code))
    exports(code, lambda: predictions, lambda: gradebook)
    if st.button(t("class.ended_forget"), key="class_ended_forget"):
        st.session_state.pop(ENDED, None)
        st.rerun()


def exports(code: str, predictions, gradebook):
    """The class's two exports (each a callable: read when downloaded)."""
    st.download_button(t("class.export"), predictions, file_name=f"class_{code}_predictions.csv",
                       mime="text/csv", key="class_export_polls", on_click="ignore")
    st.download_button(t("class.gradebook"), gradebook, file_name=f"class_{code}_gradebook.csv",
                       mime="text/csv", key="class_export_grades", on_click="ignore")


# -- the sidebar -----------------------------------------------------------------------------------------------


def check_server_key(given: str | None, server_key: str):
    """The server's key, within the limits on wrong keys (session/class_door.py; TooManyGuesses, ClassError)."""
    class_door.check_server_key(classes(), given, server_key, guesser())


def _start(given_key: str | None):
    state = st.session_state
    try:
        if (server_key := server_lecturer_key()) is not None:
            check_server_key(given_key, server_key)
        here = classes().start(browser_token(), device(), guesser().identity)
    except MessageError as e:
        state.class_error = e.message
        return
    state.update({CODE: here.code, "class_error": None})


def _join():
    state = st.session_state
    try:
        here = find_class(state.get("class_join_code"))
        if secret := state.get("class_join_secret"):
            class_door.take_lectern(here, browser_token(), secret, guesser(), device())
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
    shown = here is not None or ENDED in st.session_state  # (a class ended here: what it had, to export)
    with st.sidebar.expander(t("class.title"), icon=":material/school:", expanded=shown):
        if error := st.session_state.get("class_error"):
            st.error(said(error))
        if here is None and (ended := st.session_state.get(ENDED)):
            ended_panel(*ended)
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
    low, high = BOUNDS["class_names"]
    st.session_state.class_most_names = here.names.most()  # as the class keeps it (a roster given sets it)
    st.number_input(t("class.most_names"), low, high, key="class_most_names",
                    on_change=lambda: here.names.set_most(st.session_state.class_most_names),
                    help=t("class.most_names_help", default=DEFAULT_NAMES, most=high))
    address = class_address()  # read in the page's run: the export is made later, outside it
    exports(here.code, here.polls.tallies_csv, lambda: here.gradebook_csv(address))


@st.fragment(run_every=ROSTER_EVERY_S)
def lecturer_devices(here: Classroom):
    """The browsers with the lecturer's rights: each but this one can be revoked; rotating the secret takes the
    rights from all the others (and from any copy of this browser's token: it is given a new one). Redrawn as the
    desk is, so a device that took the lectern meanwhile is listed (the sidebar is drawn on the page's whole runs)."""
    if st.session_state.pop(ROTATED, False):
        st.rerun()  # the whole page: the new token's cookie is set there (ui/class_identity.py `keep_token`)
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
        st.session_state[ROTATED] = True


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
