"""The learner's own scheduler as a stage of the policy lab (session/own_stage.py): a stage whose frames were made
elsewhere (engine/analysis/compare.py recorded_run) is shown, measured and told as the same run made here; one that
broke an invariant, raised or hit a limit ends at its frame saying so, or is said instead of a stage; its run is
made once per code and spec, kept in the run cache like a run."""

import subprocess
import sys
from dataclasses import dataclass, replace

import pytest

from engine.analysis.compare import Variant, compare, metric_values, run_variant, summary_of, variant_spec
from engine.check.invariants import Broken
from engine.inputs.scenario import SCENARIOS_DIR, load_scenario
from engine.learner import load
from engine.traces.schema import checked_trace
from i18n import Message, in_lang
from session.own_scheduler import OwnScheduler
from session.own_stage import own_address, stage_of
from session.run_cache import RunCache
from tests.helpers.registry import registry_kept
from tests.helpers.source import ROOT
from viz.html_export import lockstep_message
from viz.lockstep import lockstep_marks

SMART = str(ROOT / "starters/smart_victim.py") + ":SmartVictim"
PRESET = "07_smart_preemption"


@dataclass(frozen=True)
class Fault:
    text: str
    line: int | None
    message: Message


@dataclass(frozen=True)
class Outcome:
    """What sandbox.run_learner hands back (its fields as the shared design names them)."""
    trace: dict | None
    kind: str | None
    broken: Broken | None = None
    fault: Fault | None = None
    stopped: Message | None = None


@pytest.fixture(autouse=True)
def registry():
    """The learner's kind, as the sandbox registers its declaration on the server; gone after each test."""
    with registry_kept():
        load(SMART)
        yield


@pytest.fixture(scope="module")
def made_elsewhere(tmp_path_factory) -> dict:
    """The smart victim's run of the preset, made by another process (the command line), as its trace, checked."""
    path = tmp_path_factory.mktemp("own") / "smart.json"
    subprocess.run([sys.executable, "-m", "engine", "run", str(SCENARIOS_DIR / f"{PRESET}.toml"), "--scheduler",
                    SMART, "--json", str(path)], cwd=ROOT, check=True, capture_output=True)
    return path.read_text()


def preset_spec():
    return load_scenario(SCENARIOS_DIR / f"{PRESET}.toml").spec


def built_ins(lang: str = "en"):
    spec = preset_spec()
    variants = [Variant(kind, spec.config, scheduler=kind) for kind in ("article", "vllm", "sglang", "vllm_v0")]
    return compare(variants, spec.workload, seed=spec.seed, cost=spec.cost)


def cut(trace: dict, last: int) -> dict:
    """The trace's frames 0..last: a run that stopped there."""
    return {**trace, "frames": trace["frames"][:last + 1]}


def test_a_stage_made_elsewhere_is_measured_and_told_as_the_same_run_made_here(made_elsewhere):
    stage = stage_of(Outcome(checked_trace(made_elsewhere), "smart_victim"), "en", ["article"])
    spec = preset_spec()
    here = run_variant(Variant("smart victim", spec.config, scheduler="smart_victim"), spec.workload,
                       seed=spec.seed, cost=spec.cost)
    own = stage.run
    assert stage.said is None and own.label == "smart victim" and own.scheduler == "smart_victim"
    assert own.stop_reason == here.stop_reason == "finished" and own.ended is None
    assert len(own.frames) == len(here.frames) > 10
    walls = ("mean wall step time (ms)",)
    assert {k: v for k, v in metric_values(own).items() if k not in walls} == \
        {k: v for k, v in metric_values(here).items() if k not in walls}
    article = built_ins()[0]
    assert lockstep_marks([(article.label, article.frames), ("smart victim", own.frames)], lang="en") == \
        lockstep_marks([(article.label, article.frames), ("smart victim", here.frames)], lang="en")
    assert own.trace_dict("lab: mine")["title"] == "lab: mine"  # exported as the trace it was read from


def test_the_partings_and_the_table_name_the_learners_kind_in_both_languages(made_elsewhere):
    for lang, name in (("en", "smart victim"), ("zh", "聪明的牺牲者")):
        runs = built_ins(lang)
        stage = stage_of(Outcome(checked_trace(made_elsewhere), "smart_victim"), lang, [r.label for r in runs])
        runs = [*runs, stage.run]
        marks = lockstep_marks([(r.label, r.frames) for r in runs], lang=lang)
        assert marks["partings"] and all(name in sentence for _, sentence in marks["partings"]), marks["partings"]
        assert len(marks["colors"]) == 5
        mean_e2e = "end-to-end latency mean steps"  # the preset's requests finish sooner under the smart victim
        assert metric_values(stage.run)[mean_e2e] < metric_values(runs[0])[mean_e2e]


