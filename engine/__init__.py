"""The engine: drives one scheduler and one runner step by step and records every step as a Frame.

    from engine import Engine, Request, load_scenario
    engine = load_scenario("scenarios/01_prefill_first.toml").engine()
    engine.run()
    frame = engine.frames[3]          # rebuilt on demand from the compact frame store

Four rooms:
- `run/`: the run itself: its recipe (`RunSpec`, `Change`, the bounds every input is checked against), the
  `Engine` stepping it (synchronously or overlapped, with adaptive batch size), the frames it records,
  where they are kept and the metrics read off them, and the runner it is built with;
- `inputs/`: what a run is made of: scenario files and their key frames, workloads, the notebook's demos;
- `traces/`: a run as JSON and back (deltas, the schema a file is checked against);
- `analysis/`: each request's timeline of phases, comparisons of configs, exports, vLLM arguments.
`cli.py` is the command line (`python -m engine`). Nothing here imports torch unless a "model" runner is asked
for.
"""

from engine.inputs.key_frames import KeyFrame
from engine.inputs.scenario import Scenario, ScenarioError, load_scenario, preset_paths
from engine.run.engine import Engine
from engine.run.frame import BatchView, BlockView, Frame, RequestView, StepMetrics
from engine.run.metrics import request_metrics, run_metrics
from engine.run.recipe import Change, CostModel, Request, RunSpec
from engine.traces.trace import load_trace, write_trace

__all__ = ["BatchView", "BlockView", "Change", "CostModel", "Engine", "Frame", "KeyFrame", "Request", "RequestView",
           "RunSpec", "Scenario", "ScenarioError", "StepMetrics", "load_scenario", "load_trace", "preset_paths",
           "request_metrics", "run_metrics", "write_trace"]
