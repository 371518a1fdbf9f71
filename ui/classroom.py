"""A class on the page (session/classroom.py holds it): the lecturer starts one in the sidebar and hands out its
link (`?class=CODE`); a student who opens it names themselves once (bound to their browser: ui/class_identity.py)
and follows the lecturer's run, settings and frame, shown above the stage ("following the lecturer", with "break
away" and "follow again"). The browser that started the class is the lecturer's, across reloads (the class stays
where it was); another device becomes a lecturer's with the class's secret, typed, never in an address. The
lecturer's roster, controls and sidebar panel are ui/class_desk.py. Each student keeps their
language and presentation mode; a follower's stage is rerun by the lecturer's step, Play and Pause (ui/wake.py),
not by polling. Wrong codes and keys are limited (session/limits.py)."""

from __future__ import annotations

import functools

import streamlit as st

from i18n import Message, MessageError
from session import class_door
from session.class_names import RELEASED
from session.class_store import StoreUnavailable
from session.classroom import Classroom, classes, play_ahead
from ui.class_identity import browser_token, guesser
from ui.language import said, t
from ui.state import feed, lab, settings_in_effect
from ui.wake import alive, this_session, waker

CODE, SEEN, PLAYING = "class_code", "class_seen", "class_playing"  # session-state keys
STORE_DOWN = "class_store_down"  # what the page says while the class's store (a lecture hall's Redis) is unreachable


def while_reachable(function):
    """A class's step of the page that needs its store: while the store cannot be reached it does nothing (the
    page says so, `store_line`; this session's own stage goes on) and the class is taken up again when it is back."""
    @functools.wraps(function)
    def reached(*args, **kwargs):
        try:
            return function(*args, **kwargs)
        except StoreUnavailable as e:
            st.session_state[STORE_DOWN] = e.message
            return None
    return reached


@while_reachable
def room() -> Classroom | None:
    """The class this session is in, if any (one ended, or closed by the server's bound, drops it, saying so);
    None while its store cannot be reached (the session stays in the class)."""
    code = st.session_state.get(CODE)
    if code is None:
        return None
    here = classes().find(code)
    st.session_state.pop(STORE_DOWN, None)
    if here is None or here.ended:
        for key in (CODE, SEEN):
            st.session_state.pop(key, None)
        st.session_state.notice = Message("class.ended", code=code)
        return None
    return here


def is_lecturer() -> bool:
    here = room()
    return here is not None and here.is_lecturer(browser_token())


def is_following() -> bool:
    """A student of a class who has not broken away."""
    here = room()
    return here is not None and not here.is_lecturer(browser_token()) and here.seats.is_following(this_session() or "")


def my_name() -> str | None:
    """The name this browser goes by in its class."""
    here = room()
    return None if here is None else here.names.name_of(browser_token())


def find_class(code) -> Classroom:
    """The class of a code typed or linked, within the limits on wrong codes (session/class_door.py;
    TooManyGuesses, ClassError)."""
    return class_door.find_class(classes(), code, guesser(), browser_token())


def join_from_url():
    """Once per session: `?class=CODE` enters the class (as its lecturer in the lecturer's browser), `&me=` a
    student's personal code names them."""
    state = st.session_state
    if "class_joined" in state:
        return
    state.class_joined = True
    code = st.query_params.get("class")
    if not code:
        return
    try:
        here = find_class(code)
        enter(here)
        if personal := st.query_params.get("me"):
            claim(here, personal)
    except MessageError as e:
        state.notice = e.message


def enter(here: Classroom):
    """This session is in `here` from now on; a lecturer's (a reload, another tab) takes up the lecture where it
    is: the run, frame, scenario and predictions, so the class does not move."""
    state = st.session_state
    state[CODE] = here.code
    state.pop(SEEN, None)
    lead = here.lead
    if lead is not None and lead.run is not None and here.is_lecturer(browser_token()):
        lab().follow(lead.run, lead.inputs, lead.frame)
        feed().moved_cursor()
        state.scenario_choice, state.predict_mode = lead.scenario, lead.predicting


def claim(here: Classroom, typed: str) -> str:
    """Name this browser in the class: a roster class's personal code (within the limits on wrong codes), or a
    name (within the limits on new names; ClassError when another browser holds it, or one that reads the
    same)."""
    if here.names.roster_codes():
        return class_door.claim_personal_code(here, browser_token(), typed, guesser())
    return class_door.claim_name(here, browser_token(), typed, guesser())


def url_params() -> dict[str, str]:
    """What the URL keeps of the class: its code only (no secret, no personal code: the address bar is projected,
    and a proxy logs it)."""
    here = room()
    return {} if here is None else {"class": here.code}


# -- the stage: following, and publishing what the lecturer shows --------------------------------------------


@while_reachable
def take_seat():
    """In the stage fragment: this tab's seat (or the lecturer's desk), woken by the class (outside a server,
    AppTest, nothing wakes it: its test reruns it)."""
    here, session, wake = room(), this_session(), waker() or (lambda: True)
    if here is None or session is None:
        return
    if here.is_lecturer(browser_token()):
        here.lectern.lecture(session, wake, alive())
        return
    here.seats.sit(session, browser_token(), wake, alive(), frame=lab().cursor)
    if not here.seats.is_following(session):  # on its own while a question is (now) open: it may show the answer
        here.close_votes(browser_token())


