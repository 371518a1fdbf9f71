"""`python -m engine run scenarios/x.toml [--runner fake|model] [--scheduler KIND|FILE.py:CLASS] [--steps N]
[--overlap] [--json trace.json]`, `python -m engine check KIND|FILE.py:CLASS [--examples N]` and
`python -m engine list`. A scheduler of one's own is loaded from its file by engine/learner.py; an exception its code
raises is shown as a traceback of its file's frames only."""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path

from engine.check.invariants import Broken
from engine.check.search import config_lines, search, workload_lines
from engine.inputs.scenario import ScenarioError, load_scenario, preset_paths
from engine.learner import LearnerError, is_file_spec, load, their_traceback
from engine.run.frame import Frame
from engine.run.runner_factory import RUNNER_KINDS
from engine.traces.trace import write_trace
from i18n import text
from scheduler import SCHEDULER_KINDS, ConfigError
from scheduler.factory import SCHEDULERS, scheduler_info
from scheduler.interface import BadDecision


def describe_event(e) -> str:
    """A few characters per event, e.g. `+3` arrived, `A3` admitted, `P2>5` preempted for 5, `F3:eos`,
    `S3:1/2` one of two draft tokens accepted, `L3` finished one step late (overlapped EOS), `R6x10` the KV
    pool rebuilt with 6 blocks of 10 tokens (a mid-run change), `O4<1` 4 put first before 1 by the queue's policy,
    `T2` retracted (SGLang), `E3` 3 units evicted."""
    match e.kind:
        case "arrived":
            return f"+{e.seq_id}"
        case "admitted":
            return f"A{e.seq_id}" + (f"(hit {e.num_cached_tokens})" if e.num_cached_tokens else "")
        case "chunk":
            return f"C{e.seq_id}[{e.start}:{e.start + e.num_tokens}/{e.total}]"
        case "blocked":
            return f"B{e.seq_id}:{e.reason}"
        case "preempted":
            return f"P{e.seq_id}>{e.for_seq_id}"
        case "prefix_hit":
            return ""  # shown with the admission
        case "finished":
            return f"F{e.seq_id}:{e.reason}"
        case "finished_late":
            return f"L{e.seq_id}"
        case "speculated":
            return f"S{e.seq_id}:{e.num_accepted}/{len(e.draft_token_ids)}"
        case "ordered":
            return f"O{e.seq_id}<{e.ahead_of}"
        case "retracted":
            return f"T{e.seq_id}"
        case "evicted":
            return f"E{len(e.block_ids)}"
        case "pool_rebuilt":
            return f"R{e.num_blocks}x{e.block_size}"
        case _:
            return f"X{e.seq_id}"


def ids(values, most: int = 8) -> str:
    """Comma-joined ids, the first `most` of a long list followed by how many more there are."""
    shown = ",".join(map(str, values[:most])) or "-"
    return shown + (f"+{len(values) - most}" if len(values) > most else "")


def frame_row(frame: Frame) -> str:
    events = " ".join(filter(None, map(describe_event, frame.events)))
    batch = f"{frame.batch.kind} {ids(frame.batch.seq_ids)}" if frame.batch.seq_ids else "idle"
    return (f"{frame.step:>5} {batch:<22} {ids(frame.running):<18} {ids(frame.waiting):<18} "
            f"{frame.metrics.num_free_blocks:>5}  {events}")


HEADER = f"{'step':>5} {'batch':<22} {'running':<18} {'waiting':<18} {'free':>5}  events"


def run(args) -> int:
    scenario = load_scenario(args.scenario, args.runner)
    if args.overlap:
        scenario = replace(scenario, spec=replace(scenario.spec, overlap=True))
    if args.scheduler:
        scenario = replace(scenario, spec=replace(scenario.spec, scheduler=scheduler_kind(args, args.scheduler)))
    engine = scenario.engine()
    mode = ", overlapped scheduling" if engine.overlap else ""
    info = scheduler_info(engine.spec.scheduler)
    decided = f"{info.system} {info.version}".strip()
    print(f"{scenario.title} ({engine.runner_kind} runner{mode}, decided by {decided})\n{HEADER}")
    print(frame_row(engine.frames[0]))
    reason = engine.run(args.steps, on_step=lambda _: print(frame_row(engine.frames[-1])))
    print(f"stopped: {reason} after {engine.step_count} steps")
    for record in engine.requests:
        if record.seq.status.name == "ABORTED":
            print(f"request {record.seq.seq_id} aborted: {record.seq.finish_reason}")
    if args.json:
        write_trace(engine, args.json, scenario.title)
        print(f"trace written to {args.json}")
    return 0 if reason in ("finished", "steps") else 1


