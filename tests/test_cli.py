"""The command line, and JSON traces loading back into a frame store."""

import json
import subprocess
import sys

from engine.cli import main
from engine.inputs.scenario import SCENARIOS_DIR, load_scenario
from engine.traces.trace import load_trace, write_trace

PREFILL_FIRST = str(SCENARIOS_DIR / "01_prefill_first.toml")


def test_run_prints_a_row_per_step_and_writes_the_trace(tmp_path, capsys):
    trace = tmp_path / "trace.json"
    assert main(["run", PREFILL_FIRST, "--json", str(trace)]) == 0
    lines = capsys.readouterr().out.splitlines()
    row = next(line for line in lines if line.split()[:1] == ["2"])
    assert row.split()[1:4] == ["prefill", "3,4", "0,1,2,3,4"] and "A3 A4" in row
    data = json.loads(trace.read_text())
    assert len(data["frames"]) == 29 and data["config"]["max_num_seqs"] == 3
    first = data["requests"][0]
    assert set(first) >= {"id", "prompt", "prompt_token_ids", "output_token_ids", "output_text", "finish_reason",
                          "arrival", "first_token_step", "finish_step"}
    assert (first["first_token_step"], first["finish_reason"]) == (1, "max_model_len")
    assert len(first["prompt_token_ids"]) + len(first["output_token_ids"]) == 15


def test_steps_limits_the_run(capsys):
    assert main(["run", PREFILL_FIRST, "--steps", "3"]) == 0
    assert "stopped: steps after 3 steps" in capsys.readouterr().out


def test_list_shows_every_preset(capsys):
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert all(path.name in out for path in SCENARIOS_DIR.glob("*.toml"))


def test_bad_input_is_one_line_and_a_non_zero_exit(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('title = "t"\nnarrative = "n"\nbogus = 1\n[config]\n[workload]\n')
    for path in (tmp_path / "missing.toml", bad):
        done = subprocess.run([sys.executable, "-m", "engine", "run", str(path)], capture_output=True, text=True)
        assert done.returncode != 0
        assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr and str(path) in done.stderr


def test_a_trace_loads_back_into_the_same_frames(tmp_path):
    scenario = load_scenario(SCENARIOS_DIR / "05_prefix_caching.toml", runner="fake")
    engine = scenario.engine()
    engine.run()
    write_trace(engine, tmp_path / "t.json")
    store, requests = load_trace(tmp_path / "t.json")
    assert len(store) == len(engine.frames)
    for k in (0, 1, 3, len(store) // 2, len(store) - 1):
        assert store[k].to_dict() == engine.frames[k].to_dict()
    assert requests[1]["output_text"] == "".join(engine.frames[-1].requests[1].pieces[
        engine.frames[-1].requests[1].num_prompt_tokens:])


def test_a_pool_rebuild_is_a_short_mark_in_the_table():
    from engine.cli import describe_event
    from engine.run.frame import PoolRebuilt

    assert describe_event(PoolRebuilt(-1, 6, 10, (0, 1), 1)) == "R6x10"
