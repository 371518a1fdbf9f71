"""The learner's own scheduler as a stage of the policy lab (session/own_stage.py), run in the real sandbox: a stage
whose frames were made elsewhere (engine/analysis/compare.py recorded_run) is shown, measured and told as the same
run made here, under its kind's names; one that broke an invariant, raised or hit a limit ends at its frame saying
so, or is said instead of a stage with their traceback; its run is made once per code and spec, kept in the run
cache like a run."""

from dataclasses import replace

import pytest

from engine.analysis.compare import (
    Variant,
    compare,
    metric_values,
    run_variant,
    summary_of,
    variant_spec,
    verdicts_of,
)
from engine.check.invariants import Broken
from engine.inputs.scenario import SCENARIOS_DIR, load_scenario
from engine.learner import load
from i18n import in_lang, text
from sandbox import Limits, run_learner
from sandbox.limits import MAX_SOURCE
from session.own_scheduler import OwnScheduler
from session.own_stage import own_address, own_stage, stage_of
from session.run_cache import RunCache
from tests.helpers.sandboxed import learner, registry  # noqa: F401 - a fixture
from tests.helpers.source import ROOT
from viz.compare_words import verdicts
from viz.html_export import lockstep_message
from viz.lockstep import lockstep_marks

pytestmark = pytest.mark.usefixtures("registry")
BUILT_IN = ("article", "vllm", "sglang", "vllm_v0")
SMART = OwnScheduler((ROOT / "starters/smart_victim.py").read_text(), "SmartVictim")
DOUBLE_FREE = OwnScheduler((ROOT / "starters/double_free.py").read_text(), "DoubleFree")
WALL = ("mean wall step time (ms)",)  # measured, so never the same twice


def lab_spec():
    """The spec the lab runs every stage of the smart-victim preset on (its kind is the learner's in the sandbox)."""
    spec = load_scenario(SCENARIOS_DIR / "smart_victim_long_prompt.toml").spec
    return variant_spec(Variant("", spec.config), spec.workload, seed=spec.seed, cost=spec.cost)


def built_ins(lang: str = "en"):
    spec = lab_spec()
    return compare([Variant(kind, spec.config, scheduler=kind) for kind in BUILT_IN], spec.workload, seed=spec.seed,
                   cost=spec.cost)


def test_the_learners_stage_is_the_run_made_here_measured_and_told_alike():
    spec = lab_spec()
    stage = own_stage(SMART, spec, "en", list(BUILT_IN), RunCache(2**30))
    own = stage.run
    assert stage.said is None and stage.traceback is None and own.label == "smart victim"
    assert own.scheduler.startswith("own_") and own.stop_reason == "finished" and own.ended is None
    here = run_variant(Variant("smart victim", spec.config, scheduler=load(
        str(ROOT / "starters/smart_victim.py") + ":SmartVictim").kind), spec.workload, seed=spec.seed, cost=spec.cost)
    assert len(own.frames) == len(here.frames) > 10
    assert {k: v for k, v in metric_values(own).items() if k not in WALL} == \
        {k: v for k, v in metric_values(here).items() if k not in WALL}
    article = built_ins()[0]
    assert lockstep_marks([(article.label, article.frames), (own.label, own.frames)], lang="en") == \
        lockstep_marks([(article.label, article.frames), (own.label, here.frames)], lang="en")
    assert own.trace_dict("lab: mine")["title"] == "lab: mine"  # exported as the trace it was read from


def test_beside_the_four_built_in_kinds_the_partings_name_it_in_both_languages_run_once():
    cache = RunCache(2**30)
    for lang, name in (("en", "smart victim"), ("zh", "聪明的牺牲者")):
        runs = built_ins(lang)
        runs.append(own_stage(SMART, lab_spec(), lang, [r.label for r in runs], cache).run)
        assert runs[-1].label == name
        marks = lockstep_marks([(r.label, r.frames) for r in runs], lang=lang)
        assert marks["partings"] and all(name in sentence for _, sentence in marks["partings"])
        assert len(marks["colors"]) == 5
        own, tail = metric_values(runs[-1]), metric_values(runs[0])  # the preset's win over tail preemption
        assert (own["recomputed tokens"], tail["recomputed tokens"]) == (76, 149)
        assert own["end-to-end latency mean steps"] < tail["end-to-end latency mean steps"]
    assert (cache.stats()["misses"], cache.stats()["hits"]) == (1, 1)  # the sandbox ran once for both


