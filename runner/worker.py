"""One model worker per process: the steps of every session, batched into one forward pass.

Continuous batching, applied to the sessions of a classroom: each session keeps its own scheduler and its own
`ModelRunner` with its own paged KV cache, and packs its own step as always; only the forward pass is handed
to the worker. The worker takes the steps that are waiting, shared fairly (runner/share.py: round-robin over
sessions under a token budget per pass, background work at a lower share), lays them end to end in one forward
pass (the linear layers, where the time goes, run once for all of them) and lets each session's attention read
and write only its own KV cache. Each session then samples from its own logits, so it writes what it would write
alone. One thread runs the model, so torch's threads are set once (at load) and sessions no longer fight over
the cores.

    worker = ModelWorker(load_model())
    runner = ModelRunner(worker.loaded, config)   # a session's runner: forward passes go through the worker
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from types import SimpleNamespace

import torch
from transformers import AttentionInterface

from runner.llama_forward import step_logits, supports_direct_forward
from runner.model_loading import LoadedModel
from runner.paged_attention import PagedStep, paged_attention_forward
from runner.prepacked_linear import prepacked_linears
from runner.share import PassBudget, Share, current_share

SESSIONS_ATTENTION = "schedlab_paged_sessions"
RECENT = 60  # forward passes remembered for the server panel
REMEMBERED_SESSIONS = 1000  # sessions whose last pass the round-robin remembers
BACKGROUND_EVERY = 4  # while students' steps keep the worker busy, background work joins every 4th pass
# After any pass, background work alone waits as long as that pass took (BACKGROUND_REST times), unless a student's
# step comes: a student stepping on (a branch replays up to 7 steps, each sent once the last is recorded) is not
# made to wait for a background pass between two of its steps; background work takes at most half the model's time;
# and the cores it leaves are the web server's, whose Python draws every student's page, reads of the cache
# included (on 2 cores, a model kept busy by one student's link slowed every classmate's pages). Resting only while
# other sessions had passes lately measured worse (the hostile class of bench_classroom_server.py, one run each on a
# loaded machine: 2.1x the class's p95 against 1.0x): students reading a preset computed at start have no passes,
# yet need the cores. A student alone computes ahead at half speed.
BACKGROUND_REST = 1.0
# When fewer steps wait than the last pass took, the worker waits for the others a little (they are sampling
# and scheduling their next step, one at a time under the interpreter lock): up to GATHER_SHARE of the last
# pass's time, at most GATHER_MAX_S. A pass costs about as much for 3 sessions as for 13 on a CPU (the weights
# are read once either way), so one pass instead of two alternating small and large ones saves a pass per round;
# a session stepping alone never waits.
GATHER_SHARE, GATHER_MAX_S = 0.25, 0.05


@dataclass
class Step:
    """One session's forward pass, waiting for the worker."""
    input_ids: torch.Tensor  # [1, tokens]
    position_ids: torch.Tensor  # [1, tokens]
    logits_index: torch.Tensor  # packed positions whose logits the session keeps
    paged_step: PagedStep
    done: threading.Event = field(default_factory=threading.Event)
    logits: torch.Tensor | None = None
    error: BaseException | None = None
    on_done: Callable[[Step], None] | None = None  # called on the worker's thread once logits or error are set
    share: Share = field(default_factory=Share)  # who it is for (runner/share.py)

    @property
    def num_tokens(self) -> int:
        return self.input_ids.shape[1]


@dataclass
class _Sessions:
    """The paged steps of several sessions laid end to end: (first token, last token + 1, step) each."""
    parts: list[tuple[int, int, PagedStep]]


def sessions_attention_forward(module, query, key, value, attention_mask, scaling=None, dropout=0.0,
                               paged_step: _Sessions | None = None, **kwargs):
    """Each session's tokens attend over its own KV cache, exactly as in a forward pass of its own."""
    outputs = [paged_attention_forward(module, query[:, :, start:end], key[:, :, start:end],
                                       value[:, :, start:end], None, scaling, paged_step=step)[0]
               for start, end, step in paged_step.parts]
    return (outputs[0] if len(outputs) == 1 else torch.cat(outputs, dim=1)), None


AttentionInterface.register(SESSIONS_ATTENTION, sessions_attention_forward)


class _SessionModel:
    """Stands in for the model inside a session's runner: a call waits for the worker's batched pass."""

    def __init__(self, worker: ModelWorker):
        self._worker, self.config = worker, worker.model.config

    def __call__(self, input_ids, position_ids, logits_to_keep, paged_step, **_):
        return SimpleNamespace(logits=self._worker.forward(Step(input_ids, position_ids, logits_to_keep,
                                                                 paged_step, share=current_share())))


def fair_pass(waiting: list[Step], budget: PassBudget, last_served: dict[str, int],
              background_due: bool = False) -> list[Step]:
    """The steps of the next pass (runner/share.py). Students' steps, the session served least recently first
    (oldest first among equals), up to `budget.pass_tokens` tokens (at least one step). Background work only in
    a pass no student's step waits for (then up to the whole pass), or when it is `background_due` (then up to
    `budget.background_tokens`, at least one piece, kept for it out of the pass): a student's step never waits
    behind it for more than the pass under way, and it still gets a share of a busy class's passes."""
    ranked = sorted(waiting, key=lambda step: (step.share.background, last_served.get(step.share.who, -1)))
    direct = [step for step in ranked if not step.share.background]
    background = [step for step in ranked if step.share.background]
    if not direct:
        return _up_to(background, budget.pass_tokens)
    if not (background and background_due):
        return _up_to(direct, budget.pass_tokens)
    return _up_to(direct, budget.pass_tokens - budget.background_tokens) + _up_to(background, budget.background_tokens)


