"""`python -m engine run scenarios/x.toml [--runner fake|model] [--scheduler KIND] [--steps N] [--overlap]
[--json trace.json]` and `python -m engine list`."""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace

from engine.inputs.scenario import ScenarioError, load_scenario, preset_paths
from engine.run.frame import Frame
from engine.run.runner_factory import RUNNER_KINDS
from engine.traces.trace import write_trace
from scheduler import SCHEDULER_KINDS, ConfigError
from scheduler.factory import scheduler_info


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
        scenario = replace(scenario, spec=replace(scenario.spec, scheduler=args.scheduler))
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
    run_parser.add_argument("--scheduler", choices=SCHEDULER_KINDS, help="override the scenario's scheduler")
    run_parser.add_argument("--steps", type=int, help="stop after this many steps")
    run_parser.add_argument("--overlap", action="store_true",
                            help="schedule each step while the model computes the one before (engine/run/overlap.py)")
    run_parser.add_argument("--json", metavar="TRACE", help="write the whole run as JSON to this file")
    run_parser.set_defaults(handler=run)
    commands.add_parser("list", help="list the scenario presets").set_defaults(handler=list_presets)
    args = parser.parse_args(argv)
    try:
        return args.handler(args)
    except (ScenarioError, ConfigError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
