"""The sandbox's worker, run inside the jail (sandbox/jail.py): it reads a job from stdin (the learner's source, its
class name, a RunSpec as data, the limits), loads the learner's class, runs the engine with the contract's checks
after every step (sandbox/checked.py) and writes back one result message (sandbox/protocol.py) on its own pipe:
the run as a trace (the CLI's writer), with the invariant it broke or the fault its code raised, the learner's
declaration (sandbox/kinds.py) and prints. The protocol keeps the stdout the worker was started with; fd 1 is then
pointed at stderr and `print` at a capped buffer, before the learner's code is read, so nothing it prints or writes
can look like a message. On the real model the engine's runner is a proxy that asks the server for each step's
outputs (sandbox/model_proxy.py). Nothing here is trusted by the server: it checks everything it gets again."""

from __future__ import annotations

import io
import os
import sys
import traceback
from pathlib import Path

from engine.check.invariants import Broken
from engine.learner import load_source, their_traceback
from engine.run.recipe import RunSpec
from engine.traces.trace import trace_dict
from i18n import Message, MessageError
from sandbox import protocol
from sandbox.checked import CheckedEngine
from sandbox.kinds import declaration
from sandbox.limits import PRINTS_KEPT
from sandbox.model_proxy import Ask, install
from sandbox.seccomp_load import install as install_filter
from scheduler.factory import SCHEDULERS

THEIR_FILE = Path("/learner/mine.py")  # the name their frames and lines are shown under


class TooMuchOutput(BaseException):
    """The learner printed past the output cap (a BaseException, so an `except Exception` of theirs goes on)."""


class Prints(io.TextIOBase):
    """The learner's prints: the first PRINTS_KEPT characters kept, all counted; past `most`, TooMuchOutput."""

    def __init__(self, most: int):
        self.most, self.total = most, 0
        self.kept: list[str] = []

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        kept = sum(map(len, self.kept))
        self.kept.append(str(text)[:max(0, PRINTS_KEPT - kept)])
        self.total += len(text)
        if self.total > self.most:
            raise TooMuchOutput
        return len(text)

    @property
    def text(self) -> str:
        return "".join(self.kept)


def message_data(message: Message) -> dict:
    return {"key": message.key, "values": {k: str(v) for k, v in message.values.items()}}


def fault(error: BaseException) -> dict:
    """What an exception raised in the learner's code (or by loading it) says: their traceback and line."""
    if isinstance(error, MessageError):  # a file that is not a scheduler: the app's own words
        return {"text": str(error), "line": None, "message": message_data(error.message)}
    shown = their_traceback(error, THEIR_FILE)
    frames = [f for f in traceback.extract_tb(error.__traceback__) if f.filename == str(THEIR_FILE)]
    line = getattr(error, "lineno", None) if isinstance(error, SyntaxError) else (frames[-1].lineno if frames else None)
    said = traceback.format_exception_only(type(error), error)[-1].strip()
    text = shown if shown is not None else "".join(traceback.format_exception_only(type(error), error))
    return {"text": text, "line": line,
            "message": message_data(Message("sandbox.raised" if line else "sandbox.raised_no_line", error=said[:500],
                                            line=line or 0))}


def run(job: dict, ask: Ask) -> dict:
    """The result of `job`: the run's trace (up to where it ended, broke or raised), and what happened."""
    result: dict = {"type": "result", "declaration": None, "trace": None, "broken": None, "fault": None,
                    "stopped": None}
    engine = None
    try:
        loaded = load_source(job["source"], job["class_name"], THEIR_FILE)
        result["declaration"] = declaration(SCHEDULERS[loaded.kind])
        spec = RunSpec.from_dict({**job["spec"], "scheduler": loaded.kind})
        if spec.runner == "model":
            install(ask, result["declaration"])
        engine = CheckedEngine(spec)
        engine.run(job["limits"]["steps"])
    except Broken as e:
        result["broken"] = {**message_data(e.message), "step": e.step}
    except TooMuchOutput:
        result["stopped"] = message_data(Message("sandbox.output", mb=job["limits"]["output_mb"]))
    except MemoryError:
        result["stopped"] = message_data(Message("sandbox.memory", mb=job["limits"]["memory_mb"]))
    except BaseException as e:  # raised by their code (SystemExit too) or by loading it
        result["fault"] = fault(e)
    if engine is not None:
        result["trace"] = trace_of(engine, job.get("title"), whole=result["broken"] is None and
                                   result["fault"] is None and result["stopped"] is None)
    return result


def trace_of(engine, title, whole: bool) -> dict | None:
    """The run as a trace: the whole of it, or, for a run that broke off in a step, its frames before that step
    replayed (the step's own frame may hold what no trace can: a block freed twice), or None where even the
    replay breaks (their code deciding otherwise the second time)."""
    try:
        return trace_dict(engine if whole else engine.replay(engine.step_count - 1), title)
    except Exception:
        return None


def main():
    channel = os.dup(1)
    os.dup2(2, 1)  # a raw write to fd 1 lands with stderr, which the server drains and caps
    job = protocol.receive(0)
    prints = Prints(job["limits"]["output_mb"] * 2**20)
    sys.stdout = sys.stderr = prints
    install_filter(bytes.fromhex(job["exec_filter"]))  # no exec from here on (sandbox/seccomp.py)

    def ask(message: dict) -> dict:
        protocol.send(channel, message)
        return protocol.receive(0)

    try:
        result = run(job, ask)
    except TooMuchOutput:
        result = {"type": "result", "stopped": message_data(Message("sandbox.output", mb=job["limits"]["output_mb"]))}
    result["prints"] = prints.text
    result["printed"] = prints.total
    protocol.send(channel, result)
