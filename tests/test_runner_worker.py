"""The model worker: sessions whose steps are batched into one forward pass write, token for token, what each
writes alone (greedy and sampled, prefill and decode, different block sizes, a step in pieces), a failing step
fails only its own session, and passes are shared fairly: students in turn, background work at a lower share, a
huge step in pieces that hold nobody back."""

import threading
import time
from types import SimpleNamespace

import pytest
import torch

from runner.model_runner import ModelRunner, Part, pieces
from runner.share import PassBudget, Share, asking
from runner.worker import ModelWorker, Step, fair_pass
from scheduler import Config, SamplingParams, Sequence
from scheduler.article import Scheduler
from tests.helpers.tiny_model import TINY_EOS, random_prompts, tiny_model
from tests.helpers.waiting import wait_until

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
    worker.recent.append((2, 6, 60.0, ()))  # as if the last pass had both sessions and took a minute
    passes = worker.forward_passes
    early = threading.Thread(target=step, args=(runners[0], [4, 5]))
    early.start()
    wait_until(lambda: worker._waiting, "the first session's step to wait in the worker")  # the second comes later
    step(runners[1], [6, 7])
    early.join()
    assert worker.forward_passes == passes + 1 and worker.stats()["recent_sessions"][-1] == 2


def pending(tokens: int, who: str, background: bool = False) -> Step:
    """A step waiting for the worker, of `tokens` tokens (only its size and share matter to `fair_pass`)."""
    ids = torch.zeros((1, tokens), dtype=torch.long)
    return Step(ids, ids, torch.zeros(1, dtype=torch.long), None, share=Share(who, background))


def test_a_pass_takes_students_in_turn_and_background_at_a_lower_share():
    budget = PassBudget(pass_tokens=16, session_tokens=8, background_tokens=4)
    link, ahead = pending(4, "link", background=True), pending(4, "ahead", background=True)
    a, b, c = pending(8, "a"), pending(8, "b"), pending(2, "c")
    served = {"a": 5, "b": 3, "c": 4, "link": 1}
    # Students' steps, the session served least recently first (a had the last pass): b and c; a waits, and the
    # background work waits for a pass no student's step waits for.
    assert fair_pass([link, a, b, ahead, c], budget, served) == [b, c]
    # When background work is due (left out of passes in a row), 4 of the 16 tokens are kept for it: one 8-token
    # step fits beside it; of the background, "ahead" (never served) before the link.
    assert fair_pass([link, a, b, ahead, c], budget, served, background_due=True) == [b, c, ahead]
    # Nobody else waiting: background work takes the whole pass.
    assert fair_pass([link, ahead], budget, {}) == [link, ahead]
    # A step larger than the pass still goes, alone; a background piece larger than its share goes when due, one
    # piece, so it never starves.
    huge, long_piece = pending(40, "x"), pending(12, "link", background=True)
    assert fair_pass([huge, a], budget, {"x": 0, "a": 1}) == [huge]
    assert fair_pass([long_piece, c, link], budget, {}, background_due=True) == [c, long_piece]


def test_a_large_step_goes_in_pieces_in_order_a_long_span_in_parts():
    seqs = [SimpleNamespace(num_scheduled_tokens=n, num_computed_tokens=0, draft_token_ids=[])
            for n in (3, 3, 3, 10, 1, 1)]
    split = pieces(seqs, 6)  # the 10-token prefill in parts of 6 and 4 tokens
    assert [[(s.num_computed_tokens, s.num_scheduled_tokens) for s in piece] for piece in split] == [
        [(0, 3), (0, 3)], [(0, 3)], [(0, 6)], [(6, 4), (0, 1), (0, 1)]]
    assert isinstance(split[2][0], Part) and split[2][0].seq is seqs[3] and split[3][0].seq is seqs[3]
    assert pieces(seqs, None) == [seqs]
    long_decodes = [SimpleNamespace(num_scheduled_tokens=1, num_computed_tokens=999, draft_token_ids=[])
                    for _ in range(4)]
    assert [len(piece) for piece in pieces(long_decodes, 12)] == [2, 2]  # 6 each: a token and 1000 positions


@pytest.mark.slow  # a session in 8-token passes: about 20 s on a busy 2-core machine
def test_a_session_in_pieces_writes_what_it_writes_alone_and_a_huge_step_does_not_hold_others_back():
    worker = ModelWorker(tiny_model(), PassBudget(pass_tokens=8, session_tokens=4, background_tokens=2))
    alone = [run_session(tiny_model(), s) for s in range(2)]
    assert [run_session(worker.loaded, s) for s in range(2)] == alone  # prompts of 5, 17 and 9 tokens in parts
    cfg = Config(max_num_seqs=256, max_num_batched_tokens=65536, max_model_len=64, num_kvcache_blocks=1024,
                 kvcache_block_size=16, eos=TINY_EOS)
    hog, small = ModelRunner(worker.loaded, cfg), ModelRunner(worker.loaded, cfg)
    hog_seqs = [Sequence(p, SamplingParams(temperature=0.0, max_tokens=2)) for p in random_prompts([30] * 30)]
    for i, seq in enumerate(hog_seqs):  # a 900-token prefill: over a hundred passes of at most 8 tokens
        seq.block_table, seq.num_scheduled_tokens = [2 * i, 2 * i + 1], 30
    started, waited = threading.Event(), []

    def hog_step():
        with asking(who="hog", background=True):
            started.set()
            hog.run(hog_seqs)

    passes_before_hog = worker.forward_passes
    thread = threading.Thread(target=hog_step)
    thread.start()
    started.wait()
    wait_until(lambda: worker.forward_passes > passes_before_hog, "the hog's first piece to pass")
    for _ in range(3):  # a student's small steps while the hog's prefill goes on
        seq = Sequence([1, 2, 3], SamplingParams(temperature=0.0, max_tokens=2))
        seq.block_table, seq.num_scheduled_tokens = [1000], 3
        before = worker.forward_passes
        with asking(who="student"):
            small.run([seq])
        waited.append(worker.forward_passes - before)
    hog_running, recent = thread.is_alive(), worker.stats()["recent_parts"]
    thread.join()
    assert hog_running  # the student's steps went while the hog's step was in its pieces
    assert max(waited) <= 2  # the pass under way, then the student's own
    assert ("student", 3, False) in {part for passed in recent for part in passed}  # as the panel shows it


def test_the_model_rests_after_a_pass_unless_a_student_steps():
    worker = ModelWorker(tiny_model())
    cfg = config(block_size=16)
    link, student = ModelRunner(worker.loaded, cfg), ModelRunner(worker.loaded, cfg)
    finished = []

    def step(runner, who, background, block):
        seq = Sequence([1, 2, 3], SamplingParams(temperature=0.0, max_tokens=2))
        seq.block_table, seq.num_scheduled_tokens = [block], 3
        with asking(who=who, background=background):
            runner.run([seq])
        finished.append(who)

    worker._rest_until = time.monotonic() + 3.0  # as if a pass had just taken 3 s
    waiting = threading.Thread(target=step, args=(link, "link", True, 0))
    waiting.start()
    wait_until(lambda: worker._waiting, "the background step to wait in the resting worker")
    step(student, "student", False, 1)  # served at once, though the background step came first
    waiting.join()
    assert finished == ["student", "link"]
