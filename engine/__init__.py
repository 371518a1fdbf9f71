"""The engine: drives one scheduler and one runner step by step and records every step as a Frame.

    from engine import Engine, Request, load_scenario
    engine = load_scenario("scenarios/01_prefill_first.toml").engine()
    engine.run()
    frame = engine.frames[3]          # rebuilt on demand from the compact frame store

Nothing here imports torch unless a "model" runner is asked for.
"""

from engine.engine import CostModel, Engine
from engine.frame import BatchView, BlockView, Frame, RequestView, StepMetrics
from engine.metrics import request_metrics, run_metrics
from engine.scenario import KeyFrame, Scenario, ScenarioError, load_scenario, preset_paths
from engine.trace import load_trace, write_trace
from engine.workload import Request

__all__ = ["BatchView", "BlockView", "CostModel", "Engine", "Frame", "KeyFrame", "Request", "RequestView",
           "Scenario", "ScenarioError", "StepMetrics", "load_scenario", "load_trace", "preset_paths",
           "request_metrics", "run_metrics", "write_trace"]