@while_reachable
def follow_lead(in_fragment: bool = False):
    """A following student shows the lecturer's run and frame. Another run (a scenario picked, a branch) is taken
    on a whole page's run, before the sidebar is drawn (it shows the scenario and settings): the stage's fragment
    asks for one."""
    here, state = room(), st.session_state
    lead = here.lead if is_following() else None
    if lead is None or lead.run is None or lead.version == state.get(SEEN):
        return
    if in_fragment and (lead.run is not lab().shared_run or lead.scenario != state.get("scenario_choice")):
        st.rerun()
    state[SEEN], settings = lead.version, settings_in_effect()
    frame = lead.frame_now(len(lead.run.engine.frames) - 1)
    lab().follow(lead.run, lead.inputs, frame, ahead=0 if lead.predicting else play_ahead(lead.playing))
    feed().moved_cursor(playing=lead.playing)  # the player jumps to the lecturer's frame, and plays or stops there
    if state.get("scenario_choice") != lead.scenario:  # never in a page run that drew the sidebar's selectbox: a
        state.scenario_choice = lead.scenario  # widget's key cannot be set once it is drawn (the stage reran above)
    if lead.predicting and not state.get("predict_mode"):
        state.predict_mode = True
    if in_fragment and settings_in_effect() != settings:
        st.rerun()  # the sidebar shows the settings of the frame moved to


def stage_bound() -> int | None:
    """The furthest frame this follower's stage may show: the lecturer's while a question ahead is open."""
    here = room()
    return here.bound(lab().title) if here is not None and is_following() else None


@while_reachable
def keep_within_bound():
    """A follower's stage while a question is open shows no frame past the lecturer's, whatever moved it there (a
    control, a crafted message): every view drawn on the server draws from the frame shown."""
    bound = stage_bound()
    if bound is not None and lab().cursor > bound:
        lab().goto(min(bound, lab().last))
        feed().moved_cursor(playing=0)


@while_reachable
def publish_lead():
    """The lecturer's run and frame, and the speed their player plays at (0 standing still; the player reports
    Play and Pause: ui/stage.py), for the class to follow (a trace cannot be followed)."""
    here = room()
    if is_lecturer() and lab().shared_run is not None:
        here.lectern.publish(lab().shared_run, lab().inputs, lab().cursor,
                             st.session_state.get("scenario_choice", ""), bool(st.session_state.get("predict_mode")),
                             st.session_state.get(PLAYING, 0.0))


@while_reachable
def note_seen():
    """A tab on its own, once its page run has sent its player the frames: the class keeps the furthest it may
    show (its lab's last), so its browser's student cannot answer a question on a frame it ran past, even once
    it follows again (session/classroom.py `saw_alone`)."""
    here = room()
    if here is not None and not is_following() and not here.is_lecturer(browser_token()):
        here.saw_alone(browser_token(), lab().title, lab().last)


def _set_following(on: bool):
    """Break away, or follow again: the class keeps the seat's choice; the stage's run that follows applies the
    lecturer's place at once. A tab following again first leaves word of how far it went on its own (the frames
    its last page run stepped to were sent after that run's `note_seen`)."""
    if (here := room()) is not None:
        if on:
            note_seen()
        here.set_following(this_session() or "", browser_token(), on)
    st.session_state.pop(SEEN, None)
    st.session_state.notice = None  # a notice of the student's own exploring is past


@while_reachable
def left_the_stage():
    """This tab shows another page of the app (the policy lab, the tour: either runs a preset to its end): a
    follower there breaks away (with a question open, that closes the browser's vote); the stage then offers
    "Follow again"."""
    if is_following():
        _set_following(False)


def _claim_typed():
    here = room()
    try:
        claim(here, st.session_state.get("class_name_typed", ""))
        st.session_state.class_name_error = None
    except MessageError as e:
        st.session_state.class_name_error = e.message


def name_line(here: Classroom):
    """A student's name in the class, or the box to give it (a roster class: the personal code)."""
    name = here.names.name_of(browser_token())
    if name is not None:
        st.caption(t("class.you_are", name=name))
        return
    roster = bool(here.names.roster_codes())
    if (lost := here.names.dropped(browser_token())) is not None:  # a roster's personal link, or the lecturer
        if roster and lost.key == RELEASED:  # no name can be typed here: only a personal code
            lost = Message("class.name_released_roster", **lost.values)
        st.warning(said(lost))
    with st.form("class_name", border=False, enter_to_submit=True):
        cols = st.columns([3, 1.4], vertical_alignment="bottom")
        cols[0].text_input(t("class.personal_code" if roster else "class.your_name"), key="class_name_typed",
                           max_chars=40, placeholder=t("class.name_why"))
        cols[1].form_submit_button(t("class.use_code" if roster else "class.use_name"), on_click=_claim_typed,
                                   width="stretch")
    if error := st.session_state.get("class_name_error"):
        st.error(said(error))


def store_line():
    """While the class's store cannot be reached: said plainly, to the lecturer and the students alike."""
    if down := st.session_state.get(STORE_DOWN):
        st.warning(said(down), icon=":material/cloud_off:")


@while_reachable
def class_banner():
    """Above a student's stage: their name, and their one click to break away or follow again (the lecturer's is
    the desk: ui/class_desk.py); above anyone's, that the class's store cannot be reached."""
    here = room()
    store_line()
    if here is None or is_lecturer():
        return
    cols = st.columns([5, 1.4], vertical_alignment="center")
    if is_following():
        cols[0].info(t("class.following", code=here.code), icon=":material/school:")
        cols[1].button(t("class.break_away"), on_click=_set_following, args=(False,), width="stretch")
    else:
        cols[0].caption(t("class.on_your_own", code=here.code))
        cols[1].button(t("class.follow_again"), on_click=_set_following, args=(True,), type="primary",
                       width="stretch")
    name_line(here)
