"""`run_learner`: a learner's scheduler run in the sandbox, and what came of it (`Outcome`). The server starts a
worker in the jail (sandbox/jail.py), hands it the job, reads what it sends within the wall-clock deadline and the
output cap, and believes none of it: the worker's messages are checked, its declaration registered as a
declaration only (sandbox/kinds.py), its trace checked as any uploaded trace is (engine/traces/schema.py)."""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import signal
import subprocess
import threading
import time
from dataclasses import dataclass

from engine.check.invariants import Broken, must_end
from engine.check.referee import referee
from engine.run.limits import SANDBOXES
from engine.run.recipe import RunSpec
from engine.traces.schema import TraceError, checked_trace
from i18n import CATALOGUES, DEFAULT, Message, MessageError
from sandbox import jail, kinds, protocol
from sandbox.limits import MAX_SOURCE, PRINTS_KEPT, Limits
from sandbox.model_host import ModelHost
from sandbox.seccomp import exec_filter

_slots = threading.BoundedSemaphore(SANDBOXES)
DEFAULT_LIMITS = Limits()
BROKEN = ("check.", "article.hook.")  # the words of an invariant broken, or of a hook's unusable answer
MAX_FAULT_TEXT = 20_000  # characters of a traceback handed out


@dataclass(frozen=True)
class Fault:
    """The learner's code raised, did not compile, or named no scheduler class: their traceback (their frames
    only), the line in their source it points at, and what happened in words."""
    text: str
    line: int | None
    message: Message


@dataclass(frozen=True)
class Outcome:
    trace: dict | None = None
    kind: str | None = None
    broken: Broken | None = None
    fault: Fault | None = None
    stopped: Message | None = None
    prints: str = ""

    @property
    def ok(self) -> bool:
        return self.broken is None and self.fault is None and self.stopped is None

    def stopped_short(self, broken_at: str) -> Message | None:
        """Why the run stopped before its end, in words: the invariant it broke, said by the message `broken_at`
        (its {step} and {what}), the error their code raised (at its line), or the limit it reached; None when it
        ran to its end."""
        if self.broken is not None:
            return Message(broken_at, step=self.broken.step, what=self.broken.message)
        return self.fault.message if self.fault is not None else self.stopped


class Malformed(Exception):
    """A worker's answer that is not what a worker sends."""


