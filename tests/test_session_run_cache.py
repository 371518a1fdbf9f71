"""The run cache: sessions on the same inputs share one run and one branch per change, never each other's
changes; the byte budget evicts the least recently used run, never a pinned one; a run over its share of the
budget is kept out."""

import pytest

from engine.inputs.scenario import SCENARIOS_DIR, load_scenario
from engine.run.engine import Engine
from engine.run.recipe import Change
from scheduler import Config
from session.lab import CustomSetup, Lab, RunInputs
from session.run_cache import RunCache, engine_bytes

PRESET = RunInputs.from_scenario(load_scenario(SCENARIOS_DIR / "05_prefix_caching.toml"), "fake")


@pytest.fixture
def cache():
    return RunCache(budget_bytes=2**30)


def frame_summaries(lab: Lab) -> list:
    frames = [lab.frames[k] for k in range(lab.cursor + 1)]
    return [(f.step, f.batch, f.waiting, f.running, f.config) for f in frames]


def test_two_labs_on_the_same_inputs_share_the_run_and_its_frames(cache):
    first, second = Lab(PRESET, cache=cache), Lab(PRESET, cache=cache)
    assert first.engine is second.engine and (cache.misses, cache.hits) == (1, 1)
    first.run(8)
    assert second.last == 0  # what another session computed is not shown until this one steps there
    second.run(8)
    assert second.engine.step_count == 8 and frame_summaries(second) == frame_summaries(first)
    alone = Lab(PRESET, cache=RunCache(budget_bytes=2**30))
    alone.run(8)
    assert frame_summaries(alone) == frame_summaries(first)


def test_a_change_in_one_lab_never_shows_in_the_other(cache):
    changed, other = Lab(PRESET, cache=cache), Lab(PRESET, cache=cache)
    changed.run(6)
    other.run(6)
    shared = other.engine
    changed.set_config(max_num_seqs=1)  # at its last frame, but the run is shared: it forks
    changed.add_request("one more please", max_tokens=3)
    assert changed.engine is not shared and other.engine is shared and shared.config_changes == []
    changed.run(4)
    other.run(4)
    assert other.config_in_effect().max_num_seqs == PRESET.config.max_num_seqs
    assert len(other.frame.requests) == len(PRESET.spec.workload) < len(changed.frame.requests)
    assert [f.config.max_num_seqs for f in changed.history()[7:]] == [1] * 4
    alone = Lab(PRESET, cache=RunCache(budget_bytes=2**30))
    alone.run(10)
    assert frame_summaries(other) == frame_summaries(alone)


def test_the_same_change_at_the_same_frame_shares_the_branch(cache):
    labs = [Lab(PRESET, cache=cache) for _ in range(3)]
    for lab in labs:
        lab.run(5)
        lab.goto(3)
        lab.set_config(max_num_seqs=2)
    assert labs[0].engine is labs[1].engine is labs[2].engine and labs[0].engine.step_count == 3
    labs[0].run(4)
    steps_before = labs[0].engine.step_count
    labs[1].run(4)
    assert labs[1].engine.step_count == steps_before and labs[1].cursor == 7


def test_a_sole_holder_changes_its_run_in_place_and_refiles_it(cache):
    lab = Lab(PRESET, cache=cache)
    lab.run(5)
    engine, old_address = lab.engine, PRESET.spec.address
    lab.set_config(max_num_seqs=2)
    assert lab.engine is engine and engine.step_count == 5  # no replay
    assert old_address not in cache and PRESET.spec.with_change(Change.config(5, {"max_num_seqs": 2})).address in cache
    again = Lab(PRESET, cache=cache)  # the preset from frame 0 is built again, unchanged
    assert again.engine is not engine and again.config_in_effect().max_num_seqs == PRESET.config.max_num_seqs


