"""The hooks of the article's scheduler (scheduler/article/scheduler.py) that the starters override: an answer the
scheduler cannot use is refused before anything changed, in words naming the hook, the answer and what it may be
(`BadDecision`): the checker reports it as the invariant broken at its step, `engine run` as an error line, in either
language; an answer within bounds changes the decision it names, and only that. (That every default leaves every run
as it was is tests/test_golden_runs.py, and tests/test_starters.py for each starter as it is.)"""

from pathlib import Path

import pytest

from engine.check.invariants import Broken, drive
from engine.cli import main
from engine.learner import load
from engine.run.engine import Engine
from engine.run.recipe import Request, RunSpec
from i18n import in_lang
from scheduler import Config, SamplingParams, Sequence
from viz.narrate import narrate

pytestmark = pytest.mark.usefixtures("kinds_restored")  # each test's kinds loaded from files leave no trace

# A pool of 8 blocks of 4 for three 10-token prompts writing 20 each (one fits alone), a budget of 8 under chunked
# prefill: every hook is asked (the waiting queue holds several, prompts go in chunks, decodes run out of blocks).
CONFIG = Config(max_num_seqs=4, max_num_batched_tokens=8, max_model_len=40, num_kvcache_blocks=8, kvcache_block_size=4,
                chunked_prefill=True, enable_prefix_caching=False)


def workload() -> list:
    return [(1, Sequence(list(range(10 * i + 1, 10 * i + 11)), SamplingParams(max_tokens=20, ignore_eos=True),
                         arrival=1, seq_id=i), None) for i in range(3)]


def kind_of(tmp_path: Path, method: str) -> str:
    """A kind of the article's scheduler with `method` (its source, indented as a method) in place of its own."""
    path = tmp_path / "mine.py"
    path.write_text(f"from scheduler.article import Scheduler\n\n\nclass Mine(Scheduler):\n"
                    f"    info = Scheduler.info.derive('mine')\n\n    {method}\n")
    return load(f"{path}:Mine").kind


BAD_ANSWERS = {
    "victim_itself": ("def choose_victim(self, requester):\n        return requester",
                      "choose_victim returned request 1 for request 1; return None (request 1 itself leaves) or one "
                      "of the running requests not batched yet: 2"),
    "victim_not_a_request": ("def choose_victim(self, requester):\n        return 'tail'",
                             "choose_victim returned 'tail' for request 1"),
    "key_none": ("def waiting_key(self, seq):\n        return None",
                 "waiting_key returned keys that cannot be compared, None and None"),
    "key_mixed": ("def waiting_key(self, seq):\n        return seq.seq_id if seq.seq_id else 'first'",
                  "waiting_key returned keys that cannot be compared, 'first' and 1"),
    "seqs_zero": ("def max_num_seqs_now(self):\n        return 0",
                  "max_num_seqs_now returned 0; it must return a whole number from 1 to 4"),
    "seqs_over": ("def max_num_seqs_now(self):\n        return self.config.max_num_seqs + 1",
                  "max_num_seqs_now returned 5; it must return a whole number from 1 to 4"),
    "seqs_float": ("def max_num_seqs_now(self):\n        return 2.0",
                   "max_num_seqs_now returned 2.0; it must return a whole number from 1 to 4"),
    "seqs_bool": ("def max_num_seqs_now(self):\n        return True",
                  "max_num_seqs_now returned True; it must return a whole number from 1 to 4"),
    "extra_negative": ("def extra_blocks(self, seq):\n        return -1",
                       "extra_blocks returned -1; it must return a whole number, 0 or more"),
    "chunk_zero": ("def chunk_size(self, seq, to_compute, budget):\n        return 0",
                   "chunk_size returned 0; it must return a whole number, 1 or more"),
}


