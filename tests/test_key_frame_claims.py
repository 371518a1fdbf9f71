"""Key-frame notes are checked by the reasons they give (who needs a block, who is preempted for whom, what
is freed, what completes), and a note a branched run no longer shows does not hold."""

import re

import pytest

from engine.inputs.key_frames import KeyFrame
from engine.inputs.scenario import SCENARIOS_DIR, ScenarioError, load_scenario, preset_paths

# Words of a note -> the `expect` keys, one of which must state that claim.
CLAIM_WORDS = {
    r"preempt": ("preempted_for", "recomputed"),
    r"\bneeds? (a|one|another|its|\w+ more|a \w+) (second |third |fourth )?block": ("needs_block",),
    r"\bfreed\b|\bfree their\b": ("freed",),
    r"first token|completes the prompt": ("first_token",),
    r"\bfinish(es)?\b": ("finished", "finished_late"),
    r"\bpauses?\b": ("paused",),
    r"\bswapped queue\b": ("queues",),  # a declared queue, claimed by its name
    r"\bCPU blocks?\b": ("side_pools", "block_copies"),  # a declared side pool, and the copies into and out of it
}


@pytest.mark.parametrize("path", preset_paths(), ids=lambda p: p.stem)
def test_every_claim_a_note_makes_is_in_its_expect(path):
    missing = []
    for key_frame in load_scenario(path, runner="fake").key_frames:
        for words, keys in CLAIM_WORDS.items():
            if re.search(words, key_frame.note, re.IGNORECASE) and not set(keys) & set(key_frame.expect):
                missing.append(f"step {key_frame.step}: {key_frame.note!r} says /{words}/ but expects none of {keys}")
    assert not missing, "\n".join(missing)


def preset(name: str, variant: bool = False):
    scenario = load_scenario(SCENARIOS_DIR / f"{name}.toml", runner="fake")
    engine = scenario.engine(variant=variant)
    engine.run()
    return scenario, engine


def test_preset_02_step_2_says_who_needed_the_block():
    """2 needed the block and preempted itself; 0 and 1 still fit in one block each."""
    scenario, engine = preset("02_preemption")
    note = next(k for k in scenario.key_frames if k.step == 2)
    assert note.expect["needs_block"] == [2] and note.expect["preempted_for"] == [[2, 2]]
    assert "0 and 1 need" not in note.note and "preempts itself" in note.note
    old = KeyFrame(2, "0 and 1 need a second block. The tail request, 2, is preempted to make room",
                   {"needs_block": [0, 1], "preempted_for": [[2, 0]]})
    assert len(old.mismatches(engine.frames[2], engine.frames[1])) == 2


def test_preset_04_variant_step_8_is_the_prompt_completing():
    scenario, engine = preset("04_chunked_prefill", variant=True)
    note = next(k for k in scenario.key_frames if k.step == 8 and k.variant)
    assert note.expect["first_token"] == [4] and note.holds(engine.frames)
    assert engine.frames[8].requests[4].num_output_tokens == 1 == engine.frames[7].requests[4].num_output_tokens + 1


def test_preset_01_says_a_prefill_step_counts_only_its_own_batch():
    scenario, engine = preset("01_prefill_first")
    assert "At most 3 requests run at once" not in scenario.narrative
    note = next(k for k in scenario.key_frames if k.step == 2)
    assert note.expect["running"] == [0, 1, 2, 3, 4] and note.expect["max_num_seqs"] == 3
    assert note.holds(engine.frames)


def test_a_note_that_a_branched_run_no_longer_shows_does_not_hold():
    scenario, engine = preset("02_preemption")
    step5 = next(k for k in scenario.key_frames if k.step == 5)
    assert step5.holds(engine.frames)
    branched = engine.branch(4, num_kvcache_blocks=6)
    branched.run()
    assert not step5.holds(branched.frames)
    assert not step5.holds([engine.frames[i] for i in range(3)])  # not recorded yet


def test_a_claim_about_the_start_of_the_step_needs_the_frame_before():
    scenario, engine = preset("02_preemption")
    step2 = next(k for k in scenario.key_frames if k.step == 2)
    problems = step2.mismatches(engine.frames[2])
    assert problems and all("frame before" in p for p in problems)
    assert not KeyFrame(2, "n", {"preempted_for": [[2, 2]]}).mismatches(engine.frames[2])


def test_a_claim_on_a_declared_queue_pool_or_block_copy_is_checked_by_its_name():
    """V0's swapped queue, CPU pool and swaps as the swap preset's step 4 claims them; a claim that misstates any of
    them fails, and one naming a queue or pool its scheduler does not declare is refused on loading."""
    scenario, engine = preset("vllm_v0_swap_vs_recompute")
    frame, before = engine.frames[4], engine.frames[3]
    claim = {"queues": {"swapped": [2]}, "side_pools": {"cpu": {"2": [0, 1]}},
             "block_copies": [["gpu", 4, "cpu", 0], ["gpu", 5, "cpu", 1]]}
    assert not KeyFrame(4, "n", claim).mismatches(frame, before)
    for wrong in ({"queues": {"swapped": []}}, {"side_pools": {"cpu": {"2": [0]}}},
                  {"block_copies": [["gpu", 5, "cpu", 1], ["gpu", 4, "cpu", 0]]},  # in order
                  {"queues": {"parked": [2]}}):
        assert KeyFrame(4, "n", wrong).mismatches(frame, before), wrong
    assert not KeyFrame(7, "n", {"queues": {"swapped": []}, "side_pools": {"cpu": {}}}).mismatches(engine.frames[7])


@pytest.mark.parametrize("scheduler, expect, key", [
    ("vllm_v0", 'queues = { parked = [2] }', "key_frames[0].expect.queues.parked"),
    ("vllm_v0", 'side_pools = { disk = {} }', "key_frames[0].expect.side_pools.disk"),
    ("vllm", 'queues = { swapped = [] }', "key_frames[0].expect.queues.swapped")])
def test_a_key_frame_naming_a_queue_or_pool_its_scheduler_does_not_declare_is_refused(tmp_path, scheduler, expect,
                                                                                      key):
    path = tmp_path / "s.toml"
    path.write_text(f'title = "t"\nnarrative = "n"\nscheduler = "{scheduler}"\n[config]\n'
                    '[[workload.requests]]\nprompt_token_ids = [1, 2]\n'
                    f'[[key_frames]]\nstep = 1\nnote = "n"\nexpect = {{ {expect} }}\n')
    with pytest.raises(ScenarioError) as error:
        load_scenario(path)
    assert error.value.key == key and "declares no such queue or pool" in str(error.value)
