"""The model worker in a process of its own (on CPU): sessions' forward passes leave the web server's process.

In one process, the model shares the interpreter lock with every session's Python: Streamlit's reruns, the
schedulers, the frame recording. PyTorch lets go of the lock inside each operation and must take it back before
the next, and a pass is about 600 operations: with one other thread running Python, a batch-16 decode step that
takes 130 ms alone took 10 s here (8.8 s at one torch thread; a shorter switch interval only brought it to 0.9-1.3 s).
So the worker (runner/worker.py) runs in a child process that runs no other Python. Sessions' KV caches live in
shared memory (`KVCache.zeros(shared=True)`): a step sends its token ids, positions and block tables and a
reference to its cache, and gets its logits back; everything else (scheduling, sampling, the KV cache's bookkeeping)
stays in the session, unchanged.

    process = ModelProcess(default_model_dir())
    runner = ModelRunner(process.loaded, config)   # as with ModelWorker: its passes go to the process

The child takes one torch thread per physical core ($SCHEDLAB_MODEL_THREADS sets another count). Torch's threads
wait for each other at every operation, so one that loses its core to the web server stalls them all; but the
server's Python is busy only now and then, and on a 2-core machine two threads beat one in a class: 16 students on
16 custom setups waited p95 3.0 s rather than 4.9 s (0.49 s a pass rather than 0.64 s), and 30 on one preset had
0.21 s passes rather than 0.30 s. Beside a process that kept a core busy all the time, a batch-16 decode step took
1.3x as long at two threads as at one (251 ms, 196 ms). (With MKL's packed products, which the runner used before,
that was 3.5x, and one thread was the better choice.)
"""

from __future__ import annotations

import itertools
import logging
import math
import os
import pickle
import socket
import subprocess
import sys
import threading
import time
import weakref
from collections import deque
from multiprocessing.connection import Connection
from pathlib import Path
from types import SimpleNamespace

import torch
from transformers import AutoTokenizer

from runner.model_loading import LoadedModel, load_model, physical_core_count
from runner.paged_attention import KVCache
from runner.share import PassBudget, current_share
from runner.worker import RECENT, ModelWorker, Step, pass_stats

ROOT = Path(__file__).resolve().parent.parent


class ModelProcessError(RuntimeError):
    """The model process could not start, or stopped."""


class ModelProcessStopped(ModelProcessError):
    """The model process stopped while it held this step (killed, out of memory): the step itself was fine."""


class _RemoteModel:
    """Stands in for the model inside a session's runner: a call is one step sent to the process."""

    def __init__(self, process: ModelProcess, config):
        self._process, self.config = process, config

    def __call__(self, input_ids, position_ids, logits_to_keep, paged_step, **_):
        return SimpleNamespace(logits=self._process.forward(input_ids, position_ids, logits_to_keep, paged_step))


THREADS_ENV = "SCHEDLAB_MODEL_THREADS"  # torch threads of the model process, instead of one per physical core
RESTART_INTERVAL_S = 10.0  # a stopped child is started again by the next step, at most once in this long
# A step the child held when it stopped is sent again, this many times, to the child started in its place: its
# KV cache is shared memory this process holds, and a pass only writes the K/V of its own tokens, so the pass
# sent again writes and returns what the first would have. Once only: a step that itself kills the child (out of
# memory) fails, rather than killing each child started after it.
RESENDS = 1
LOG = logging.getLogger("schedlab")


class _Child:
    """One start of the model process: it has loaded the model once this returns, else ModelProcessError."""

    def __init__(self, folder: Path, threads: int):
        ours, theirs = socket.socketpair()
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
        self.process = subprocess.Popen(
            [sys.executable, "-m", "runner.model_process", str(theirs.fileno()), str(folder), str(threads)],
            pass_fds=[theirs.fileno()], stdin=subprocess.DEVNULL, env=env)
        theirs.close()
        self.connection = Connection(ours.detach())
        self.stopped: str | None = None  # why it stopped, once it has
        try:
            kind, answer = pickle.loads(self.connection.recv_bytes())
        except (EOFError, OSError):
            kind, answer = "error", f"it exited (exit code {self.process.wait()})"
        if kind != "ready":
            self.connection.close()
            raise ModelProcessError(f"the model process could not load {folder.name}: {answer}")
        self.config, self.dtype = answer


