"""The model worker in its own process (runner/model_process.py), on the real model: sessions write, token for
token, what an in-process runner writes, into KV caches the parent sees; copies of a runner step on as the
original; caches the parent lets go of are dropped by the child; a bad step fails only itself; a stopped
process is started again by the next step, with every run's KV intact, and a clear error, not a hang, within its
restart interval; a step the process held when it was killed is sent again to the new one and writes what it would
have written; a shared cache with no room in /dev/shm is a clear error too."""

import copy
import errno
import gc
import os
import signal
import threading

import pytest
import torch

from runner import model_process
from runner.default_model import default_model_dir
from runner.model_loading import load_model
from runner.model_process import ModelProcess, ModelProcessError
from runner.model_runner import ModelRunner
from runner.paged_attention import KVCache, cache_shape
from scheduler import Config, SamplingParams, Sequence
from scheduler.article import Scheduler
from tests.helpers.waiting import wait_until

pytestmark = pytest.mark.model
CONFIG = Config(max_num_seqs=3, max_num_batched_tokens=64, num_kvcache_blocks=24, kvcache_block_size=16,
                chunked_prefill=True)
QUESTIONS = ["What is the capital of France?", "Name three primary colors.", "Why is the sky blue?"]


@pytest.fixture(scope="module")
def process():
    return ModelProcess(default_model_dir(), threads=1)


def start(runner: ModelRunner, temperature: float) -> tuple[Scheduler, list[Sequence]]:
    scheduler = Scheduler(CONFIG)
    seqs = [Sequence(runner.encode_prompt(q), SamplingParams(temperature=temperature, max_tokens=6, ignore_eos=True),
                     seq_id=i) for i, q in enumerate(QUESTIONS)]  # sampling draws by request id: fix it
    for seq in seqs:
        scheduler.add(seq)
    return scheduler, seqs


def step_to_end(runner: ModelRunner, scheduler: Scheduler, seqs: list[Sequence]) -> list[list[int]]:
    while not scheduler.is_finished():
        batch = scheduler.schedule()
        scheduler.postprocess(batch.seqs, runner.run(batch.seqs))
    return [seq.completion_token_ids for seq in seqs]


def run(loaded, temperature: float, seed: int) -> tuple[list[list[int]], ModelRunner]:
    runner = ModelRunner(loaded, CONFIG, seed=seed)
    return step_to_end(runner, *start(runner, temperature)), runner


def test_sessions_in_the_process_write_what_a_runner_in_this_process_writes(process):
    local = load_model()
    alone = {(t, seed): run(local, t, seed) for t, seed in ((0.0, 0), (0.9, 3))}
    together = {}
    threads = [threading.Thread(target=lambda key=key: together.__setitem__(key, run(process.loaded, *key)))
               for key in alone]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for key, (tokens, runner) in alone.items():
        assert together[key][0] == tokens
        written = together[key][1].kv_cache.buffer  # by the child; a pass shared with another session may round
        assert written.abs().sum() > 0 and torch.allclose(written, runner.kv_cache.buffer, atol=1e-4)  # differently
    assert process.stats()["forward_passes"] > 0


def test_a_copied_runner_steps_on_as_the_original_and_dropped_caches_leave_the_child(process):
    runner = ModelRunner(process.loaded, CONFIG)
    scheduler, seqs = start(runner, 0.0)
    for _ in range(3):
        batch = scheduler.schedule()
        scheduler.postprocess(batch.seqs, runner.run(batch.seqs))
    copied = copy.deepcopy((runner, scheduler, seqs), {id(x): x for x in (runner.loaded, runner.model)})  # as a
    # run cache checkpoint does, sharing the model
    assert copied[0].kv_cache.shared.key != runner.kv_cache.shared.key
    assert step_to_end(*copied) == step_to_end(runner, scheduler, seqs)
    held = process.caches_held
    del runner, scheduler, seqs
    gc.collect()
    step_to_end(copied[0], *start(copied[0], 0.0))
    assert process.caches_held < held


def test_a_bad_step_fails_alone_and_the_process_serves_on(process):
    runner = ModelRunner(process.loaded, CONFIG)
    seq = Sequence([1, 2, 3], SamplingParams(temperature=0.0, max_tokens=2))
    seq.block_table, seq.num_scheduled_tokens = [10_000], 3  # a block the KV cache does not have
    with pytest.raises(ModelProcessError, match="forward pass failed"):
        runner.run([seq])
    assert run(process.loaded, 0.0, 0)[0]


