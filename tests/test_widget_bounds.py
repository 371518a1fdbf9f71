"""Every number a learner types is bounded by the one table (engine/run/limits.py BOUNDS): each number input of the
sidebar and of the policy lab shows exactly its setting's range there, so a widget can never offer what a link,
a scenario file or the lab then refuses."""

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from engine.run.limits import BOUNDS

ROOT = Path(__file__).resolve().parents[1]

MS = tuple(s * 1000 for s in BOUNDS["adaptive_s"])  # the sidebar shows the controller's band in ms
# The bound each number input's key reads (the policy lab's `c<i>_` prefix dropped; the configs compared read the
# table's too); the steps per Run N click bound no setting.
WIDGET_BOUNDS = {"custom_requests": BOUNDS["requests"], "custom_max_tokens": BOUNDS["max_tokens"],
                 "temperature": BOUNDS["temperature"], "seed": BOUNDS["seed"],
                 "opt_low_ms": MS, "opt_high_ms": MS, "opt_min_seqs": BOUNDS["max_num_seqs"],
                 "opt_max_seqs": BOUNDS["max_num_seqs"], "request_max_tokens": BOUNDS["max_tokens"],
                 "request_priority": BOUNDS["priority"], "request_min_tokens": BOUNDS["min_tokens"],
                 "seqs": BOUNDS["max_num_seqs"], "class_most_names": BOUNDS["class_names"],
                 "tokens": BOUNDS["max_num_batched_tokens"], "size": BOUNDS["kvcache_block_size"],
                 "num_configs": BOUNDS["variants"], **{f"cfg_{name}": BOUNDS[name] for name in BOUNDS}}
NOT_SETTINGS = {"run_n", "class_roster_page"}


def check_ranges(at: AppTest) -> set[str]:
    seen = set()
    for widget in at.number_input:
        key = widget.key.split("_", 1)[1] if widget.key.startswith("c") and widget.key[1].isdigit() else widget.key
        if key in NOT_SETTINGS:
            continue
        assert key in WIDGET_BOUNDS, f"number input {widget.key!r} reads no bound of the table"
        assert (widget.min, widget.max) == pytest.approx(WIDGET_BOUNDS[key]), widget.key
        seen.add(key)
    return seen


def test_every_number_in_the_sidebar_has_the_tables_range(monkeypatch):
    monkeypatch.setenv("SCHEDLAB_RUNNER", "fake")
    app = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    app.run()
    app.selectbox(key="scenario_choice").set_value("custom").run()
    app.toggle(key="opt_adaptive").set_value(True).run()
    seen = check_ranges(app)
    assert {"custom_requests", "opt_low_ms", "request_priority", "cfg_num_speculative_tokens"} <= seen


def test_every_number_in_the_policy_lab_has_the_tables_range():
    at = AppTest.from_file(str(ROOT / "app_pages" / "policy_lab.py"), default_timeout=60)
    at.run()
    at.selectbox(key="comparison").select("custom").run()
    assert check_ranges(at) == {"seqs", "tokens", "size", "num_configs"}
