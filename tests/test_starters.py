"""The starters (starters/__init__.py): each loads as the command line and the workbench load it, runs a preset to
the end as it is, and keeps every invariant; each reference solution passes `python -m engine check`; each has its
title and task in both languages."""

from dataclasses import replace

import pytest

from engine.check.search import search
from engine.cli import main
from engine.inputs.scenario import SCENARIOS_DIR, load_scenario
from engine.learner import load
from engine.run.engine import Engine
from i18n import CATALOGUES
from starters import BY_ID, STARTERS, source, whole
from tests.helpers.learner_files import written
from tools.golden_runs import digest, whole_frames

pytestmark = pytest.mark.usefixtures("kinds_restored")  # each test's kinds loaded from files leave no trace

PRESET = "scenarios/07_smart_preemption.toml"


def test_every_starter_has_its_words_in_both_languages_and_a_class_in_its_source():
    assert len(BY_ID) == len(STARTERS)
    for starter in STARTERS:
        for catalogue in CATALOGUES.values():
            assert catalogue[starter.title].strip() and catalogue[starter.task].strip(), starter.id
        assert f"class {starter.class_name}(" in source(starter), starter.id


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


# Presets that exercise every hook under the article's scheduler: preemption (tail, smart, priority), chunked prefill
# and mixed batches, prefix caching, overlapped scheduling, speculation
AS_THE_ARTICLE = ("02_preemption", "04_chunked_prefill", "05_prefix_caching", "06_priority", "07_smart_preemption",
                  "10_overlap", "speculative_decoding", "smart_victim_long_prompt")


@pytest.mark.parametrize("starter", [s for s in STARTERS if s.id not in ("skeleton", "double_free")],
                         ids=lambda s: s.id)
def test_a_starter_as_it_is_decides_as_the_article_does(starter, tmp_path):
    """Every hook's default is the article's decision, and the whole scheduler's source is the article's: frame for
    frame the same runs (the victim starter's default is the tail, so it is held to the tail policy's runs)."""
    kind = load(written(starter, tmp_path)).kind
    compared = 0
    for name in AS_THE_ARTICLE:
        scenario = load_scenario(SCENARIOS_DIR / f"{name}.toml", runner="fake")
        for variant in (False, True) if scenario.variant else (False,):
            spec = scenario.spec_for(variant=variant)
            tail = spec.config.value("preemption_policy") == "tail"
            if spec.scheduler != "article" or (starter.id == "victim" and not tail):
                continue
            article, mine = Engine(spec), Engine(replace(spec, scheduler=kind))
            article.run(), mine.run()
            policy = spec.config.value("preemption_policy")
            assert digest(chosen_by(whole_frames(mine.frames), kind, policy)) == digest(whole_frames(article.frames)), (
                name, variant)
            compared += 1
    assert compared >= 8


def chosen_by(frames: list[dict], kind: str, policy: str) -> list[dict]:
    """`frames` with each victim `kind` chose (its own choose_victim, the whole scheduler's copy) told as chosen by
    the preemption `policy`, as the article tells it."""
    for frame in frames:
        for event in frame["events"]:
            if event["kind"] == "preempted" and event["policy"] == kind:
                event["policy"] = policy
    return frames


def test_the_whole_scheduler_is_the_articles_own_source_renamed():
    """One copy: the starter is built from the package's module, every method the same, the class and its
    declaration the learner's."""
    built, original = source(BY_ID["whole"]), whole.PATH.read_text()
    assert "class MyWhole(Scheduler):" in built and 'Scheduler.info.derive("my_whole")' in built
    assert "TOUR" not in built and "closest_vllm" not in built and "LandsLate" not in built
    methods = ("def schedule(self)", "def _prefill(", "def _decode(", "def choose_victim(", "def chunk_size(")
    for method in methods:
        assert original.count(method) == built.count(method) == 1, method
        at = original.index(method)
        assert original[at:at + 1500] in built, method
