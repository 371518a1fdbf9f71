"""The reference check: a twin against its system's own scheduler on random workloads, per mode.

    python -m tools.refcheck SYSTEM --release R [--workloads N] [--modes a,b] [--seed S] [--record]

Prints per mode "SYSTEM R mode: N/N workloads identical", or the first difference with a workload shrunk to
show it. `--record` writes the identical workloads and the oracle's records as the golden traces of R
(tests/data/refcheck/SYSTEM-R.json.gz, replayed by `make test`). Runs in the system's oracle environment
(`make vllm-check VLLM=0.33` builds and runs vLLM 0.33's). The interface a system plugs in by:
tools/refcheck/adapter.py."""

from __future__ import annotations

import argparse

from tools.refcheck.adapter import load
from tools.refcheck.driver import check_mode
from tools.refcheck.golden import Golden, golden_path, write_golden


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("system")
    parser.add_argument("--release", required=True, help="the release the oracle environment holds")
    parser.add_argument("--workloads", type=int, default=1000)
    parser.add_argument("--modes", help="comma-separated (default: all the system's modes)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--record", action="store_true", help="write the identical workloads as golden traces")
    args = parser.parse_args()
    adapter = load(args.system)
    if args.release not in adapter.releases:
        raise SystemExit(f"the {args.system} twin mirrors releases {', '.join(adapter.releases)}, not {args.release}")
    oracle = adapter.open_oracle()
    if oracle.release != args.release:
        raise SystemExit(f"this environment holds {args.system} {oracle.release}, not {args.release}: "
                         f"run it in that release's oracle environment")
    modes = args.modes.split(",") if args.modes else adapter.modes
    traces = [] if args.record else None
    ok = all([check_mode(adapter, oracle, mode, args.workloads, args.seed, traces) for mode in modes])
    if args.record:
        path = golden_path(args.system, args.release)
        write_golden(path, Golden(args.system, args.release, tuple(adapter.fields), traces))
        print(f"wrote {len(traces)} golden traces to {path}")
    raise SystemExit(0 if ok else 1)


if __name__ == "__main__":
    main()
