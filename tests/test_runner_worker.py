"""The model worker: sessions whose steps are batched into one forward pass write, token for token, what each
writes alone (greedy and sampled, prefill and decode, different block sizes), and a failing step fails only
its own session."""

import threading
import time

import pytest

from runner.model_runner import ModelRunner
from runner.worker import ModelWorker
from scheduler import Config, SamplingParams, Scheduler, Sequence
from tests.helpers.tiny_model import TINY_EOS, random_prompts, tiny_model

SESSIONS = 4
STEPS_PER_SESSION = 10


def config(block_size: int) -> Config:
    return Config(max_num_seqs=3, max_num_batched_tokens=128, max_model_len=64, num_kvcache_blocks=64,
                  kvcache_block_size=block_size, eos=TINY_EOS)


def session_requests(session: int) -> list[Sequence]:
    """Three requests; every session has the same lengths, so all take the same number of steps."""
    prompts = random_prompts([5, 17, 9], seed=10 + session)
    temperature = 0.0 if session % 2 == 0 else 0.9
    return [Sequence(p, SamplingParams(temperature=temperature, max_tokens=STEPS_PER_SESSION, ignore_eos=True),
                     seq_id=i) for i, p in enumerate(prompts)]  # sampling draws by request id: fix it


def run_session(loaded, session: int, before_step=lambda: None) -> list[list[int]]:
    cfg = config(block_size=8 if session % 2 else 16)
    scheduler, runner = Scheduler(cfg), ModelRunner(loaded, cfg, seed=session)
    seqs = session_requests(session)
    for seq in seqs:
        scheduler.add(seq)
    while not scheduler.is_finished():
        batch = scheduler.schedule()
        before_step()
        scheduler.postprocess(batch.seqs, runner.run(batch.seqs))
    return [seq.completion_token_ids for seq in seqs]


@pytest.fixture(scope="module")
def worker():
    return ModelWorker(tiny_model())


def test_batched_sessions_write_what_each_writes_alone(worker):
    alone = [run_session(tiny_model(), s) for s in range(SESSIONS)]  # same seed: the same weights
    together: dict[int, list] = {}
    steps_in_lockstep = threading.Barrier(SESSIONS, timeout=30)  # every session submits a step at once
    threads = [threading.Thread(target=lambda s=s: together.__setitem__(
        s, run_session(worker.loaded, s, steps_in_lockstep.wait))) for s in range(SESSIONS)]
    passes_before = worker.forward_passes
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert [together[s] for s in range(SESSIONS)] == alone
    assert all(len(tokens) == STEPS_PER_SESSION for out in alone for tokens in out)
    # Each session took at least STEPS_PER_SESSION steps; fewer forward passes than that means they were shared.
    assert worker.forward_passes - passes_before < SESSIONS * STEPS_PER_SESSION
    assert max(worker.stats()["recent_sessions"]) > 1


def test_a_failing_step_fails_only_its_own_session(worker):
    cfg = config(block_size=16)
    good, bad = ModelRunner(worker.loaded, cfg), ModelRunner(worker.loaded, cfg)
    good_seq = Sequence([1, 2, 3], SamplingParams(temperature=0.0, max_tokens=2))
    bad_seq = Sequence([4, 5, 6], SamplingParams(temperature=0.0, max_tokens=2))
    good_seq.block_table, good_seq.num_scheduled_tokens = [0], 3
    bad_seq.block_table, bad_seq.num_scheduled_tokens = [10_000], 3  # a block the KV cache does not have
    results = {}

    def run(name, runner, seq):
        try:
            results[name] = runner.run([seq])
        except (IndexError, RuntimeError) as e:
            results[name] = e

    threads = [threading.Thread(target=run, args=args) for args in (("good", good, good_seq), ("bad", bad, bad_seq))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert isinstance(results["bad"], Exception) and isinstance(results["good"][0], int)


def test_a_pass_waits_a_little_for_the_sessions_of_the_last_pass():
    worker = ModelWorker(tiny_model(), gather_max_s=5.0)  # a wide window, so a loaded machine cannot miss it
    cfg = config(block_size=16)
    runners = [ModelRunner(worker.loaded, cfg) for _ in range(2)]

    def step(runner, tokens):
        seq = Sequence(tokens, SamplingParams(temperature=0.0, max_tokens=2))
        seq.block_table, seq.num_scheduled_tokens = [len(tokens)], len(tokens)
        runner.run([seq])

    lockstep = threading.Barrier(2, timeout=30)
    first = [threading.Thread(target=lambda r=r: (lockstep.wait(), step(r, [1, 2, 3]))) for r in runners]
    for thread in first:
        thread.start()
    for thread in first:
        thread.join()
    assert worker.stats()["recent_sessions"] == [2] or worker.stats()["recent_sessions"] == [1, 1]
    worker.recent.append((2, 6, 60.0))  # as if the last pass had both sessions and took a minute
    passes = worker.forward_passes
    early = threading.Thread(target=step, args=(runners[0], [4, 5]))
    early.start()
    time.sleep(0.3)  # the second session comes later than the first, well within the window
    step(runners[1], [6, 7])
    early.join()
    assert worker.forward_passes == passes + 1 and worker.stats()["recent_sessions"][-1] == 2
