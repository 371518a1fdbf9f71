"""A model step that fails (the model process killed under it) never freezes its run: the student reads which step
failed and that nothing is lost, the next step restores the engine to the last good frame (from a checkpoint, else
replayed) and computes the failed step anew, and every frame from then on is the undisturbed run's: with a fault of the
fake model's, and with the real model's process killed (kill -9) under a step."""

import os
import signal
import threading

import pytest

from engine.inputs.scenario import SCENARIOS_DIR, load_scenario
from engine.run.runner_factory import model_worker
from i18n import in_lang
from scheduler import Config
from session.lab import CustomSetup, Lab, LabError, RunInputs
from session.run_cache import RunCache
from tests.helpers.engines import comparable
from tests.helpers.waiting import wait_until

FAIL_AT = 7  # the step that fails
KILLED = "the model process stopped (EOFError, exit code -9)"


def inputs(preset: str) -> RunInputs:
    return RunInputs.from_scenario(load_scenario(SCENARIOS_DIR / f"{preset}.toml"), "fake")


def fail_next_model_call(lab: Lab):
    """The run's runner raises, as a killed model process does, the next time it is asked for tokens (armed right
    before that step, so no checkpoint holds a copy of the fault)."""
    runner, armed = lab.engine.runner, [True]
    real_run = runner.run

    def run(seqs):
        if armed:
            armed.clear()
            raise RuntimeError(KILLED)
        return real_run(seqs)

    runner.run = run


def undisturbed(preset: str, steps: int) -> list[dict]:
    lab = Lab(inputs(preset), cache=RunCache(budget_bytes=2**30))
    lab.run(3)
    lab.add_request("added by hand at frame 3", max_tokens=4)
    lab.run(steps - 3)
    return [comparable(lab.frames[k]) for k in range(lab.last + 1)]


@pytest.mark.parametrize(("preset", "checkpoint_runners"), [
    ("05_prefix_caching", frozenset()),  # restored by a replay from frame 0
    ("05_prefix_caching", frozenset({"fake"})),  # restored from the checkpoint at frame 4
    ("10_overlap", frozenset()),  # the failure lands from the overlapped step's worker
])
def test_a_failed_step_is_said_and_computed_again_and_the_run_goes_on_as_if_undisturbed(preset, checkpoint_runners):
    cache = RunCache(budget_bytes=2**30, checkpoint_every=4, checkpoint_runners=checkpoint_runners)
    lab, classmate = Lab(inputs(preset), cache=cache), Lab(inputs(preset), cache=cache)
    lab.run(3)
    lab.add_request("added by hand at frame 3", max_tokens=4)  # the run's own change: restored with it
    classmate.run(3)
    classmate.add_request("added by hand at frame 3", max_tokens=4)
    assert classmate.shared_run is lab.shared_run
    lab.run(FAIL_AT - 1 - 3)
    fail_next_model_call(lab)
    with pytest.raises(LabError) as failed:
        lab.run(2)  # overlapped, the model's failure lands with the step after the one it was computing
    failed_step = failed.value.values["step"]
    assert failed.value.message_id == "lab.step_failed" and failed_step in (FAIL_AT, FAIL_AT + 1)
    assert failed.value.values["frame"] == failed_step - 1
    for lang in ("en", "zh"):
        assert KILLED in in_lang(lang, failed.value) and f"{failed_step - 1}" in in_lang(lang, failed.value)
    assert lab.cursor == lab.last == failed_step - 1 and not lab.is_over  # the frames so far kept, not over
    assert lab.shared_run.address not in cache  # no later session inherits the half-made step

    classmate.run(FAIL_AT + 2 - 3)  # another holder steps first: it restores the run and computes the step
    assert classmate.cursor == FAIL_AT + 2 and lab.shared_run.address in cache
    lab.run(40)
    want = undisturbed(preset, lab.last)
    assert [comparable(lab.frames[k]) for k in range(lab.last + 1)] == want
    assert [comparable(classmate.frames[k]) for k in range(classmate.last + 1)] == want[:classmate.last + 1]


def test_a_restore_that_fails_too_leaves_the_run_able_to_try_again(monkeypatch):
    cache = RunCache(budget_bytes=2**30)
    lab = Lab(inputs("05_prefix_caching"), cache=cache)
    lab.run(2)
    fail_next_model_call(lab)
    with pytest.raises(LabError):
        lab.step()
    run = lab.shared_run

    def still_down():
        raise RuntimeError("the model process stopped; it starts again with a step after 10 s")

    monkeypatch.setattr(run, "restored", still_down)
    with pytest.raises(LabError, match="starts again"):
        lab.step()
    assert run.broken and lab.cursor == 2 and len(lab.frames) == 3
    monkeypatch.undo()
    lab.run(5)
    assert lab.cursor == 7 and not run.broken


def shown(lab: Lab) -> list[dict]:
    """Every frame without its wall-clock times (the real model's `timing` is measured)."""
    return [{k: v for k, v in comparable(lab.frames[k]).items() if k != "timing"} for k in range(lab.last + 1)]


@pytest.mark.model
@pytest.mark.parametrize("resends", [1, 0])  # the step sent again to the new process; or failed, and restored
def test_a_real_kill_of_the_model_process_mid_step_leaves_the_frames_of_an_undisturbed_run(monkeypatch, resends):
    from runner import model_process  # torch and the model: imported by the slow test alone

    monkeypatch.setattr(model_process, "RESTART_INTERVAL_S", 0.0)  # whatever other tests restarted before
    monkeypatch.setattr(model_process, "RESENDS", resends)
    inputs = RunInputs.from_custom(CustomSetup(requests=3, prompts="chat", max_tokens=8), Config(num_kvcache_blocks=24),
                                   "model", seed=2)
    lab, process = Lab(inputs, cache=RunCache(budget_bytes=2**30)), model_worker()
    lab.run(4)
    child = process._child
    os.kill(child.process.pid, signal.SIGSTOP)  # it cannot answer the next step: that step is in flight for sure
    failed = []
    stepping = threading.Thread(target=lambda: failed.append(pytest.raises(LabError, lab.step).value) if resends == 0
                                else lab.step())
    stepping.start()
    wait_until(lambda: process._waiting, "the step to reach the model process", 60)
    child.process.kill()
    stepping.join(timeout=300)
    assert not stepping.is_alive()
    if resends:
        assert lab.last == 5 and process._child is not child  # the step in flight came back from a new process
    else:
        assert failed and failed[0].message_id == "lab.step_failed" and lab.last == 4
    lab.run(10 - lab.last)  # without the resend, the next step starts the new process
    assert process._child is not child
    alone = Lab(inputs, cache=RunCache(budget_bytes=2**30))
    alone.run(10)
    assert lab.last == 10 and shown(lab) == shown(alone)
