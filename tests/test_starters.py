"""The starters (starters/__init__.py): each loads as the command line and the workbench load it, runs a preset to
the end as it is, and keeps every invariant; each reference solution passes `python -m engine check`; each has its
title and task in both languages."""

from pathlib import Path

import pytest

from engine.check.search import search
from engine.cli import main
from engine.learner import load
from i18n import CATALOGUES
from scheduler.factory import SCHEDULERS
from starters import BY_ID, STARTERS, Starter, source

PRESET = "scenarios/07_smart_preemption.toml"


@pytest.fixture(autouse=True)
def registry():
    """Each test's kinds loaded from files leave the factory's registry and the catalogues as they were."""
    saved = dict(SCHEDULERS), {lang: dict(c) for lang, c in CATALOGUES.items()}
    yield
    SCHEDULERS.clear()
    SCHEDULERS.update(saved[0])
    for lang, catalogue in CATALOGUES.items():
        catalogue.clear()
        catalogue.update(saved[1][lang])


def test_every_starter_has_its_words_in_both_languages_and_a_class_in_its_source():
    assert len(BY_ID) == len(STARTERS)
    for starter in STARTERS:
        for catalogue in CATALOGUES.values():
            assert catalogue[starter.title].strip() and catalogue[starter.task].strip(), starter.id
        assert f"class {starter.class_name}(" in source(starter), starter.id


def written(starter: Starter, folder: Path) -> str:
    """The starter's source as the learner gets it, in a file of its own: its `path:class`."""
    path = folder / f"{starter.id}.py"
    path.write_text(source(starter), encoding="utf-8")
    return f"{path}:{starter.class_name}"


@pytest.mark.parametrize("starter", [s for s in STARTERS if s.id != "double_free"], ids=lambda s: s.id)
def test_a_starter_runs_as_it_is_and_keeps_every_invariant(starter, tmp_path, capsys):
    spec = written(starter, tmp_path)
    assert main(["run", PRESET, "--scheduler", spec]) == 0
    assert "stopped: finished" in capsys.readouterr().out
    assert search(load(spec).kind, examples=25).error is None


def test_the_broken_starter_is_caught_by_the_checker(tmp_path):
    verdict = search(load(written(BY_ID["double_free"], tmp_path)).kind, examples=25)
    assert "was freed more times than it was taken" in str(verdict.error)


@pytest.mark.parametrize("starter", [s for s in STARTERS if s.solution], ids=lambda s: s.id)
def test_each_reference_solution_passes_the_check(starter, capsys):
    path, class_name = starter.solution
    assert main(["check", f"{path}:{class_name}", "--examples", "60"]) == 0
    assert "all invariants held on 60 workloads" in capsys.readouterr().out