def _up_to(steps: list[Step], tokens: int) -> list[Step]:
    """The first of `steps`, and those after it that fit in `tokens` with it, in order."""
    taken, total = [], 0
    for step in steps:
        if not taken or total + step.num_tokens <= tokens:
            taken.append(step)
            total += step.num_tokens
    return taken


class ModelWorker:
    def __init__(self, loaded: LoadedModel, budget: PassBudget | None = None, gather_max_s: float = GATHER_MAX_S):
        self.model, self.device, self.gather_max_s = loaded.model, loaded.device, gather_max_s
        self.budget = budget or PassBudget.for_device(loaded.device.type)
        self.model.set_attn_implementation(SESSIONS_ATTENTION)  # this model now runs through the worker only
        self.direct_forward = supports_direct_forward(self.model, self.device)  # as ModelRunner's
        self.loaded = replace(loaded, model=_SessionModel(self), pass_budget=self.budget)
        self._waiting: deque[Step] = deque()
        self._wake = threading.Condition()
        self._last_served: OrderedDict[str, int] = OrderedDict()  # session -> its last pass, for the round-robin
        self._passes_without_background = 0  # passes in a row that left waiting background work out
        self._rest_until = 0.0  # time.monotonic() until which background work alone waits (BACKGROUND_REST)
        self.recent: deque[tuple] = deque(maxlen=RECENT)  # (sessions, tokens, seconds, parts) per pass, see stats
        self.forward_passes = 0
        threading.Thread(target=self._serve, name="schedlab-model-worker", daemon=True).start()

    def forward(self, step: Step) -> torch.Tensor:
        """The logits a session's forward pass gives, [1, kept, vocab], computed with whoever else is waiting."""
        self.submit(step)
        step.done.wait()
        if step.error is not None:
            raise step.error
        return step.logits

    def submit(self, step: Step):
        """Queue `step` for the next pass without waiting for it (see `Step.on_done`)."""
        with self._wake:
            self._waiting.append(step)
            self._wake.notify()

    def _take(self) -> list[Step]:
        with self._wake:
            self._wake.wait_for(lambda: self._waiting)
            if (rest := self._rest_until - time.monotonic()) > 0:  # resting: only a student's step wakes it
                self._wake.wait_for(lambda: any(not step.share.background for step in self._waiting), rest)
            if self.recent and len(self._waiting) < (last := self.recent[-1])[0]:  # the others are on their way
                self._wake.wait_for(lambda: len(self._waiting) >= last[0], min(self.gather_max_s,
                                                                                GATHER_SHARE * last[2]))
            due = self._passes_without_background + 1 >= BACKGROUND_EVERY
            batch = fair_pass(list(self._waiting), self.budget, self._last_served, due)
            left_out = any(step.share.background for step in self._waiting) and \
                not any(step.share.background for step in batch)
            self._passes_without_background = self._passes_without_background + 1 if left_out else 0
            taken = set(map(id, batch))
            self._waiting = deque(step for step in self._waiting if id(step) not in taken)
            for step in batch:
                self._last_served[step.share.who] = self.forward_passes
                self._last_served.move_to_end(step.share.who)
            while len(self._last_served) > REMEMBERED_SESSIONS:
                self._last_served.popitem(last=False)
            return batch

    def _serve(self):
        while True:
            batch, began = self._take(), time.monotonic()
            try:
                self._run(batch)
            except Exception:  # one session's bad step must not fail the others: each runs alone to find it
                for step in batch:
                    try:
                        self._run([step])
                    except Exception as e:
                        step.error = e
            self._rest_until = time.monotonic() + BACKGROUND_REST * (time.monotonic() - began)
            for step in batch:
                step.done.set()
                if step.on_done is not None:
                    step.on_done(step)

    def _run(self, batch: list[Step]):
        began = time.perf_counter()
        parts, kept, start = [], [], 0
        for step in batch:
            parts.append((start, start + step.num_tokens, step.paged_step))
            kept.append(step.logits_index.to(self.device) + start)
            start += step.num_tokens
        with torch.inference_mode(), prepacked_linears():  # as ModelRunner.run's own pass
            logits = step_logits(self.model, self.direct_forward, torch.cat([s.input_ids for s in batch], dim=1),
                                 torch.cat([s.position_ids for s in batch], dim=1), torch.cat(kept),
                                 _Sessions(parts))[None]
        for step, rows in zip(batch, torch.split(logits, [len(k) for k in kept], dim=1), strict=True):
            step.logits = rows
        parts = tuple((step.share.who, step.num_tokens, step.share.background) for step in batch)
        self.recent.append((len(batch), start, time.perf_counter() - began, parts))
        self.forward_passes += 1

    def stats(self) -> dict:
        return pass_stats(self.forward_passes, self.recent)


def pass_stats(forward_passes: int, recent) -> dict:
    """What the server panel shows of the recent passes: per pass its sessions, tokens, seconds and parts, each
    part (who, tokens, background)."""
    recent = list(recent)
    return {"forward_passes": forward_passes, "recent_sessions": [r[0] for r in recent],
            "recent_tokens": [r[1] for r in recent], "recent_seconds": [r[2] for r in recent],
            "recent_parts": [r[3] for r in recent]}