def kill_and_wait_until_seen(process: ModelProcess):
    child = process._child
    child.process.kill()
    child.process.wait()
    wait_until(lambda: child.stopped is not None, "the model process's death to be seen", 10, poll_s=0.05)
    assert "stopped" in child.stopped


def test_a_stopped_process_starts_again_and_runs_keep_their_kv(monkeypatch):
    # An interval no loaded machine outlasts between the two kills (a child's start and the steps took 11 s at a
    # load average of 9): the first start is always allowed, the second within it never.
    monkeypatch.setattr(model_process, "RESTART_INTERVAL_S", 600.0)
    process = ModelProcess(default_model_dir(), threads=1)
    reference = run(process.loaded, 0.0, 0)[0]
    runner = ModelRunner(process.loaded, CONFIG)
    scheduler, seqs = start(runner, 0.0)
    for _ in range(3):  # prefills: the K/V the rest of the run reads
        batch = scheduler.schedule()
        scheduler.postprocess(batch.seqs, runner.run(batch.seqs))
    kill_and_wait_until_seen(process)
    assert step_to_end(runner, scheduler, seqs) == reference  # the next step started a new child
    assert process.restarts == 1 and process.stats()["restarts"] == 1

    kill_and_wait_until_seen(process)  # again at once: no second start within the interval, a clear error
    batch = start(runner, 0.0)[0].schedule()
    with pytest.raises(ModelProcessError, match="stopped.*starts again with a step after"):
        runner.run(batch.seqs)
    monkeypatch.setattr(model_process, "RESTART_INTERVAL_S", 0.0)
    assert run(process.loaded, 0.0, 0)[0] == reference and process.restarts == 2


def test_a_step_in_flight_when_the_process_is_killed_goes_to_the_new_process_and_writes_the_same(monkeypatch):
    monkeypatch.setattr(model_process, "RESTART_INTERVAL_S", 600.0)  # the kill's restart is the first: allowed
    process = ModelProcess(default_model_dir(), threads=1)
    reference = run(process.loaded, 0.0, 0)[0]
    runner = ModelRunner(process.loaded, CONFIG)
    scheduler, seqs = start(runner, 0.0)
    for _ in range(4):  # the prefills and a decode step
        batch = scheduler.schedule()
        scheduler.postprocess(batch.seqs, runner.run(batch.seqs))
    child = process._child
    os.kill(child.process.pid, signal.SIGSTOP)  # it cannot answer the next step: that step is in flight for sure
    batch, answer = scheduler.schedule(), []
    stepping = threading.Thread(target=lambda: answer.append(runner.run(batch.seqs)))
    stepping.start()
    wait_until(lambda: process._waiting, "the step to reach the model process", 30)
    child.process.kill()  # kill -9, the step unanswered
    stepping.join(timeout=120)
    assert not stepping.is_alive() and answer, "the step in flight was not answered by the new process"
    assert process.restarts == 1 and process._child is not child
    scheduler.postprocess(batch.seqs, answer[0])
    assert step_to_end(runner, scheduler, seqs) == reference


def no_room(*_):
    raise OSError(errno.ENOSPC, "No space left on device")


def test_a_shared_cache_without_room_in_dev_shm_goes_to_the_next_folder_or_says_so(monkeypatch):
    shape, real_fallocate, calls = cache_shape(2, 4, 16, 3, 64), os.posix_fallocate, []

    def dev_shm_full(fd, offset, size):  # the first folder tried is /dev/shm
        calls.append(size)
        return (no_room if len(calls) == 1 else real_fallocate)(fd, offset, size)

    monkeypatch.setattr(os, "posix_fallocate", dev_shm_full)
    cache = KVCache.zeros(shape, torch.float32, torch.device("cpu"), shared=True)
    assert len(calls) == 2 and cache.buffer.abs().sum() == 0
    monkeypatch.setattr(os, "posix_fallocate", no_room)
    with pytest.raises(MemoryError, match="no room for a .* shared KV cache"):
        KVCache.zeros(shape, torch.float32, torch.device("cpu"), shared=True)


def test_a_model_the_process_cannot_load_is_a_clear_error(tmp_path):
    with pytest.raises(ModelProcessError, match=f"could not load {tmp_path.name}"):
        ModelProcess(tmp_path, threads=1)