def test_a_name_another_stage_has_already_is_told_apart():
    stage = own_stage(SMART, lab_spec(), "en", ["smart victim"], RunCache(2**30))
    assert stage.run.label == "smart victim (yours)"


def test_a_block_freed_twice_ends_its_stage_before_the_step_that_broke_saying_what_broke():
    stage = own_stage(DOUBLE_FREE, lab_spec(), "en", [], RunCache(2**30))
    run, said = stage.run, stage.said
    assert run.stop_reason == "stopped" and run.ended == said and stage.traceback is None
    step = len(run.frames)  # its frames are those before the step that broke
    assert in_lang("en", said).startswith(f"Step {step} broke an invariant: block ")
    assert "was freed more times than it was taken" in in_lang("en", said)
    assert in_lang("zh", said).startswith(f"第 {step} 步打破了一个不变量：")
    runs = [*built_ins(), run]
    assert summary_of(runs).unfinished == [run.label]
    each_request = dict(verdicts(runs, "en"))[text("en", "compare.question.each_request")]
    unfinished = verdicts_of(runs).each_request[-1].unfinished
    assert unfinished > 0 and each_request.endswith(  # not "every request finished at the same step"
        f"{unfinished} that finished with {runs[0].label} did not finish with {run.label}")
    message = lockstep_message([(r.label, r.frames) for r in runs], lang="en",
                               stopped=[None] * 4 + [in_lang("en", run.ended)])
    assert message["stopped"][-1].startswith(f"Step {step} broke") and message["runs"][-1]["last"] == step - 1
    assert all(parting <= step - 1 for parting, _ in message["partings"])  # the others go on alone


def test_a_verdict_of_the_referee_past_the_workers_frames_ends_the_stage_before_its_step():
    """The worker may have written frames a broken scheduler never made: the referee's verdict at frame 5 leaves
    frames 0 to 4 on the stage, the learner told what the referee found."""
    sound = run_learner(SMART.source, SMART.class_name, lab_spec())
    forged = Broken("check.batch_seqs", n=9, most=8)
    forged.step = 5
    stage = stage_of(replace(sound, broken=forged), "en", [])
    assert len(stage.run.frames) == 5 and stage.run.stop_reason == "stopped"
    assert in_lang("en", stage.said) == "Step 5 broke an invariant: the batch holds 9 requests; max_num_seqs is 8"
    forged.step = 0
    assert stage_of(replace(sound, broken=forged), "en", []).run is None  # no frame to show: said instead


def test_code_that_raised_mid_run_is_a_stage_up_to_there_and_a_syntax_error_is_said_instead():
    raised = learner("    def choose_victim(self, requester):\n        return {}['victim']\n")
    stage = own_stage(OwnScheduler(raised, "Mine"), lab_spec(), "en", [], RunCache(2**30))
    assert stage.run is not None and stage.run.stop_reason == "stopped"
    assert in_lang("en", stage.said) == "Your code raised KeyError: 'victim' (line 7)."
    assert stage.traceback.rstrip().endswith("KeyError: 'victim'") and "scheduler/" not in stage.traceback
    broken = learner("    def choose_victim(self, requester)\n        return None\n")
    stage = own_stage(OwnScheduler(broken, "Mine"), lab_spec(), "zh", [], RunCache(2**30))
    assert stage.run is None and "SyntaxError" in stage.traceback and "6" in in_lang("zh", stage.said)


def test_a_run_stopped_by_a_limit_says_which_and_is_not_kept_for_the_next_try():
    endless = learner("    def choose_victim(self, requester):\n        while True:\n            pass\n")
    stage = stage_of(run_learner(endless, "Mine", lab_spec(), Limits(cpu_s=1, wall_s=30)), "en", [])
    assert stage.run is None and stage.traceback is None
    assert in_lang("en", stage.said) == "Your scheduler was stopped: it used up its 1 s of CPU time (an endless loop?)."
    too_long, cache = OwnScheduler(learner(before="#" * MAX_SOURCE + "\n"), "Mine"), RunCache(2**30)
    for tries in (1, 2):
        stage = own_stage(too_long, lab_spec(), "en", [], cache)
        assert stage.run is None and in_lang("en", stage.said).startswith("Your file is longer than")
        assert own_address(too_long, lab_spec()) not in cache and cache.stats()["misses"] == tries


def test_the_outcome_is_made_once_per_code_and_spec_and_kept_within_the_budget():
    cache, made = RunCache(budget_bytes=10 * 2**20, share_bytes=6 * 2**20), []
    own, spec = OwnScheduler("class A: pass\n", "A"), lab_spec()

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
