"""Who is asking the shared model for a forward pass, and how each pass is shared among them (torch-free).

One model worker serves every session of a class (runner/worker.py). Left oldest-first, one student's 6,000-token
prefill or 256-wide decode made a pass of its own of a minute, and every classmate's next step waited for it.
So passes are shared as a serving system shares its batches (Sarathi-Serve's token budget per iteration, with
fair queueing over sessions in the manner of deficit round robin):

- a session's step enters a pass in pieces of at most `PassBudget.session_tokens` tokens (its runner splits a
  large step into several passes, runner/model_runner.py; a token's reads of its context count too,
  `token_cost`), so a pass never waits for one session's whole step;
- a pass takes at most `pass_tokens` tokens: the waiting sessions in turn, the one served least recently first
  (round-robin), so a session waits at most about (sessions x session_tokens) / pass_tokens passes;
- background work (`Share.background`: a link's long run, the stage's compute-ahead, presets computed at start),
  which no student is watching, enters in smaller pieces (`background_tokens`), in the passes no student's step
  waits for, and while students keep the worker busy in every fourth pass, beside them (runner/worker.py's
  `fair_pass`); after every pass it waits as long as that pass took, unless a student's step comes first: it runs
  at a lower share than any student's direct step, at most half the model's time, never between the steps of a
  student stepping on, and a student's step waits behind it for at most the one small pass under way.

The session layer says who asks with `asking(who=..., background=...)` around its steps; the runner and the
worker read `current_share()` on the thread that steps.
"""

from __future__ import annotations

import contextvars
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace

PASS_TOKENS_ENV = "SCHEDLAB_PASS_TOKENS"
# Tokens per pass that keep a pass near a class's step target (0.2-0.3 s a step) with SmolLM2 on CPU. Measured on
# this project's 2-core machine (two torch threads, load average 6 from other work): a prefill pass of 64 tokens
# 0.15-0.16 s, 128 tokens 0.26-0.29 s, 256 tokens 0.61-0.66 s, 512 tokens 0.9-1.7 s. On CUDA a pass of 2048
# tokens still takes milliseconds.
CPU_PASS_TOKENS, CUDA_PASS_TOKENS = 128, 2048
# A token's attention also reads its context from the KV cache: on the same machine a decode of 8 sequences over
# 1024 positions took 0.08 s more than over 64, what about 40 more tokens cost. So a piece of a step counts, besides
# its tokens, one token per CONTEXT_PER_TOKEN positions of context (a 256-wide decode over 2,000 positions is
# not 256 tokens' work but about 2,300).
CONTEXT_PER_TOKEN = 200


@dataclass(frozen=True)
class Share:
    """Who a step is for: `who` names the session on the server panel; `background` marks work no student waits
    for now."""
    who: str = ""
    background: bool = False


@dataclass(frozen=True)
class PassBudget:
    """How a shared forward pass is cut: at most `pass_tokens` tokens, one session's step in pieces of at most
    `session_tokens`, background work in pieces of at most `background_tokens` (and, beside students' steps, at
    most that many in all)."""
    pass_tokens: int
    session_tokens: int
    background_tokens: int

    @classmethod
    def for_device(cls, device_type: str) -> PassBudget:
        """The budget on `device_type` ("cpu" or "cuda"); $SCHEDLAB_PASS_TOKENS sets another pass size."""
        default = CUDA_PASS_TOKENS if device_type == "cuda" else CPU_PASS_TOKENS
        tokens = max(4, int(os.environ.get(PASS_TOKENS_ENV) or default))
        return cls(tokens, tokens // 2, tokens // 4)

    def piece_tokens(self, share: Share) -> int:
        """The most tokens of one step of `share` that go into one pass."""
        return self.background_tokens if share.background else self.session_tokens


ANYONE = Share()  # steps taken outside any `asking`
def token_cost(scheduled: int, context: int) -> int:
    """What a sequence computing `scheduled` tokens over `context` positions counts in a piece of a step."""
    return scheduled + context // CONTEXT_PER_TOKEN


_current: contextvars.ContextVar[Share] = contextvars.ContextVar("schedlab_share", default=ANYONE)


def current_share() -> Share:
    """Who the steps taken on this thread are for (set by `asking`)."""
    return _current.get()


@contextmanager
def asking(who: str | None = None, background: bool | None = None) -> Iterator[Share]:
    """The model steps taken inside are for `who`, in the background or not (None keeps what is set)."""
    share = current_share()
    share = replace(share, **{k: v for k, v in (("who", who), ("background", background)) if v is not None})
    token = _current.set(share)
    try:
        yield share
    finally:
        _current.reset(token)
