"""The sandbox benches' own parts: Pyodide's stand-in for xxhash gives the C package's digests (so the run measured
under Pyodide decides as the native one), and the class bench's verdict on a learner's run is the hostile suite's."""

import importlib.util
import random

import xxhash

from bench.bench_sandbox import described, ended_as_told
from bench.bench_sandbox_choice import SHIMS
from engine.check.invariants import Broken
from i18n import Message
from sandbox import Outcome
from sandbox.run import Fault
from tests.helpers.hostile import HOSTILE


def shim():
    spec = importlib.util.spec_from_file_location("xxhash_shim", SHIMS / "xxhash.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_pure_python_xxh64_gives_the_c_packages_digests_whole_and_in_pieces():
    xxh64, rng = shim(), random.Random(0)
    for length in [*range(80), 255, 1000]:  # every tail: 32-byte stripes, 8, 4 and single bytes
        data = rng.randbytes(length)
        assert xxh64.xxh64_intdigest(data) == xxhash.xxh64_intdigest(data), length
        pieces = xxh64.xxh64()
        pieces.update(data[:length // 3])
        pieces.update(data[length // 3:])
        assert pieces.intdigest() == xxhash.xxh64_intdigest(data), length


def test_a_run_ends_as_the_suite_says_only_with_the_programs_own_ending():
    cpu = Outcome(stopped=Message("sandbox.cpu", s=1))
    assert ended_as_told(HOSTILE["endless_loop"], cpu)
    assert not ended_as_told(HOSTILE["endless_loop"], Outcome(stopped=Message("sandbox.wall", s=2)))
    assert not ended_as_told(HOSTILE["endless_loop"], Outcome())  # ran to its end: not contained
    missing = Fault("FileNotFoundError: [Errno 2] No such file or directory: '/etc/passwd'", 1,
                    Message("sandbox.raised", error="FileNotFoundError", line=1))
    assert ended_as_told(HOSTILE["read_passwd"], Outcome(fault=missing))
    assert not ended_as_told(HOSTILE["import_ui"], Outcome(fault=missing))
    broken = Broken("check.token", seq=0, index=0, token=7, expected=835)
    assert ended_as_told(HOSTILE["patched_checks"], Outcome(broken=broken))
    assert not ended_as_told(HOSTILE["patched_checks"], Outcome())
    assert described(cpu) == {"ended": "stopped", "key": "sandbox.cpu", "words": str(cpu.stopped)}
    assert described(Outcome(broken=broken))["key"] == "check.token"
    assert described(Outcome())["ended"] == "ok"