def run_learner(source: str, class_name: str, spec: RunSpec, limits: Limits = DEFAULT_LIMITS) -> Outcome:
    """Run the class `class_name` of the learner's `source` on `spec` in the sandbox; never raises for anything
    their code does. At most SANDBOXES at once: past that, at once, `stopped` says to try again."""
    if not jail.available():
        return Outcome(stopped=Message("sandbox.unavailable"))
    if len(source) > MAX_SOURCE:
        return Outcome(stopped=Message("sandbox.too_long", kb=MAX_SOURCE // 1024))
    if not _slots.acquire(blocking=False):
        return Outcome(stopped=Message("sandbox.busy"))
    try:
        job = {"source": source, "class_name": class_name, "spec": spec.to_dict(), "limits": limits.to_dict(),
               "exec_filter": jail.filter_program(exec_filter).hex()}
        result, stopped = exchange(job, limits, ModelHost(spec) if spec.runner == "model" else None)
    finally:
        _slots.release()
    if result is None:
        return Outcome(stopped=stopped)
    try:
        return outcome(result, spec, limits)
    except (Malformed, TraceError, kinds.DeclarationError, ValueError, TypeError, KeyError, IndexError, AttributeError,
            RecursionError) as e:  # a worker that lies may send what fits no reader
        return Outcome(stopped=Message("sandbox.malformed", detail=str(e)[:200]))


def exchange(job: dict, limits: Limits, host: ModelHost | None) -> tuple[dict | None, Message | None]:
    """Start a worker, give it `job`, serve its model requests on `host` (a run on the real model), and read its
    result: (result, None), or (None, why it was stopped)."""
    process = jail.start(limits)
    try:
        return _converse(process, protocol.frame(job), limits, host)
    finally:
        _kill(process)


def _converse(process: subprocess.Popen, job: bytes, limits: Limits,
              host: ModelHost | None) -> tuple[dict | None, Message | None]:
    with selectors.DefaultSelector() as selector:
        assert process.stdin and process.stdout and process.stderr
        for stream in (process.stdin, process.stdout, process.stderr):
            os.set_blocking(stream.fileno(), False)
        selector.register(process.stdout, selectors.EVENT_READ)
        selector.register(process.stderr, selectors.EVENT_READ)
        return _pump(process, selector, job, limits, host)


def _pump(process, selector, job: bytes, limits: Limits, host: ModelHost | None) -> tuple[dict | None, Message | None]:
    """Write the job and each reply to the worker's stdin as it takes them, read its stdout (messages) and stderr
    (counted), until its result, its end, the deadline or the output cap."""
    deadline = time.monotonic() + limits.wall_s
    reader = protocol.Reader(limits.output_bytes)
    pending, open_streams = memoryview(b""), 2

    def send(data: bytes):
        nonlocal pending
        if not pending:
            selector.register(process.stdin, selectors.EVENT_WRITE)
        pending = memoryview(bytes(pending) + data)

    send(job)
    while open_streams:
        left = deadline - time.monotonic()
        if left <= 0:
            return None, late(limits, *jail.tree_times(process.pid))
        for key, _ in selector.select(left):
            if key.fileobj is process.stdin:
                try:
                    pending = pending[os.write(process.stdin.fileno(), pending):]
                except BrokenPipeError:
                    pending = pending[:0]
                if not pending:
                    selector.unregister(process.stdin)
                continue
            data = os.read(key.fd, 1 << 16)
            if not data:
                selector.unregister(key.fileobj)
                open_streams -= 1
                continue
            try:
                messages = reader.feed(data) if key.fileobj is process.stdout else reader.count(data)
            except protocol.TooMuch:
                return None, Message("sandbox.output", mb=limits.output_mb)
            except (ValueError, RecursionError):
                return None, Message("sandbox.malformed", detail="not JSON")
            for message in messages:
                if message.get("type") == "result":
                    return message, None
                if host is None:
                    return None, Message("sandbox.malformed", detail="a model request on the fake model")
                try:
                    send(protocol.frame(host.serve(message)))
                except MessageError as e:  # refused, or a config the real model cannot run
                    return None, e.message
                except (ValueError, TypeError, KeyError, IndexError, RuntimeError) as e:  # the model's own error
                    return None, Message("sandbox.batch_refused", detail=str(e)[:200])
    return None, _why_ended(process, deadline, limits)


def late(limits: Limits, ran_s: float, waited_s: float) -> Message:
    """Why the wall-clock deadline passed: their code ran or slept that long, or, where the worker spent most of it
    waiting for a CPU (it yields to everything else: a busy server), the server, with the CPU time their code had."""
    if waited_s > limits.wall_s / 2:
        return Message("sandbox.wall_busy", s=limits.wall_s, cpu=f"{ran_s:.1f}", most=limits.cpu_s)
    return Message("sandbox.wall", s=limits.wall_s)


def _why_ended(process: subprocess.Popen, deadline: float, limits: Limits) -> Message:
    """Why a worker ended without a result: the CPU limit's signal (SIGXCPU, then SIGKILL at the hard limit), the
    seccomp filter's (SIGSYS), or a crash."""
    try:
        code = process.wait(max(0.1, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        return Message("sandbox.wall", s=limits.wall_s)
    signalled = code - 128 if code > 128 else -code  # bubblewrap exits 128 + the signal its child died of
    if signalled in (signal.SIGXCPU, signal.SIGKILL):
        return Message("sandbox.cpu", s=limits.cpu_s)
    if signalled == signal.SIGSYS:
        return Message("sandbox.syscall")
    return Message("sandbox.crashed", code=str(code))


def _kill(process: subprocess.Popen):
    """End the worker's process group (bubblewrap; the jail's pid namespace dies with it) and reap it."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    for stream in (process.stdin, process.stdout, process.stderr):
        if stream:
            stream.close()


def outcome(result: dict, spec: RunSpec, limits: Limits) -> Outcome:
    """The Outcome of a worker's result message, every part of it checked as a claim: its trace by the schema
    and then by the referee (engine/check/referee.py), whose verdict stands over the worker's."""
    prints = result.get("prints", "")
    if not isinstance(prints, str):
        raise Malformed("prints")
    prints = prints[:PRINTS_KEPT]
    if result.get("stopped") is not None:
        return Outcome(stopped=_message(result["stopped"], ("sandbox.",)), prints=prints)
    if result.get("fault") is not None and result.get("declaration") is None:
        return Outcome(fault=_fault(result["fault"]), prints=prints)
    try:
        kind = kinds.register(result.get("declaration"))
    except kinds.DeclarationError as e:  # the worker claims a declaration of no built-in kind, or the server is full
        return Outcome(stopped=e.message, prints=prints)
    trace = _own_trace(result.get("trace"), kind)
    _hold(trace is not None or result.get("fault") is not None, "a run without its trace")
    broken = None
    if result.get("broken") is not None:
        data = result["broken"]
        broken = Broken(_message(data, BROKEN).key, **data["values"])
        step = data.get("step")
        if type(step) is not int or step < 0:
            raise Malformed("broken.step")
        broken.step = step
    fault = None if result.get("fault") is None else _fault(result["fault"])
    if trace is not None:
        if broken is None and fault is None and trace.get("ended") == "steps":
            _hold(len(trace["frames"]) == limits.steps + 1, "a run stopped early")  # at the steps it was given
        try:
            referee(trace, spec)
        except Broken as e:
            broken = e
        broken = broken or (None if fault else starved(trace, kind, spec))
    return Outcome(trace=trace, kind=kind, broken=broken, fault=fault, prints=prints)


def starved(trace: dict, kind: str, spec: RunSpec) -> Broken | None:
    """The contract's bound on waiting, held on the server: a run that stalled (no step could change anything any
    more, as the referee confirmed) with requests never finished starved them, unless its system itself may wait
    for good under this config (engine/check/invariants.py `must_end`: a prompt larger than the pool...)."""
    left = [str(r["id"]) for r in trace["requests"] if r.get("finish_step") is None and not r.get("finish_reason")]
    if trace.get("ended") != "stalled" or not left or not must_end(kind, spec.config):
        return None
    broken = Broken("check.stalled", step=len(trace["frames"]) - 1, seqs=", ".join(left))
    broken.step = len(trace["frames"]) - 1
    return broken


def _hold(condition: bool, what: str):
    if not condition:
        raise Malformed(what)


def _own_trace(trace, kind: str) -> dict | None:
    """The worker's trace as the server's kind decided it, checked as an uploaded trace is."""
    if trace is None:
        return None
    if not isinstance(trace, dict) or not isinstance(trace.get("decided_by"), dict):
        raise Malformed("trace")
    trace = {**trace, "scheduler": kind, "decided_by": {**trace["decided_by"], "kind": kind}}
    return checked_trace(json.dumps(trace))


def _fault(data) -> Fault:
    if not isinstance(data, dict) or not isinstance(data.get("text"), str):
        raise Malformed("fault")
    line = data.get("line")
    if line is not None and (type(line) is not int or line < 1):
        raise Malformed("fault.line")
    return Fault(data["text"][:MAX_FAULT_TEXT], line, _message(data.get("message"), ("sandbox.", "learner.")))


def _message(data, prefixes: tuple[str, ...]) -> Message:
    """A message the worker names by id and values: an id under `prefixes` the catalogue has, plain values."""
    if not isinstance(data, dict) or not isinstance(data.get("values"), dict):
        raise Malformed("message")
    key, values = data.get("key"), data["values"]
    if not isinstance(key, str) or not key.startswith(prefixes) or key not in CATALOGUES[DEFAULT]:
        raise Malformed("message id")
    if not all(isinstance(v, str) and len(v) <= 1000 for v in values.values()):
        raise Malformed("message values")
    try:
        return Message(key, **values)
    except (KeyError, ValueError, IndexError, TypeError) as e:
        raise Malformed("message values") from e