@pytest.mark.parametrize("case", BAD_ANSWERS, ids=str)
def test_a_hooks_unusable_answer_is_caught_in_words(case, tmp_path):
    method, words = BAD_ANSWERS[case]
    with pytest.raises(Broken) as broken:
        drive(kind_of(tmp_path, method), CONFIG, workload())
    assert words in str(broken.value) and broken.value.step >= 1
    chinese = in_lang("zh", broken.value.message)
    assert "返回" in chinese and "returned" not in chinese


def test_engine_run_says_what_the_hook_returned_in_one_line(tmp_path, capsys):
    path = tmp_path / "mine.py"
    path.write_text("from scheduler.article import Scheduler\n\n\nclass Mine(Scheduler):\n"
                    "    info = Scheduler.info.derive('mine')\n\n    def max_num_seqs_now(self):\n        return 0\n")
    assert main(["run", "scenarios/02_preemption.toml", "--scheduler", f"{path}:Mine"]) == 2
    err = capsys.readouterr().err
    assert err.strip() == "error: max_num_seqs_now returned 0; it must return a whole number from 1 to 3"


def frames_of(kind: str) -> list:
    """The frames of `workload` (as requests) under CONFIG, decided by `kind`."""
    requests = [Request(arrival=1, prompt_token_ids=tuple(seq.token_ids), max_tokens=20, ignore_eos=True)
                for _, seq, _ in workload()]
    engine = Engine(RunSpec(CONFIG, tuple(requests), scheduler=kind))
    assert engine.run() == "finished"
    return [engine.frames[k] for k in range(1, len(engine.frames))]


def test_each_answer_within_bounds_decides_what_its_hook_names(tmp_path):
    article = frames_of("article")
    assert max(max(f.batch.num_tokens, default=0) for f in article) == 8  # prompts take the whole budget

    chunks = frames_of(kind_of(tmp_path, "def chunk_size(self, seq, to_compute, budget):\n        return 3"))
    assert max(n for f in chunks for n in f.batch.num_tokens) == 3  # or fewer, where the budget has less left

    one = frames_of(kind_of(tmp_path, "def max_num_seqs_now(self):\n        return 1"))
    assert {len(f.batch.seq_ids) for f in one if f.batch.seq_ids} == {1}
    assert max(len(f.batch.seq_ids) for f in article) == 2

    first = next(f for f in frames_of(kind_of(tmp_path, "def waiting_key(self, seq):\n        return -seq.seq_id"))
                 if f.batch.seq_ids)
    assert first.batch.seq_ids == (2,) and next(f for f in article if f.batch.seq_ids).batch.seq_ids == (0,)

    def first_tables(frames):
        first = next(f for f in frames if f.batch.seq_ids)
        return {r.id: len(r.block_table) for r in first.requests if r.block_table}

    ahead = frames_of(kind_of(tmp_path, "def extra_blocks(self, seq):\n        return 2"))
    assert first_tables(article) == {0: 2} and first_tables(ahead) == {0: 4}  # its first chunk's 2 blocks, 2 more


def test_blocks_ahead_stop_at_what_a_request_can_ever_fill_and_keep_every_invariant(tmp_path):
    greedy = kind_of(tmp_path, "def extra_blocks(self, seq):\n        return 100")
    frames = frames_of(greedy)
    assert max(len(r.block_table) for f in frames for r in f.requests) == 8  # 10 + 20 tokens: 8 blocks of 4
    drive(greedy, CONFIG, workload())


def test_a_request_held_back_by_a_lower_batch_limit_is_told_that_limit(tmp_path):
    frames = frames_of(kind_of(tmp_path, "def max_num_seqs_now(self):\n        return 1"))
    k, event = next((k, e) for k, f in enumerate(frames) for e in f.events_of("blocked") if e.reason != "token_budget")
    assert (event.reason, event.needed) == ("max_num_seqs_now", 1)
    told = {lang: narrate(frames[k], frames[k - 1], lang=lang) for lang in ("en", "zh")}
    assert any("the batch is full (1 request this step, the scheduler's own limit below max_num_seqs=4)" in line
               for line in told["en"])
    assert any("本步 1 个请求" in line and "max_num_seqs=4" in line for line in told["zh"])