def test_a_name_a_built_in_stage_has_already_is_told_apart(made_elsewhere):
    stage = stage_of(Outcome(checked_trace(made_elsewhere), "smart_victim"), "en", ["smart victim"])
    assert stage.run.label == "smart victim (yours)"


def test_a_run_that_broke_an_invariant_ends_its_stage_at_that_frame_saying_what_broke(made_elsewhere):
    broken = Broken("check.freed_twice", unit="block", id=5, counted=-1)
    broken.step = 9
    stage = stage_of(Outcome(cut(checked_trace(made_elsewhere), 9), "smart_victim", broken=broken), "en", [])
    run = stage.run
    assert len(run.frames) == 10 and run.stop_reason == "ended"
    assert run.ended == stage.said
    assert in_lang("en", stage.said) == ("It stopped at step 9: an invariant broke: block 5 was freed more times "
                                         "than it was taken (the pool counts -1 holders)")
    assert "第 9 步" in in_lang("zh", stage.said) and "块 5" not in in_lang("en", stage.said)
    runs = [*built_ins(), run]
    assert summary_of(runs).unfinished == ["smart victim"]  # the summary says it did not finish
    message = lockstep_message([(r.label, r.frames) for r in runs], lang="en",
                               stopped=[None] * 4 + [in_lang("en", run.ended)])
    assert message["stopped"][-1].startswith("It stopped at step 9") and message["runs"][-1]["last"] == 9
    assert max(p[0] for p in message["partings"]) <= 9  # the others go on; no parting past its end


def test_code_that_raised_before_its_first_frame_has_no_stage_and_shows_their_traceback():
    fault = Fault('Traceback (your code only):\n  File "mine.py", line 7, in schedule\nZeroDivisionError: x\n', 7,
                  Message("learner.not_class", name="Mine", what="module"))
    stage = stage_of(Outcome(None, None, fault=fault), "en", [])
    assert stage.run is None and stage.traceback == fault.text
    assert in_lang("en", stage.said) == "Your code raised an error at line 7: Mine is a module, not a scheduler class"
    assert in_lang("zh", stage.said).startswith("你的代码在第 7 行抛出了错误")


def test_a_run_stopped_by_a_limit_says_which(made_elsewhere):
    limit = Message("learner.no_file", path="cpu")  # any Message stands for the sandbox's words of the limit
    stage = stage_of(Outcome(cut(checked_trace(made_elsewhere), 3), "smart_victim", stopped=limit), "en", [])
    assert len(stage.run.frames) == 4 and in_lang("en", stage.said) == f"It was stopped by a limit: {limit}"
    assert stage_of(Outcome(None, None, stopped=limit), "en", []).run is None


def test_the_outcome_is_made_once_per_code_and_spec_and_kept_within_the_budget():
    cache, made = RunCache(budget_bytes=10 * 2**20, share_bytes=6 * 2**20), []
    own, spec = OwnScheduler("class A: pass\n", "A"), variant_spec(Variant("", preset_spec().config), [])

    def make(label, mb):
        return lambda: made.append(label) or label, lambda value: mb * 2**20

    assert cache.made(own_address(own, spec), *make("first", 5)) == "first"
    assert cache.made(own_address(own, spec), *make("again", 5)) == "first" and made == ["first"]
    other_code, other_spec = replace(own, source="class A: x = 1\n"), replace(spec, seed=1)
    assert len({own_address(o, s) for o, s in ((own, spec), (other_code, spec), (own, other_spec),
                                               (replace(own, class_name="B"), spec))}) == 4
    cache.made(own_address(other_code, spec), *make("second", 6))  # over the budget with the first
    assert own_address(own, spec) not in cache and own_address(other_code, spec) in cache  # the older evicted
    cache.made(own_address(own, other_spec), *make("huge", 7))  # over a run's share: not kept
    assert own_address(own, other_spec) not in cache and made == ["first", "second", "huge"]
    assert cache.stats()["bytes"] == 6 * 2**20