class ModelProcess:
    """The parent's side: starts the child, sends steps, hands each session its logits; `stats()` as ModelWorker.

    A child that stops (killed, out of memory) fails the steps it was computing, and the next step starts a new
    one. Sessions lose nothing else: their KV caches are shared memory this process holds, and the new child maps
    them again as it is sent them."""

    def __init__(self, folder: Path, threads: int | None = None):
        threads = threads or int(os.environ.get(THREADS_ENV) or 0) or physical_core_count()
        self._folder, self._threads = folder, threads
        self._child = _Child(folder, self._threads)
        tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True)
        self.loaded = LoadedModel(_RemoteModel(self, self._child.config), tokenizer, torch.device("cpu"),
                                  self._child.dtype, folder.name, shares_kv_cache=True,
                                  pass_budget=PassBudget.for_device("cpu"))  # the child's worker's
        self.forward_passes = 0
        self.restarts = 0
        self.caches_held = 0  # KV caches the child has mapped, as of its last answer
        self.recent: deque[tuple] = deque(maxlen=RECENT)  # as ModelWorker.recent, as the child reports it
        self._waiting: dict[int, tuple[_Child, threading.Event, list]] = {}
        self._numbers = itertools.count()
        self._send_lock, self._restart_lock, self._last_restart = threading.Lock(), threading.Lock(), -math.inf
        self._listen(self._child)

    def forward(self, input_ids, position_ids, logits_index, paged_step) -> torch.Tensor:
        """The logits of one session's step, [1, kept, vocab], computed in the child with whoever else waits; sent
        again (RESENDS) when the child stops under it."""
        for _ in range(RESENDS):
            try:
                return self._forward_once(input_ids, position_ids, logits_index, paged_step)
            except ModelProcessStopped as e:
                LOG.warning("%s under a step: the step goes again to a new model process", e)
        return self._forward_once(input_ids, position_ids, logits_index, paged_step)

    def _forward_once(self, input_ids, position_ids, logits_index, paged_step) -> torch.Tensor:
        number, done, answer = next(self._numbers), threading.Event(), []
        child = self._running_child()
        self._waiting[number] = (child, done, answer)
        self._track(paged_step.kv_cache)
        try:
            with self._send_lock:  # only here are forgotten caches taken off the queue
                forgotten = [self._forgotten.popleft() for _ in range(len(self._forgotten))]
                child.connection.send_bytes(pickle.dumps(
                    ("step", number, forgotten, input_ids, position_ids, logits_index, paged_step,
                     current_share())))
        except OSError as e:
            self._waiting.pop(number, None)
            raise ModelProcessStopped(f"the model process has stopped: {e}") from e
        done.wait()
        logits, error = answer
        if error is not None:
            raise error
        return logits

    def _running_child(self) -> _Child:
        """The child, started anew if it has stopped; at most once per RESTART_INTERVAL_S, so that a model that no
        longer loads costs one attempt per interval rather than one per step."""
        with self._restart_lock:
            if self._child.stopped is None:
                return self._child
            if time.monotonic() - self._last_restart < RESTART_INTERVAL_S:
                raise ModelProcessError(f"{self._child.stopped}; it starts again with a step after "
                                        f"{RESTART_INTERVAL_S:.0f} s")
            self._last_restart = time.monotonic()
            self._child = _Child(self._folder, self._threads)
            self.restarts += 1
            self._listen(self._child)
            return self._child

    def _listen(self, child: _Child):
        """Take the child's answers from now on; it has mapped no cache yet."""
        self._known_caches: set[str] = set()
        self._forgotten: deque[str] = deque()  # caches gone in this process, to be dropped by the child
        threading.Thread(target=self._receive, args=(child,), name="schedlab-model-process-replies",
                         daemon=True).start()

    def _track(self, cache: KVCache):
        """The child keeps each cache it is sent mapped until this process lets go of it."""
        if cache.shared.key not in self._known_caches:
            self._known_caches.add(cache.shared.key)
            weakref.finalize(cache, self._forget, cache.shared.key)

    def _forget(self, key: str):
        # may run inside any allocation of any thread (the garbage collector): no lock, no sending here
        self._known_caches.discard(key)
        self._forgotten.append(key)

    def _receive(self, child: _Child):
        while True:
            try:
                number, logits, error, passes, last_pass, self.caches_held = pickle.loads(
                    child.connection.recv_bytes())
            except (EOFError, OSError) as e:
                why = f"the model process stopped ({type(e).__name__}, exit code {child.process.poll()})"
                return self._stop(child, why)
            except Exception as e:  # an answer this side cannot read: fail every waiting step, never hang them
                return self._stop(child, f"an answer of the model process could not be read: {type(e).__name__}: {e}")
            if passes > self.forward_passes and last_pass is not None:
                self.forward_passes = passes
                self.recent.append(last_pass)
            _, done, answer = self._waiting.pop(number)
            answer.extend((torch.from_numpy(logits) if logits is not None else None,
                           ModelProcessError(error) if error is not None else None))
            done.set()

    def _stop(self, child: _Child, why: str):
        """Fail the steps sent to `child`, which has stopped; the next step starts another."""
        child.stopped = why
        child.connection.close()
        for number, (sent_to, done, answer) in list(self._waiting.items()):
            if sent_to is child and self._waiting.pop(number, None) is not None:
                answer.extend((None, ModelProcessStopped(why)))
                done.set()

    def stats(self) -> dict:
        return {**pass_stats(self.forward_passes, self.recent), "restarts": self.restarts}


def serve(connection: Connection, folder: Path, threads: int):
    """The child: load the model, then batch the steps it is sent until the parent goes."""
    send_lock = threading.Lock()

    def send(message: tuple):
        data = pickle.dumps(message)
        with send_lock:
            connection.send_bytes(data)

    try:
        loaded = load_model(folder)
    except Exception as e:  # the parent shows why
        return send(("error", f"{type(e).__name__}: {e}"))
    torch.set_num_threads(threads)
    worker = ModelWorker(loaded)
    held: dict[str, KVCache] = {}  # every cache the parent still has, mapped once
    send(("ready", (loaded.model.config, loaded.dtype)))

    def reply(number: int, step: Step):
        logits, error = (step.logits.numpy(), None) if step.error is None else (
            None, f"the forward pass failed: {type(step.error).__name__}: {step.error}")
        last_pass = worker.recent[-1] if worker.recent else None
        send((number, logits, error, worker.forward_passes, last_pass, len(held)))

    while True:
        try:
            _, number, forgotten, input_ids, position_ids, logits_index, paged_step, share = pickle.loads(
                connection.recv_bytes())
        except (EOFError, OSError):
            return  # the parent has gone
        for key in forgotten:
            held.pop(key, None)
        held[paged_step.kv_cache.shared.key] = paged_step.kv_cache
        worker.submit(Step(input_ids, position_ids, logits_index, paged_step,
                           on_done=lambda step, number=number: reply(number, step), share=share))


if __name__ == "__main__":
    fd, model_folder, thread_count = sys.argv[1:]
    serve(Connection(int(fd)), Path(model_folder), int(thread_count))
