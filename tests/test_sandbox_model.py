"""A learner's scheduler in the sandbox on the real SmolLM2 (slow: `-m model`): the worker's runner is a proxy and
the server runs each step on the process's model, checking each batch first; a forged batch is refused in words."""

import json

import pytest

from engine.traces.trace import read_trace
from sandbox import Limits, run_learner
from tests.helpers.real_model import NEEDS_MODEL
from tests.helpers.sandboxed import NEEDS_JAIL, learner, preset_spec, registry  # noqa: F401 - a fixture
from tests.helpers.source import ROOT

pytestmark = [*NEEDS_MODEL, NEEDS_JAIL, pytest.mark.usefixtures("registry")]
ON_MODEL = Limits(wall_s=300, steps=12)
FORGE_IN_INIT = ("    def __init__(self, config):\n"
                 "        super().__init__(config)\n"
                 "        import json, os, struct\n"
                 "        data = json.dumps({{'op': 'run', 'seqs': [{entry}]}}).encode()\n"
                 "        os.write(3, struct.pack('>I', len(data)) + data)\n"
                 "        import time\n"
                 "        time.sleep(30)\n")
ENTRY = {"seq_id": 0, "token_ids": [1, 2, 3], "num_prompt_tokens": 3, "num_computed_tokens": 0,
         "num_scheduled_tokens": 3, "block_table": [0], "draft_token_ids": []}


def test_a_learners_scheduler_runs_on_the_real_model():
    outcome = run_learner((ROOT / "starters/smart_victim.py").read_text(), "SmartVictim", preset_spec("model"),
                          ON_MODEL)
    assert outcome.ok, (outcome.fault, outcome.stopped, outcome.broken)
    _, trace = read_trace(json.dumps(outcome.trace))
    assert trace["runner"] == "model" and len(trace["frames"]) == 13
    assert any(r["output_token_ids"] for r in trace["requests"])


@pytest.mark.parametrize("forged, detail", [({"block_table": [10**9]}, "block ids"),
                                            ({"seq_id": 99}, "request id"),
                                            ({"token_ids": [-5, 2, 3]}, "token id"),
                                            ({"num_scheduled_tokens": 50}, "counts")])
def test_a_forged_batch_is_refused_with_a_message(forged, detail):
    source = learner(FORGE_IN_INIT.format(entry=repr({**ENTRY, **forged})))
    outcome = run_learner(source, "Mine", preset_spec("model"), ON_MODEL)
    assert outcome.stopped is not None and outcome.stopped.key == "sandbox.batch_refused", outcome
    assert outcome.stopped.values["detail"] == detail