def test_the_byte_budget_evicts_the_least_recently_used_run():
    setups = [RunInputs.from_custom(CustomSetup(requests=n), Config(), "fake") for n in (4, 5, 6)]
    probe = RunCache(budget_bytes=2**30)
    Lab(setups[0], cache=probe).run(10)
    one_run = probe.stats()["bytes"]
    cache = RunCache(budget_bytes=int(2.5 * one_run), share_bytes=one_run * 2)
    labs = [Lab(inputs, cache=cache) for inputs in setups[:2]]
    for lab in labs:
        lab.run(10)
    assert cache.stats()["runs"] == 2
    labs[0].step()  # the first run is now the most recently used
    labs.append(Lab(setups[2], cache=cache))
    labs[2].run(10)
    stats = cache.stats()
    assert stats["runs"] == 2 and stats["bytes"] <= cache.budget_bytes
    assert setups[1].spec.address not in cache and setups[0].spec.address in cache
    labs[1].run(3)  # an evicted run lives on for the lab holding it
    assert labs[1].cursor == 13



def test_a_lab_behind_the_shared_run_sees_its_own_frame_and_settings(cache):
    ahead, behind = Lab(PRESET, cache=cache), Lab(PRESET, cache=cache)
    ahead.run(10_000)
    assert ahead.is_over
    behind.run(3)
    assert behind.last == 3 and not behind.is_over
    assert behind.config_in_effect() == ahead.frames[4].config
    behind.run(10_000)
    assert behind.is_over and behind.last == ahead.last and behind.engine is ahead.engine


def test_a_change_at_a_shared_runs_last_frame_copies_the_engine_instead_of_replaying(cache, monkeypatch):
    changed, other = Lab(PRESET, cache=cache), Lab(PRESET, cache=cache)
    changed.run(6)
    other.run(6)
    monkeypatch.setattr(Engine, "replay", lambda *args: pytest.fail("replayed"))
    changed.set_config(max_num_seqs=1)
    assert changed.engine is not other.engine and other.engine.config_changes == []
    changed.run(5)
    monkeypatch.undo()
    alone = Lab(PRESET, cache=RunCache(budget_bytes=2**30))
    alone.run(6)
    alone.set_config(max_num_seqs=1)  # its sole holder: changed in place
    alone.run(5)
    assert frame_summaries(changed) == frame_summaries(alone)
    assert [r.output_token_ids for r in changed.frame.requests] == [r.output_token_ids for r in alone.frame.requests]


def test_a_branch_behind_the_last_frame_steps_on_from_the_latest_checkpoint_not_from_frame_0(monkeypatch):
    cache = RunCache(budget_bytes=2**30, checkpoint_every=4, checkpoint_runners=frozenset({"fake"}))
    lab = Lab(PRESET, cache=cache)
    lab.run(5)
    lab.add_request("made at frame 5", max_tokens=3)  # the run's own change, between its checkpoints
    lab.run(9)
    run = lab._run
    assert sorted(run.checkpoints) == [8, 12]  # the two latest multiples of 4 (4 was dropped)
    steps = []
    real_step = Engine.step
    monkeypatch.setattr(Engine, "replay", lambda *args: pytest.fail("replayed from frame 0"))
    monkeypatch.setattr(Engine, "step", lambda engine: steps.append(engine.step_count) or real_step(engine))
    other = Lab(PRESET, cache=cache)
    other.run(5)  # the preset unchanged, built again (the first lab's run was changed in place)
    other.add_request("made at frame 5", max_tokens=3)  # the same change at the same frame: the first lab's run
    steps.clear()
    other.run(6)
    assert other.engine is lab.engine and not steps
    other.goto(10)
    other.set_config(max_num_seqs=1)  # a branch two frames after checkpoint 8: two steps, not ten
    assert steps == [8, 9]
    monkeypatch.undo()
    other.run(4)
    alone = Lab(PRESET, cache=RunCache(budget_bytes=2**30))  # the same changes, made live
    alone.run(5)
    alone.add_request("made at frame 5", max_tokens=3)
    alone.run(5)
    alone.set_config(max_num_seqs=1)
    alone.run(4)
    assert frame_summaries(other) == frame_summaries(alone)
    assert [r.output_token_ids for r in other.frame.requests] == [r.output_token_ids for r in alone.frame.requests]
    assert run.nbytes > sum(engine_bytes(e) for e in [run.engine])  # the copies count


