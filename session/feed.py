"""What one session's stage player has been sent, and its requests for more frames.

The player holds the frames it was sent and moves among them by itself; it asks for more with a target step
("compute up to step N"), never a click, so N clicks ask for N frames however the requests are merged on the
way. `Feed.serve` runs the engine toward the target within a time budget (the player asks again for the
rest); `Feed.message` carries the run's header and the frames the player does not hold yet, as deltas
(viz/frame_payload.py), each frame encoded once per run. `Feed.compute_ahead`, once the page has sent the
answer, goes on toward the target while the answer travels and the player plays it: the next request is
answered at once with what was computed meanwhile, so a slow model never idles for a round trip.
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass

from i18n import text
from runner.share import asking
from session.lab import Lab, LabError
from viz.frame_payload import EMPTY_VIEW, encode, player_constants, stage_view

MAX_FRAMES_PER_MESSAGE = 400  # a player that holds nothing yet gets a long run in several messages
SERVE_BUDGET_S = 0.5  # engine time before answering a request with nothing new (at least one step): Play starts moving
AHEAD_BUDGET_S = 1.5  # engine time after an answer: a click made meanwhile waits at most this long


@dataclass
class Request:
    """What the player asks: frames of `run` after `have`, computed up to `want`; `seq` numbers its requests."""
    run: int
    have: int
    want: int
    seq: int = 0

    @classmethod
    def parse(cls, value) -> Request | None:
        try:
            return cls(int(value["run"]), int(value["have"]), int(value["want"]), int(value.get("seq", 0)))
        except (KeyError, TypeError, ValueError, OverflowError):  # OverflowError: Infinity, which JSON may carry
            return None


class Feed:
    def __init__(self, lang: str):
        self.lang = lang  # the language of the narration and of every word the player shows
        self.run = 0
        self._frames = None  # the frame store the deltas were encoded from: a new one is a new run
        self._deltas: list[dict] = []
        self._view = EMPTY_VIEW
        self.send_from = 0  # the first frame the next message carries
        self.cursor_moves = 0  # counts server-side cursor moves (Run N, reset, a link): the player follows them
        self.playing: float | None = None  # with the last cursor move: play on at this speed, 0 stop, None as it was
        self.answered = 0  # the last request served, so the player knows its answer came
        self.ahead_to = 0  # the step the last request asked for, while not computed yet
        self.bound: int | None = None  # a class's follower while a question is open: no frame after this is sent

    def _held(self, lab: Lab) -> int:
        """How many frames the player may hold: the session's (a shared run may be further on than this session
        has stepped: session/run_cache.py), no further than the bound."""
        return lab.last + 1 if self.bound is None else min(lab.last, self.bound) + 1

    def _cap(self, want: int) -> int:
        return want if self.bound is None else min(want, self.bound)

    def _follow(self, lab: Lab):
        held = self._held(lab)  # frames the player holds beyond it (sent before a bound) are taken back: a new run
        if lab.frames is not self._frames or len(self._deltas) > held:
            self.run += 1
            self._frames, self._deltas, self._view, self.send_from = lab.frames, [], EMPTY_VIEW, 0
            self.cursor_moves += 1
        while len(self._deltas) < held:
            k = len(self._deltas)
            view = stage_view(lab.frames[k], lab.frames[k - 1] if k else None, lang=self.lang, held=self._view)
            self._deltas.append(encode(self._view, view))
            self._view = view

    def use_language(self, lang: str):
        """Speak `lang` from the next message on: the frames, whose narration is in words, are sent again."""
        if lang != self.lang:
            self.lang, self._frames = lang, None  # a new run for the player: it drops the frames it holds

    def serve(self, lab: Lab, request: Request, budget_s: float = SERVE_BUDGET_S):
        """Compute toward `request.want` (the cursor stays where the player left it, and the run's end stops
        it: the message says when the run is over) and send from what the player holds."""
        self._follow(lab)
        self.answered = max(self.answered, request.seq)
        if request.run != self.run:
            self.send_from = 0  # the player holds another run's frames: it gets this run from the start
            return
        self.send_from = min(self.send_from, max(0, request.have + 1))
        want = self._cap(request.want)
        if want > lab.last and not lab.is_trace:
            if lab.last <= request.have:  # nothing computed ahead to send now
                self._compute(lab, want, budget_s)
            self.ahead_to = want
        self._follow(lab)

    def compute_ahead(self, lab: Lab, budget_s: float = AHEAD_BUDGET_S):
        """After the answer went out: compute on toward the last request's target, for the next answer."""
        target, self.ahead_to = self._cap(self.ahead_to), 0
        if target > lab.last and lab.frames is self._frames and not lab.is_trace:
            # A step that fails here fails again when the next request computes it, and that answer says why.
            # Nobody waits for these frames yet: the model takes them at a background share (runner/share.py).
            with contextlib.suppress(LabError, ValueError, RuntimeError), asking(background=True):
                self._compute(lab, target, budget_s)

    @staticmethod
    def _compute(lab: Lab, want: int, budget_s: float):
        cursor, deadline = lab.cursor, time.perf_counter() + budget_s
        lab.goto(lab.last)
        try:
            while lab.last < want and time.perf_counter() < deadline and not lab.is_over:
                lab.step()
        finally:
            lab.goto(min(cursor, lab.last))

    def message(self, lab: Lab, header: dict) -> dict:
        """The player's data for this page run: the header and the frames from `send_from` on."""
        self._follow(lab)
        stop = min(len(self._deltas), self.send_from + MAX_FRAMES_PER_MESSAGE)
        frames = self._deltas[self.send_from:stop]
        message = {**header, "run": self.run, "from": self.send_from, "frames": frames,
                   "last": len(self._deltas) - 1, "over": _over_at_end(lab) and len(self._deltas) == lab.last + 1,
                   "end_note": end_note(lab, self.lang), "cursor": min(lab.cursor, len(self._deltas) - 1),
                   "cursor_moves": self.cursor_moves, "playing": self.playing, "answered": self.answered,
                   "bound": self.bound,
                   **player_constants(self.lang)}
        if self.send_from:  # the player keeps the words sent with a run's first frames (a few KB: not every time)
            del message["strings"]
        self.send_from = stop
        return message

    def moved_cursor(self, playing: float | None = None):
        """The server moved the cursor (Run N, a key frame run to, a reset, the lecturer's frame): the player jumps
        there; with `playing` (a class's follower) it then plays on at that speed, or stops there when 0."""
        self.cursor_moves += 1
        self.playing = playing


def _over_at_end(lab: Lab) -> bool:
    """Nothing can follow the last recorded frame (wherever the cursor is)."""
    cursor = lab.cursor
    lab.goto(lab.last)
    try:
        return lab.is_over
    finally:
        lab.goto(cursor)


def end_note(lab: Lab, lang: str) -> str:
    """What the player says when asked to go past the last frame of a run that cannot go on."""
    return text(lang, "feed.trace_ends" if lab.is_trace else "feed.run_over")


def run_header(lab: Lab, model: str, title: str, lang: str, upto: int | None = None) -> dict:
    """The run's title (naming the settings in effect where they differ), model and key frames: [step, note in
    `lang`, whether it holds on this run] (viz.frame_payload.KEY_FRAME_FIELDS); a branched run may no longer show
    what a note says, one not reached yet is taken to hold. None after `upto` (a class's follower while a question
    is open: a later key frame's note, its button's hover text, may be the answer)."""
    return {"title": title, "model": model,
            "key_frames": [[k.step, k.note_in(lang), k.step > lab.last or k.holds(lab.frames)]
                           for k in lab.key_frames if upto is None or k.step <= upto]}
