"""Key-frame notes are checked by the reasons they give (who needs a block, who is preempted for whom, what
is freed, what completes), and a note a branched run no longer shows does not hold."""

import re

import pytest

from engine.inputs.key_frames import KeyFrame
from engine.inputs.scenario import SCENARIOS_DIR, load_scenario, preset_paths

# Words of a note -> the `expect` keys, one of which must state that claim.
CLAIM_WORDS = {
    r"preempt": ("preempted_for", "recomputed"),
    r"\bneeds? (a|one|another|its|\w+ more|a \w+) (second |third |fourth )?block": ("needs_block",),
    r"\bfreed\b|\bfree their\b": ("freed",),
    r"first token|completes the prompt": ("first_token",),
    r"\bfinish(es)?\b": ("finished", "finished_late"),
    r"\bpauses?\b": ("paused",),
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
