"""No peeking (issue 47 point 2, finding 3), against a real server spoken to as a browser speaks to it (Streamlit's
websocket protocol): the lecturer of a class on assignment 1 stands at frame 3 with "Step 5: which running request
is preempted?" open. A student's tab follows; another tab of the same browser breaks away and runs to the end (its
messages do name the later frames' facts: the markers are real), and the following tab's answer is refused. The
following tab then tries every way to see further (asks its player for frame 40, reports frame 40, opens each view
below the stage, presses "Run to the end" where it is offered, builds the handout and fetches it), and every message
the server sent it, every file it offers, is read (bench/peek_client.py): nothing names a frame after 3, a later
step's facts, a key frame's note after it or the run's end."""

import asyncio

import pytest

from bench.class_client import BENCH_TOKEN_SECRET, bench_token
from bench.peek_client import ASKED, SCENARIO, Follower, K, Peek, later_facts, name_tab, start_class, try_to_peek
from i18n import text
from session.tokens import SECRET_ENV
from tools.app_server import app_server

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def bench_server():
    """The fake model's server with the bench's token secret: the protocol clients' browsers carry tokens it signed."""
    with app_server("fake", env={SECRET_ENV: BENCH_TOKEN_SECRET}) as (url, _process):
        yield url


async def peek_at_an_open_question(base: str, lang: str) -> dict:
    """The class at its open question, a following tab that tries to peek and another tab of its browser that
    breaks away; what was read, and what the lecturer's page counts."""
    url = base.replace("http", "ws", 1) + "/_stcore/stream"
    lecturer, lecturer_ws = await start_class(url)
    code, peek = lecturer.page.code, Peek(K, later_facts(SCENARIO, K, lang, ASKED))
    following = Follower(1, code, lang, bench_token(901), peek)
    # another tab of the same browser, on its own: what it reads only shows that the markers are real
    away = Follower(2, code, lang, bench_token(901), peek, judged=lambda: False)
    async with following.connect(url) as ws, away.connect(url) as away_ws:
        await name_tab(following, ws, lang, "Peek Student")
        await following.settle(ws, lambda page: text(lang, "class.send") in page.widgets)
        shown = following.page.cursor
        await name_tab(away, away_ws, lang, "Peek Student")
        await away.press(away_ws, text(lang, "class.break_away"))
        await away.settle(away_ws, lambda page: text(lang, "assignment.run_to_end") in page.widgets)
        await away.press(away_ws, text(lang, "assignment.run_to_end"))
        await following.rerun(ws, following._component_state())
        await following.answer(ws, 1)
        await lecturer.settle(lecturer_ws, lambda page: page.answered != (0, 0))
        await try_to_peek(following, ws, lang, base)
    await lecturer_ws.close()
    return {"peek": peek, "shown": shown, "answered": lecturer.page.answered, "words": following.page.words}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_follower_at_an_open_question_is_sent_nothing_past_the_lecturers_frame(bench_server, lang):
    found = asyncio.run(peek_at_an_open_question(bench_server, lang))
    peek: Peek = found["peek"]
    assert found["shown"] == K and peek.messages > 20 and len(peek.markers) > 20
    assert peek.past == [], "\n".join(sorted(set(peek.past)))
    assert any("verdict" in peek.markers[m] for m in peek.markers_seen), "the away tab ran to the end unseen"
    assert found["answered"][0] == 0, found  # the following tab's answer, after its other tab broke away
    assert text(lang, "class.vote_closed") in found["words"]
