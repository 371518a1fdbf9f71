"""No peeking (issue 47 point 2, finding 3), against a real server spoken to as a browser speaks to it (Streamlit's
websocket protocol): the lecturer of a class on assignment 1 stands at frame 3 with "Step 5: which running request
is preempted?" open; a student's following tab tries every way to see further (asks its player for frame 40,
reports frame 40, opens each view below the stage, presses "Run to the end" where it is offered, builds the
handout and fetches it), and every message the server sends it, every file it offers, is read (bench/peek_client.py):
nothing names a frame after 3, a later step's facts, a key frame's note after it or the run's end. Another tab of
the same browser then breaks away and runs to the end (its messages do name those facts: the markers are real), and
the following tab's answer is refused."""

import asyncio
import re
import urllib.request

import pytest
from streamlit.proto.WidgetStates_pb2 import WidgetState

from bench.bench_class_follow import Named, token_of
from bench.class_client import OPEN_TIMEOUT_S
from bench.peek_client import Peek, WatchedPage, later_facts
from i18n import text

pytestmark = pytest.mark.browser

SCENARIO, K, ASKED = "assignment_1_vip_deadline", 3, 5  # the lecturer's frame, the step the question asks about
ANSWERED = re.compile(r"(\d+) of (\d+) students following have answered")


async def start_class(url: str) -> tuple[Named, object]:
    """The lecturer opens assignment 1, starts a class, stands at frame K and switches predictions on (the question
    about step ASKED opens); the lecturer and their open websocket."""
    lecturer = Named(0, f"scenario={SCENARIO}", token_of(900))
    ws = await lecturer.connect(url).__aenter__()
    await lecturer.rerun(ws, timeout_s=OPEN_TIMEOUT_S)
    await lecturer.press(ws, text("en", "class.start"))
    await lecturer.rerun(ws, lecturer._component_state(), timeout_s=OPEN_TIMEOUT_S)
    lecturer.query = f"scenario={SCENARIO}&class={lecturer.page.code}"
    await lecturer.request(ws, K)
    await lecturer.tell(ws, K, 0)
    await lecturer.settle(ws, lambda page: True)
    toggle, fragment = lecturer.page.widgets[text("en", "predict.toggle")]
    await lecturer.rerun(ws, [WidgetState(id=toggle, bool_value=True), *lecturer._component_state()], fragment)
    return lecturer, ws


async def name_tab(tab: Named, ws, lang: str, name: str):
    """The class's link opened in `lang`, the student's name given (a second tab of a named browser needs none)."""
    await tab.rerun(ws, timeout_s=OPEN_TIMEOUT_S)
    box = text(lang, "class.your_name")
    if box in tab.page.widgets:
        widgets, _ = tab.click(text(lang, "class.use_name"))
        await tab.rerun(ws, [WidgetState(id=tab.page.widgets[box][0], string_value=name), *widgets,
                             *tab._component_state()], tab.page.widgets[box][1])


async def try_to_peek(tab: Named, ws, lang: str, url: str):
    """Everything a following tab may try to see past the lecturer's frame."""
    page = tab.page
    await tab.rerun(ws, [tab._request(40), *tab._component_state()], page.player_fragment)
    tab.state = {"frame": 40}
    await tab.rerun(ws, tab._component_state(), page.player_fragment)
    if text(lang, "assignment.run_to_end") in page.widgets:  # offered to a follower before issue 47
        await tab.press(ws, text(lang, "assignment.run_to_end"))
    below = page.widgets[text(lang, "stage.below")]
    for view in ("charts", "metrics", "legend", "handout", "text"):
        await tab.rerun(ws, [WidgetState(id=below[0], string_array_value={"data": [text(lang, f"stage.view.{view}")]}),
                             *tab._component_state()], below[1])
        if view == "handout":
            await tab.press(ws, text(lang, "handout.build_html"))
    for address in page.downloads:
        with urllib.request.urlopen(url + address, timeout=30) as reply:
            page.peek.read_download(reply.read())


async def peek_at_an_open_question(base: str, lang: str) -> dict:
    """The class at its open question, a following tab that tries to peek and another tab of its browser that
    breaks away; what was read, and what the lecturer's page counts."""
    url = base.replace("http", "ws", 1) + "/_stcore/stream"
    lecturer, lecturer_ws = await start_class(url)
    link = f"class={lecturer.page.code}&lang={lang}"
    peek = Peek(K, later_facts(SCENARIO, K, lang, ASKED))
    following = Named(1, link, token_of(901))
    following.page = WatchedPage(peek)
    away = Named(2, link, token_of(901))  # another tab of the same browser
    away.page = WatchedPage(peek, judged=lambda: False)  # on its own: what it reads only shows the markers are real
    async with following.connect(url) as ws, away.connect(url) as away_ws:
        await name_tab(following, ws, lang, "Peek Student")
        await following.settle(ws, lambda page: text(lang, "class.send") in page.widgets)
        shown = following.page.cursor
        await try_to_peek(following, ws, lang, base)
        await name_tab(away, away_ws, lang, "Peek Student")
        await away.press(away_ws, text(lang, "class.break_away"))
        await away.settle(away_ws, lambda page: text(lang, "assignment.run_to_end") in page.widgets)
        await away.press(away_ws, text(lang, "assignment.run_to_end"))
        await following.rerun(ws, following._component_state())
        radio, fragment = following.page.widgets[text(lang, "predict.choice")]
        widgets, _ = following.click(text(lang, "class.send"))
        await following.rerun(ws, [WidgetState(id=radio, int_value=1), *widgets, *following._component_state()],
                              fragment)
        await lecturer.settle(lecturer_ws, lambda page: page.answered != (0, 0))
    await lecturer_ws.close()
    return {"peek": peek, "shown": shown, "answered": lecturer.page.answered, "words": following.page.words}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_follower_at_an_open_question_is_sent_nothing_past_the_lecturers_frame(fake_server, lang):
    found = asyncio.run(peek_at_an_open_question(fake_server, lang))
    peek: Peek = found["peek"]
    assert found["shown"] == K and peek.messages > 20 and len(peek.markers) > 20
    assert peek.past == [], "\n".join(sorted(set(peek.past)))
    assert any("verdict" in peek.markers[m] for m in peek.markers_seen), "the away tab ran to the end unseen"
    assert found["answered"][0] == 0, found  # the following tab's answer, after its other tab broke away
    assert text(lang, "class.vote_closed") in found["words"]
