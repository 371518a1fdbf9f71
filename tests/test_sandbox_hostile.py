"""The hostile-code suite: a learner's file that loops, forks, allocates, recurses, reads or writes the server's
files, opens a socket, starts a program, calls C, imports the server's modules, patches the checks or forges the
worker's answer, or prints megabytes. Each is contained by the sandbox (sandbox/: the jail, the seccomp filter,
the rlimits, the deadline, the caps, the referee), says what happened in `outcome`, and leaves the server as it was:
its memory, its files, and the next run."""

import resource
import socket

import pytest

from sandbox import Limits, run_learner
from sandbox import run as sandbox_run
from tests.helpers.sandboxed import NEEDS_JAIL, learner, preset_spec, registry  # noqa: F401 - a fixture
from tests.helpers.source import ROOT

pytestmark = [NEEDS_JAIL, pytest.mark.usefixtures("registry")]
QUICK = Limits(cpu_s=2, wall_s=10, steps=50)
HOOK = "    def choose_victim(self, requester):\n"  # called when the preset's pool runs out: their code mid-run


def run(source: str, limits: Limits = QUICK):
    return run_learner(source, "Mine", preset_spec(), limits)


def stopped(source: str, key: str, limits: Limits = QUICK):
    outcome = run(source, limits)
    assert outcome.stopped is not None and outcome.stopped.key == key, outcome
    assert outcome.trace is None and not outcome.ok
    return outcome


def raised(source: str, error: str):
    outcome = run(source)
    assert outcome.fault is not None and error in outcome.fault.text, outcome
    assert 'File "/app/' not in outcome.fault.text  # their frames only
    return outcome


@pytest.fixture(autouse=True)
def server_unharmed():
    """After each: the server's memory has not grown by the learner's, and a sound learner's run still works."""
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    yield
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 200 * 1024  # KiB
    assert run(learner(), Limits(steps=3)).ok


def test_an_endless_loop_uses_up_its_cpu_time():
    stopped(learner(HOOK + "        while True:\n            pass\n"), "sandbox.cpu", Limits(cpu_s=1, steps=50))


def test_a_sleeping_run_meets_the_wall_clock_deadline():
    stopped(learner(before="import time\ntime.sleep(60)\n"), "sandbox.wall", Limits(wall_s=2))


def test_a_fork_bomb_is_refused_at_its_first_fork():
    stopped(learner(before="import os\nwhile True:\n    os.fork()\n"), "sandbox.syscall")


def test_ten_gigabytes_are_refused():
    stopped(learner(HOOK + "        self.hoard = bytearray(10 * 2**30)\n"), "sandbox.memory")


def test_deep_recursion_is_their_recursion_error_and_with_the_limit_raised_a_contained_crash():
    outcome = raised(learner(before="def down(n):\n    return down(n + 1)\n\n\ndown(0)\n"), "RecursionError")
    assert outcome.fault.line == 5 and len(outcome.fault.text) <= sandbox_run.MAX_FAULT_TEXT
    through_c = "def down(n):\n    return list(map(down, [n + 1]))\n\n\n"  # each call a C frame too
    stopped(learner(before=f"import sys\nsys.setrecursionlimit(10**8)\n{through_c}down(0)\n"), "sandbox.crashed")


def test_the_servers_files_are_not_there_to_read_or_write(tmp_path):
    raised(learner(before="open('/etc/passwd').read()\n"), "FileNotFoundError")
    raised(learner(before=f"open({str(ROOT / 'README.md')!r}).read()\n"), "FileNotFoundError")
    target = ROOT / "sandbox" / "planted.py"
    raised(learner(before="open('/app/sandbox/planted.py', 'w').write('x')\n"), "OSError: [Errno 30] Read-only")
    raised(learner(before=f"open({str(target)!r}, 'w').write('x')\n"), "FileNotFoundError")
    assert not target.exists()
    scratch = run(learner(before="import os\nopen('/tmp/scratch', 'w').write('mine')\n"
                                 "print(sorted(os.listdir('/')))\n"))
    assert scratch.ok and scratch.prints == "['app', 'bin', 'dev', 'lib', 'lib64', 'root', 'site', 'tmp', 'usr']\n"


