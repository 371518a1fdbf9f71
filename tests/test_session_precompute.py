"""Presets computed at server start: the run a student's link opens is found in the run cache, run to its end,
so the student's steps read it, and it is pinned there; a name that is no preset is reported, and the others still
run."""

from engine.inputs.scenario import SCENARIOS_DIR, load_scenario
from session.links import open_link, parse_link
from session.precompute import Precompute, precompute_names
from session.run_cache import shared_run_cache

SCENARIOS = {name: load_scenario(SCENARIOS_DIR / f"{name}.toml") for name in ("02_preemption", "05_prefix_caching")}


def test_names_are_read_in_order_without_blanks_or_repeats():
    assert precompute_names(" 05_prefix_caching, ,02_preemption,05_prefix_caching ") == [
        "05_prefix_caching", "02_preemption"]
    assert precompute_names("") == []


def test_a_precomputed_preset_is_the_run_a_link_opens_and_its_steps_are_reads():
    job = Precompute(["nope", "05_prefix_caching"], SCENARIOS, "fake").start()
    job.thread.join(60)
    assert job.done
    assert job.status["nope"].startswith("not a preset here")
    assert job.status["05_prefix_caching"].endswith("to its end")
    student = open_link(parse_link({"scenario": "05_prefix_caching"}, SCENARIOS), SCENARIOS, "fake")
    computed = len(student.frames)
    assert computed > 1 and f"{computed - 1} frames" in job.status["05_prefix_caching"]
    assert shared_run_cache().hits >= 1
    student.run(computed - 1)
    assert student.last == computed - 1 and len(student.frames) == computed  # nothing more was computed
    assert student.is_over
    cache = shared_run_cache()  # pinned: students' runs never evict it; the panel says what it holds now
    assert job.addresses["05_prefix_caching"] in cache.pinned
    assert job.holds("05_prefix_caching", cache) == f"in the run cache now: {computed - 1} frames, pinned"
    assert job.holds("nope", cache) is None


def test_nothing_to_compute_starts_no_thread():
    job = Precompute([], SCENARIOS, "fake").start()
    assert job.done and job.status == {}
