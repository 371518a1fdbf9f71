"""The hostile-code suite's programs as data: each a learner's file (its class `Mine`) that attacks the server one
way, the limits it runs under, and how the sandbox must end it: `stopped` with a message id, or `raised` (their own
exception, whose traceback holds these words). Run by tests/test_sandbox_hostile.py, and by bench/bench_sandbox.py
while a class steps."""

from __future__ import annotations

from dataclasses import dataclass

from sandbox import Limits
from tests.helpers.sandboxed import learner

QUICK = Limits(cpu_s=2, wall_s=10, steps=50)
HOOK = "    def choose_victim(self, requester):\n"  # called when the preset's pool runs out: their code mid-run
ROOT_FILE = "/work/main/README.md"  # a file of the server's (any path of its tree: none is in the jail)


@dataclass(frozen=True)
class Hostile:
    source: str
    stopped: str | None = None  # the message id of outcome.stopped
    raised: str | None = None  # words of outcome.fault.text
    limits: Limits = QUICK
    class_name: str = "Mine"


def socket_to(port: int) -> str:
    return learner(before=f"import socket\nsocket.create_connection(('127.0.0.1', {port}), timeout=2)\n")


FORGE = ("import json, os, struct\n"
         "def forge(message):\n"
         "    data = json.dumps(message).encode()\n"
         "    os.write(3, struct.pack('>I', len(data)) + data)\n"
         "    os._exit(0)\n")


def forged(message: dict) -> str:
    """A file that writes `message` on the worker's channel as its answer, then ends the worker."""
    return learner(before=FORGE + f"forge({message!r})\n")


ANSWER = {"type": "result", "declaration": {"base": "article", "kind": "mine", "names": {}}, "trace": None,
          "broken": None, "fault": None, "stopped": None, "prints": ""}
PATCH_CHECKS = ("import sandbox.checked\nfor name in ('check_pool', 'check_requests', 'check_batch'):\n"
                "    setattr(sandbox.checked, name, lambda *args: None)\n")

HOSTILE = {
    "endless_loop": Hostile(learner(HOOK + "        while True:\n            pass\n"), "sandbox.cpu",
                            limits=Limits(cpu_s=1, steps=50)),
    "sleep": Hostile(learner(before="import time\ntime.sleep(60)\n"), "sandbox.wall", limits=Limits(wall_s=2)),
    "fork_bomb": Hostile(learner(before="import os\nwhile True:\n    os.fork()\n"), "sandbox.syscall"),
    "ten_gigabytes": Hostile(learner(HOOK + "        self.hoard = bytearray(10 * 2**30)\n"), "sandbox.memory"),
    "recursion": Hostile(learner(before="def down(n):\n    return down(n + 1)\n\n\ndown(0)\n"),
                         raised="RecursionError"),
    "recursion_limit_raised": Hostile(learner(before="import sys\nsys.setrecursionlimit(10**8)\n\n\n"
                                                     "def down(n):\n    return list(map(down, [n + 1]))\n\n\n"
                                                     "down(0)\n"), "sandbox.crashed"),  # each call a C frame too
    "read_passwd": Hostile(learner(before="open('/etc/passwd').read()\n"), raised="FileNotFoundError"),
    "read_server_file": Hostile(learner(before=f"open({ROOT_FILE!r}).read()\n"), raised="FileNotFoundError"),
    "write_app": Hostile(learner(before="open('/app/sandbox/planted.py', 'w').write('x')\n"),
                         raised="OSError: [Errno 30] Read-only"),
    "list_server_tree": Hostile(learner(before="import os\nos.listdir('/work')\n"), raised="FileNotFoundError"),
    "socket": Hostile(socket_to(9), "sandbox.syscall"),
    "os_system": Hostile(learner(before="import os\nos.system('touch /tmp/x')\n"), "sandbox.syscall"),
    "subprocess": Hostile(learner(before="import subprocess\nsubprocess.run(['true'])\n"), "sandbox.syscall"),
    "exec": Hostile(learner(before="import os\nos.execv('/usr/bin/true', ['true'])\n"), "sandbox.syscall"),
    "segfault": Hostile(learner(before="import ctypes\nctypes.string_at(0)\n"), "sandbox.crashed"),
    "import_session": Hostile(learner(before="import session.classroom\n"),
                              raised="ModuleNotFoundError: No module named 'session'"),
    "import_ui": Hostile(learner(before="import ui\n"), raised="ModuleNotFoundError: No module named 'ui'"),
    "forged_no_trace": Hostile(forged(ANSWER), "sandbox.malformed"),
    "forged_message": Hostile(forged({**ANSWER, "stopped": {"key": "narrate.idle", "values": {"step": "1"}}}),
                              "sandbox.malformed"),
    "forged_declaration": Hostile(forged({**ANSWER, "declaration": {"base": "article", "kind": "../x", "names": {}}}),
                                  "sandbox.bad_declaration"),
    "patched_checks": Hostile(learner(HOOK + "        return None\n", before=PATCH_CHECKS + "import runner.fake\n"
                                      "runner.fake.FakeRunner.next_token = lambda self, seq_id, position: 7\n"),
                              limits=Limits()),  # the referee's: outcome.broken
    "prints_megabytes": Hostile(learner(before="while True:\n    print('x' * 100_000)\n"), "sandbox.output",
                                limits=Limits(output_mb=1)),
    "writes_megabytes": Hostile(learner(before="import os\nwhile True:\n    os.write(1, b'x' * 100_000)\n"),
                                "sandbox.output", limits=Limits(output_mb=1)),
}
