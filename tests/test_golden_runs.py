"""Behaviour pinned: every preset's trace on the fake model, and a differential run over random configs with
mid-run changes (replayed, branched, and through a lab with checkpoints), digest for digest as recorded in
tests/data/golden_runs.json (wall times left out; tools/golden_runs.py says how they are made). A change that
alters a run on purpose rewrites that file: `python tools/golden_runs.py --all --cases 20`."""

import json
from pathlib import Path

from tools.golden_runs import differential_digests, preset_digests

GOLDEN = json.loads((Path(__file__).parent / "data" / "golden_runs.json").read_text())


def test_every_preset_runs_as_recorded():
    presets = {k: v for k, v in GOLDEN.items() if not k.startswith("random_")}
    assert preset_digests() == presets


def test_random_runs_with_mid_run_changes_run_as_recorded():
    random_runs = {k: v for k, v in GOLDEN.items() if k.startswith("random_")}
    assert differential_digests(20) == random_runs