def test_a_run_that_cannot_be_copied_keeps_no_checkpoints_and_its_branches_replay():
    overlapped = RunInputs.from_scenario(load_scenario(SCENARIOS_DIR / "10_overlap.toml"), "fake")
    cache = RunCache(budget_bytes=2**30, checkpoint_every=4, checkpoint_runners=frozenset({"fake"}))
    lab = Lab(overlapped, cache=cache)
    lab.run(9)
    assert lab._run.checkpoints == {}  # its worker thread cannot be copied: tried once, then not again
    Lab(overlapped, cache=cache).run(6)  # a second holder: the change below forks
    lab.goto(6)
    lab.set_config(max_num_seqs=1)
    lab.run(2)
    assert lab.cursor == 8 and lab.frames[8].config.max_num_seqs == 1


def test_checkpoints_are_kept_only_while_they_fit_in_the_budget():
    probe = RunCache(budget_bytes=2**30, checkpoint_runners=frozenset())  # the run alone, no copies
    Lab(PRESET, cache=probe).run(8)
    tight = RunCache(budget_bytes=probe.stats()["bytes"] * 21 // 20, checkpoint_every=4,  # the run fits, a copy
                     checkpoint_runners=frozenset({"fake"}), share_bytes=2**30)  # beside it never does
    lab = Lab(PRESET, cache=tight)
    lab.run(8)
    assert lab._run.checkpoints == {} and tight.stats()["runs"] == 1


def test_pinned_runs_are_never_evicted_nor_changed_in_place():
    setups = [RunInputs.from_custom(CustomSetup(requests=n), Config(), "fake") for n in (4, 5, 6)]
    probe = RunCache(budget_bytes=2**30)
    Lab(setups[0], cache=probe).run(10)
    cache = RunCache(budget_bytes=int(1.5 * probe.stats()["bytes"]), share_bytes=2**30)
    pinned = Lab(setups[0], cache=cache)
    pinned.run(10)
    address = pinned.pin()
    for inputs in setups[1:]:  # each alone fits; with the pinned run, only one more does
        Lab(inputs, cache=cache).run(10)
    assert address in cache and cache.frames_of(address) == 11 and cache.stats()["pinned"] == 1
    assert setups[1].spec.address not in cache and cache.frames_of(setups[1].spec.address) is None
    engine = pinned.engine
    pinned.set_config(max_num_seqs=2)  # the sole holder at the last frame: a pinned run is forked, not changed
    assert pinned.engine is not engine and address in cache and cache.frames_of(address) == 11


def test_a_run_larger_than_its_share_of_the_cache_is_kept_out_and_shared_by_nobody():
    probe = RunCache(budget_bytes=2**30)
    Lab(PRESET, cache=probe).run(10)
    cache = RunCache(budget_bytes=2**30, share_bytes=probe.stats()["bytes"] // 2)
    small = Lab(RunInputs.from_custom(CustomSetup(requests=2), Config(), "fake"), cache=cache)
    big = Lab(PRESET, cache=cache)
    assert not big.kept_out  # at frame 0 it fits its share
    big.run(10)
    assert big.kept_out and PRESET.spec.address not in cache and small.cursor == 0
    assert cache.stats()["runs"] == 1  # the small run stays
    other = Lab(PRESET, cache=cache)  # a run kept out is not found by other sessions: built again
    assert other.engine is not big.engine and not other.kept_out
    big.run(3)  # and still steps on for its own session
    assert big.cursor == 13