def test_another_students_submission_and_the_servers_modules_are_out_of_reach():
    raised(learner(before="import session.classroom\n"), "ModuleNotFoundError: No module named 'session'")
    raised(learner(before="import ui\n"), "ModuleNotFoundError: No module named 'ui'")
    raised(learner(before="import os\nos.listdir('/work')\n"), "FileNotFoundError")
    home = run(learner(before="import os\nprint(os.listdir('/root'), os.environ.get('REDIS_URL'))\n"))
    assert home.prints == "['.pyenv'] None\n" or home.prints.startswith("[] None"), home.prints  # the interpreter


def test_a_socket_to_the_servers_loopback_never_arrives():
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        listener.settimeout(0.5)
        port = listener.getsockname()[1]
        stopped(learner(before=f"import socket\nsocket.create_connection(('127.0.0.1', {port}), timeout=2)\n"),
                "sandbox.syscall")
        with pytest.raises(TimeoutError):
            listener.accept()


def test_starting_a_program_is_refused():
    stopped(learner(before="import os\nos.system('touch /tmp/x')\n"), "sandbox.syscall")
    stopped(learner(before="import subprocess\nsubprocess.run(['true'])\n"), "sandbox.syscall")
    stopped(learner(before="import os\nos.execv('/usr/bin/true', ['true'])\n"), "sandbox.syscall")


def test_ctypes_calls_stay_inside_and_a_segfault_is_a_contained_crash():
    called = run(learner(before="import ctypes\nprint(ctypes.CDLL(None).getpid())\n"))
    assert called.ok and called.prints == "2\n"  # its own pid namespace: bubblewrap is 1
    stopped(learner(before="import ctypes\nctypes.string_at(0)\n"), "sandbox.crashed")


PATCH_CHECKS = ("import sandbox.checked\nfor name in ('check_pool', 'check_requests', 'check_batch'):\n"
                "    setattr(sandbox.checked, name, lambda *args: None)\n")


def test_a_worker_whose_checks_were_patched_is_caught_on_the_server():
    source = (ROOT / "starters" / "double_free.py").read_text() + "\n" + PATCH_CHECKS
    outcome = run_learner(source, "DoubleFree", preset_spec())
    assert outcome.stopped is not None and outcome.stopped.key == "sandbox.malformed", outcome  # the schema's
    assert "ref_count: -1" in outcome.stopped


def test_a_worker_whose_model_was_patched_is_caught_by_the_referee():
    cheat = ("import runner.fake\nrunner.fake.FakeRunner.next_token = lambda self, seq_id, position: 7\n"
             + PATCH_CHECKS)
    outcome = run(learner(before=cheat), Limits())
    assert outcome.broken is not None and outcome.broken.message_id == "check.token", outcome
    assert not outcome.ok and outcome.trace is not None


FORGE = ("import json, os, struct\n"
         "def forge(message):\n"
         "    data = json.dumps(message).encode()\n"
         "    os.write(3, struct.pack('>I', len(data)) + data)\n"
         "    os._exit(0)\n")


def test_a_forged_answer_is_believed_in_nothing():
    declared = {"base": "article", "kind": "mine", "names": {}}
    no_trace = {"type": "result", "declaration": declared, "trace": None, "broken": None, "fault": None,
                "stopped": None, "prints": ""}
    stopped(learner(before=FORGE + f"forge({no_trace!r})\n"), "sandbox.malformed")
    foreign = {**no_trace, "stopped": {"key": "narrate.idle", "values": {"step": "1"}}}
    stopped(learner(before=FORGE + f"forge({foreign!r})\n"), "sandbox.malformed")
    wide = {**no_trace, "declaration": {"base": "article", "kind": "../x", "names": {}}}
    stopped(learner(before=FORGE + f"forge({wide!r})\n"), "sandbox.bad_declaration")


def test_megabytes_of_output_are_stopped_with_a_message():
    stopped(learner(before="while True:\n    print('x' * 100_000)\n"), "sandbox.output", Limits(output_mb=1))
    stopped(learner(before="import os\nwhile True:\n    os.write(1, b'x' * 100_000)\n"), "sandbox.output",
            Limits(output_mb=1))


def test_a_saturated_server_says_busy_at_once():
    held = 0
    while sandbox_run._slots.acquire(blocking=False):
        held += 1
    try:
        assert run(learner()).stopped.key == "sandbox.busy"
    finally:
        for _ in range(held):
            sandbox_run._slots.release()
