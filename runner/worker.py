"""One model worker per process: the steps of every session, batched into one forward pass.

Continuous batching, applied to the sessions of a classroom: each session keeps its own scheduler and its own
`ModelRunner` with its own paged KV cache, and packs its own step as always; only the forward pass is handed
to the worker. The worker takes every step that is waiting (oldest first, up to a token budget), lays them end
to end in one forward pass (the linear layers, where the time goes, run once for all of them) and lets each
session's attention read and write only its own KV cache. Each session then samples from its own logits, so it
writes what it would write alone. One thread runs the model, so torch's threads are set once (at load) and
sessions no longer fight over the cores.

    worker = ModelWorker(load_model())
    runner = ModelRunner(worker.loaded, config)   # a session's runner: forward passes go through the worker
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from types import SimpleNamespace

import torch
from transformers import AttentionInterface

from runner.llama_forward import step_logits, supports_direct_forward
from runner.model_loading import LoadedModel
from runner.paged_attention import PagedStep, paged_attention_forward
from runner.prepacked_linear import prepacked_linears

SESSIONS_ATTENTION = "schedlab_paged_sessions"
MAX_BATCH_TOKENS = 512  # a pass takes waiting steps, oldest first, up to this many tokens (at least one): a
# long prefill does not hold every waiting decode back for long
RECENT = 60  # forward passes remembered for the server panel
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
                                                                 paged_step)))


class ModelWorker:
    def __init__(self, loaded: LoadedModel, max_batch_tokens: int = MAX_BATCH_TOKENS,
                 gather_max_s: float = GATHER_MAX_S):
        self.model, self.device, self.max_batch_tokens = loaded.model, loaded.device, max_batch_tokens
        self.gather_max_s = gather_max_s
        self.model.set_attn_implementation(SESSIONS_ATTENTION)  # this model now runs through the worker only
        self.direct_forward = supports_direct_forward(self.model, self.device)  # as ModelRunner's
        self.loaded = replace(loaded, model=_SessionModel(self))
        self._waiting: deque[Step] = deque()
        self._wake = threading.Condition()
        self.recent: deque[tuple[int, int, float]] = deque(maxlen=RECENT)  # (sessions, tokens, seconds) per pass
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
            if self.recent and len(self._waiting) < (last := self.recent[-1])[0]:  # the others are on their way
                self._wake.wait_for(lambda: len(self._waiting) >= last[0], min(self.gather_max_s,
                                                                                GATHER_SHARE * last[2]))
            batch, tokens = [], 0
            while self._waiting and (not batch or tokens + self._waiting[0].num_tokens <= self.max_batch_tokens):
                batch.append(self._waiting.popleft())
                tokens += batch[-1].num_tokens
            return batch

    def _serve(self):
        while True:
            batch = self._take()
            try:
                self._run(batch)
            except Exception:  # one session's bad step must not fail the others: each runs alone to find it
                for step in batch:
                    try:
                        self._run([step])
                    except Exception as e:
                        step.error = e
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
        self.recent.append((len(batch), start, time.perf_counter() - began))
        self.forward_passes += 1

    def stats(self) -> dict:
        recent = list(self.recent)
        return {"forward_passes": self.forward_passes, "recent_sessions": [s for s, _, _ in recent],
                "recent_tokens": [t for _, t, _ in recent], "recent_seconds": [d for _, _, d in recent]}
