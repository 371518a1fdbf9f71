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

The child leaves one core to the server (whose Python uses at most about one) when there are several: torch's
threads wait for each other at every operation, so one of them losing its core to the server stalls them all.
"""

from __future__ import annotations

import itertools
import os
import pickle
import socket
import subprocess
import sys
import threading
import weakref
from collections import deque
from multiprocessing.connection import Connection
from pathlib import Path
from types import SimpleNamespace

import torch
from transformers import AutoTokenizer

from runner.model_loading import LoadedModel, load_model, physical_core_count
from runner.paged_attention import KVCache
from runner.worker import RECENT, ModelWorker, Step

ROOT = Path(__file__).resolve().parent.parent


class ModelProcessError(RuntimeError):
    """The model process could not start, or stopped."""


class _RemoteModel:
    """Stands in for the model inside a session's runner: a call is one step sent to the process."""

    def __init__(self, process: ModelProcess, config):
        self._process, self.config = process, config

    def __call__(self, input_ids, position_ids, logits_to_keep, paged_step, **_):
        return SimpleNamespace(logits=self._process.forward(input_ids, position_ids, logits_to_keep, paged_step))


class ModelProcess:
    """The parent's side: starts the child, sends steps, hands each session its logits; `stats()` as ModelWorker."""

    def __init__(self, folder: Path, threads: int | None = None):
        threads = threads or max(1, physical_core_count() - 1)
        ours, theirs = socket.socketpair()
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
        self._child = subprocess.Popen(
            [sys.executable, "-m", "runner.model_process", str(theirs.fileno()), str(folder), str(threads)],
            pass_fds=[theirs.fileno()], stdin=subprocess.DEVNULL, env=env)
        theirs.close()
        self._connection, self._send_lock = Connection(ours.detach()), threading.Lock()
        try:
            kind, answer = pickle.loads(self._connection.recv_bytes())
        except (EOFError, OSError):
            kind, answer = "error", f"it exited (exit code {self._child.wait()})"
        if kind != "ready":
            raise ModelProcessError(f"the model process could not load {folder.name}: {answer}")
        tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True)
        config, dtype = answer
        self.loaded = LoadedModel(_RemoteModel(self, config), tokenizer, torch.device("cpu"), dtype, folder.name,
                                  shares_kv_cache=True)
        self.forward_passes = 0
        self.caches_held = 0  # KV caches the child has mapped, as of its last answer
        self.recent: deque[tuple[int, int, float]] = deque(maxlen=RECENT)  # (sessions, tokens, seconds) per pass
        self._waiting: dict[int, tuple[threading.Event, list]] = {}
        self._numbers = itertools.count()
        self._known_caches: set[str] = set()
        self._forgotten: deque[str] = deque()  # caches gone in this process, to be dropped by the child
        self._stopped: str | None = None
        threading.Thread(target=self._receive, name="schedlab-model-process-replies", daemon=True).start()

    def forward(self, input_ids, position_ids, logits_index, paged_step) -> torch.Tensor:
        """The logits of one session's step, [1, kept, vocab], computed in the child with whoever else waits."""
        number, done, answer = next(self._numbers), threading.Event(), []
        self._waiting[number] = (done, answer)
        self._track(paged_step.kv_cache)
        try:
            if self._stopped is not None:
                raise ModelProcessError(self._stopped)
            with self._send_lock:  # only here are forgotten caches taken off the queue
                forgotten = [self._forgotten.popleft() for _ in range(len(self._forgotten))]
                self._connection.send_bytes(pickle.dumps(
                    ("step", number, forgotten, input_ids, position_ids, logits_index, paged_step)))
        except (OSError, ModelProcessError) as e:
            self._waiting.pop(number, None)
            raise ModelProcessError(f"the model process has stopped: {e}") from e
        done.wait()
        logits, error = answer
        if error is not None:
            raise error
        return logits

    def _track(self, cache: KVCache):
        """The child keeps each cache it is sent mapped until this process lets go of it."""
        if cache.shared.key not in self._known_caches:
            self._known_caches.add(cache.shared.key)
            weakref.finalize(cache, self._forget, cache.shared.key)

    def _forget(self, key: str):
        # may run inside any allocation of any thread (the garbage collector): no lock, no sending here
        self._known_caches.discard(key)
        self._forgotten.append(key)

    def _receive(self):
        while True:
            try:
                number, logits, error, passes, last_pass, self.caches_held = pickle.loads(
                    self._connection.recv_bytes())
            except (EOFError, OSError) as e:
                return self._stop(f"the model process stopped ({type(e).__name__}, exit code {self._child.poll()})")
            except Exception as e:  # an answer this side cannot read: fail every waiting step, never hang them
                return self._stop(f"an answer of the model process could not be read: {type(e).__name__}: {e}")
            if passes > self.forward_passes and last_pass is not None:
                self.forward_passes = passes
                self.recent.append(last_pass)
            done, answer = self._waiting.pop(number)
            answer.extend((torch.from_numpy(logits) if logits is not None else None,
                           ModelProcessError(error) if error is not None else None))
            done.set()

    def _stop(self, why: str):
        self._stopped = why
        for number in list(self._waiting):
            done, answer = self._waiting.pop(number)
            answer.extend((None, ModelProcessError(why)))
            done.set()

    def stats(self) -> dict:
        recent = list(self.recent)
        return {"forward_passes": self.forward_passes, "recent_sessions": [s for s, _, _ in recent],
                "recent_tokens": [t for _, t, _ in recent], "recent_seconds": [d for _, _, d in recent]}


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
            _, number, forgotten, input_ids, position_ids, logits_index, paged_step = pickle.loads(
                connection.recv_bytes())
        except (EOFError, OSError):
            return  # the parent has gone
        for key in forgotten:
            held.pop(key, None)
        held[paged_step.kv_cache.shared.key] = paged_step.kv_cache
        worker.submit(Step(input_ids, position_ids, logits_index, paged_step,
                           on_done=lambda step, number=number: reply(number, step)))


if __name__ == "__main__":
    fd, model_folder, thread_count = sys.argv[1:]
    serve(Connection(int(fd)), Path(model_folder), int(thread_count))
