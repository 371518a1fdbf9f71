"""The hostile-code suite (its programs: tests/helpers/hostile.py): a learner's file that loops, forks, allocates,
recurses, reads or writes the server's files, opens a socket, starts a program, calls C, imports the server's
modules, patches the checks or the model, forges the worker's answer, or prints megabytes. Each is contained by the
sandbox (sandbox/: the jail, the seccomp filter, the rlimits, the deadline, the caps, the referee), says what
happened in `outcome`, and leaves the server as it was: its memory, its files, and the next run."""

import resource
import socket
import sys
from pathlib import Path

import pytest

from sandbox import Limits, run_learner
from sandbox import run as sandbox_run
from tests.helpers.hostile import HOSTILE, PATCH_CHECKS, QUICK, socket_to
from tests.helpers.sandboxed import NEEDS_JAIL, learner, preset_spec, registry  # noqa: F401 - a fixture
from tests.helpers.source import ROOT

pytestmark = [NEEDS_JAIL, pytest.mark.usefixtures("registry")]


def run(source: str, limits: Limits = QUICK):
    return run_learner(source, "Mine", preset_spec(), limits)


@pytest.fixture(autouse=True)
def server_unharmed(request):
    """After each: the server's memory has not grown by the learner's, its files are as they were, and a sound
    learner's run still works (its kind gone with the test's: `registry` ends after this)."""
    request.getfixturevalue("registry")
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    yield
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 200 * 1024  # KiB
    assert not (ROOT / "sandbox" / "planted.py").exists()
    assert run(learner(), Limits(steps=3)).ok


@pytest.mark.parametrize("name", [n for n, h in HOSTILE.items() if h.stopped or h.raised])
def test_each_hostile_program_is_contained_with_a_clear_message(name):
    hostile = HOSTILE[name]
    outcome = run_learner(hostile.source, hostile.class_name, preset_spec(), hostile.limits)
    assert not outcome.ok
    if hostile.stopped:
        assert outcome.stopped is not None and outcome.stopped.key == hostile.stopped, outcome
        assert outcome.trace is None
    else:
        assert outcome.fault is not None and hostile.raised in outcome.fault.text, outcome
        assert 'File "/app/' not in outcome.fault.text  # their frames only
        assert len(outcome.fault.text) <= sandbox_run.MAX_FAULT_TEXT


def test_deep_recursion_points_at_their_line():
    assert run(HOSTILE["recursion"].source).fault.line == 5


def test_a_socket_to_the_servers_loopback_never_arrives():
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        listener.settimeout(0.5)
        assert run(socket_to(listener.getsockname()[1])).stopped.key == "sandbox.syscall"
        with pytest.raises(TimeoutError):
            listener.accept()


def test_what_the_jail_holds_and_lets_them_do():
    """A scratch file in its own /tmp, its own pid namespace, a C call: contained, nothing of the server's seen (the
    interpreter's folder only, where it lies outside /usr)."""
    source = learner(before="import ctypes, os\nopen('/tmp/scratch', 'w').write('mine')\n"
                            "print(sorted(os.listdir('/')), ctypes.CDLL(None).getpid(), sorted(os.environ))\n")
    outcome = run(source)
    assert outcome.ok, outcome
    top = {"app", "bin", "dev", "lib", "lib64", "site", "tmp", "usr", Path(sys.base_prefix).parts[1]}
    environment = ["HF_HUB_OFFLINE", "HOME", "LANG", "OPENBLAS_NUM_THREADS", "PWD", "PYTHONHASHSEED",
                   "PYTHONIOENCODING"]  # HF_HUB_OFFLINE: set by the runner package as it is imported
    assert outcome.prints == f"{sorted(top)} 2 {environment}\n"  # pid 1 is bubblewrap's


def test_a_worker_whose_checks_were_patched_is_caught_on_the_server():
    source = (ROOT / "starters" / "double_free.py").read_text() + "\n" + PATCH_CHECKS
    outcome = run_learner(source, "DoubleFree", preset_spec())
    assert outcome.stopped is not None and outcome.stopped.key == "sandbox.malformed", outcome  # the schema's
    assert "ref_count: -1" in outcome.stopped


def test_a_worker_whose_model_was_patched_is_caught_by_the_referee():
    hostile = HOSTILE["patched_checks"]
    outcome = run(hostile.source, hostile.limits)
    assert outcome.broken is not None and outcome.broken.message_id == "check.token", outcome
    assert not outcome.ok and outcome.trace is not None


def test_a_saturated_server_says_busy_at_once():
    held = 0
    while sandbox_run._slots.acquire(blocking=False):
        held += 1
    try:
        assert run(learner()).stopped.key == "sandbox.busy"
    finally:
        for _ in range(held):
            sandbox_run._slots.release()