def scheduler_kind(args, value: str) -> str:
    """The kind `value` names: a built-in one, or a file's class loaded and registered as one (its file kept in
    `args.own_file`, whose frames a traceback shows)."""
    if is_file_spec(value):
        args.own_file = Path(value.rpartition(":")[0]).expanduser().resolve()
        return load(value).kind
    if value not in SCHEDULERS:
        raise LearnerError("learner.unknown_kind", value=value, kinds=", ".join(SCHEDULERS))
    return value


def check(args) -> int:
    """The contract's invariants on random workloads; the smallest one that breaks one, and what broke."""
    kind = scheduler_kind(args, args.scheduler)
    info = scheduler_info(kind)
    print(f"checking {text('en', info.name)} ({kind}) on up to {args.examples} random workloads with the fake model")
    verdict = search(kind, args.examples)
    if verdict.error is None:
        print(f"all invariants held on {verdict.tried} workloads")
        return 0
    if isinstance(verdict.error, Broken):
        print(f"invariant broken at step {verdict.error.step}: {verdict.error}")
    else:
        shown = their_traceback(verdict.error, args.own_file) if getattr(args, "own_file", None) else None
        if shown is None:
            raise verdict.error
        print(f"the scheduler raised an exception:\n{shown}", end="")
    print("smallest failing workload:")
    for line in [*config_lines(kind, verdict.config), *workload_lines(verdict.workload)]:
        print(f"  {line}")
    return 1


def list_presets(_args) -> int:
    """One line per preset; a file that cannot be loaded says why on stderr, and the others are still listed."""
    broken = 0
    for path in preset_paths():
        try:
            scenario = load_scenario(path)
        except ScenarioError as e:
            print(f"error: {e}", file=sys.stderr)
            broken += 1
            continue
        print(f"{path.name:<32} {scenario.spec.runner:<6} {scenario.title}")
    return 2 if broken else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m engine", description="Run scheduling scenarios.")
    commands = parser.add_subparsers(dest="command", required=True)
    run_parser = commands.add_parser("run", help="run a scenario and print one line per step")
    run_parser.add_argument("scenario", help="a scenario TOML file, e.g. scenarios/01_prefill_first.toml")
    run_parser.add_argument("--runner", choices=RUNNER_KINDS, help="override the scenario's runner")
    run_parser.add_argument("--scheduler", metavar="KIND|FILE.py:CLASS",
                            help=f"override the scenario's scheduler: one of {', '.join(SCHEDULER_KINDS)}, or a "
                                 "class of your own in a Python file (docs/schedulers.md)")
    run_parser.add_argument("--steps", type=int, help="stop after this many steps")
    run_parser.add_argument("--overlap", action="store_true",
                            help="schedule each step while the model computes the one before (engine/run/overlap.py)")
    run_parser.add_argument("--json", metavar="TRACE", help="write the whole run as JSON to this file")
    run_parser.set_defaults(handler=run)
    check_parser = commands.add_parser("check", help="check a scheduler's invariants on random workloads")
    check_parser.add_argument("scheduler", metavar="KIND|FILE.py:CLASS", help="a kind, or a class of your own")
    check_parser.add_argument("--examples", type=int, default=200, help="how many workloads to try (default 200)")
    check_parser.set_defaults(handler=check)
    commands.add_parser("list", help="list the scenario presets").set_defaults(handler=list_presets)
    args = parser.parse_args(argv)
    try:
        return args.handler(args)
    except Exception as e:
        shown = their_traceback(e, args.own_file) if getattr(args, "own_file", None) else None
        if shown is not None:  # the scheduler's own code raised: its frames, never the app's
            print(shown, end="", file=sys.stderr)
            return 3
        if not isinstance(e, ScenarioError | ConfigError | LearnerError | BadDecision | OSError):
            raise
        print(f"error: {e}", file=sys.stderr)
        return 2
