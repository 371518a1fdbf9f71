"""Assignments (engine/inputs/goals.py, engine/inputs/assignment.py): each goal kind's checker passing and failing
with its reason in both languages (and undecided before the run's end), the rules on locked settings, a scenario
file's bad assignment refused at its key, and the two shipped assignments solvable: a solution passes, the default
setup fails with the reason."""

from dataclasses import replace

import pytest

from engine.inputs.assignment import Assignment, Goal
from engine.inputs.goals import FAIL, GOALS, OPEN, PASS, gather, stat_of
from engine.inputs.scenario import SCENARIOS_DIR, ScenarioError, load_scenario
from engine.run.engine import Engine
from engine.run.metrics import percentile
from engine.run.recipe import Change, Request, RunSpec
from i18n import in_lang
from scheduler import Config
from session.lab import RunInputs
from tests.helpers.engines import GOOD

VIP = load_scenario(SCENARIOS_DIR / "assignment_1_vip_deadline.toml")
CHAT = load_scenario(SCENARIOS_DIR / "assignment_2_chat_slo.toml")


def run_of(spec: RunSpec, **settings) -> Engine:
    """`spec`'s run to its end, with `settings` changed at frame 0."""
    engine = Engine(replace(spec, changes=(Change.config(0, settings),)) if settings else spec)
    engine.run()
    return engine


def evidence(engine: Engine, upto: int | None = None):
    """The run up to frame `upto` (by default its end, where it has ended)."""
    last = len(engine.frames) - 1 if upto is None else upto
    return gather((engine.frames[k] for k in range(last + 1)), ended=last == len(engine.frames) - 1)


def check(kind: str, ev, **params):
    verdict = GOALS[kind].check(ev, **params)
    assert in_lang("zh", verdict.reason) != verdict.reason  # said in Chinese too
    return verdict


@pytest.fixture(scope="module")
def vip():
    """Assignment 1's setup as it ships: request 3 finishes at step 29, six preemptions, the last finish at 42."""
    return run_of(VIP.spec)


@pytest.fixture(scope="module")
def chat():
    """Assignment 2's setup as it ships: the pool fills (64 blocks at step 11), TTFT p95 20 steps."""
    return run_of(CHAT.spec)


def test_finish_by_passes_fails_and_waits_for_the_request(vip):
    ended = evidence(vip)
    late = check("finish_by", ended, request=3, step=20)
    assert late.state == FAIL and late.reason == "Request 3 finished at step 29, after step 20."
    assert in_lang("zh", late.reason) == "请求 3 在第 29 步完成，晚于第 20 步。"
    assert check("finish_by", ended, request=3, step=29).state == PASS
    assert check("finish_by", evidence(vip, 15), request=3, step=20).state == OPEN  # not decided at step 15
    missed = check("finish_by", evidence(vip, 21), request=3, step=20)  # step 20 passed without it: decided
    assert missed.state == FAIL and missed.reason == "Request 3 had not finished by step 20."


def test_a_request_aborted_fails_its_goals():
    config = Config(max_num_seqs=2, max_num_batched_tokens=64, max_model_len=64, num_kvcache_blocks=2,
                    kvcache_block_size=4, enable_prefix_caching=False)
    engine = run_of(RunSpec(config, [Request(prompt_token_ids=(1, 2, 3), max_tokens=20, ignore_eos=True)]))
    ev = evidence(engine)
    assert ev.requests[0].status == "aborted"
    for kind, params in (("finish_by", {"request": 0, "step": 50}), ("all_finish_by", {"step": 50})):
        verdict = check(kind, ev, **params)
        assert verdict.state == FAIL and verdict.reason.startswith("Request 0 was aborted at step")


def test_all_finish_by_names_the_latest_request(vip):
    assert check("all_finish_by", evidence(vip), step=45).reason == \
        "Every request finished by step 45 (the last at step 42)."
    late = check("all_finish_by", evidence(vip), step=40)
    assert late.state == FAIL and late.reason == "Request 5 finished at step 42, after step 40."
    assert check("all_finish_by", evidence(vip, 30), step=45).state == OPEN
    unfinished = check("all_finish_by", evidence(vip, 30), step=30)
    assert unfinished.state == FAIL and unfinished.reason == "Requests 4, 5 had not finished by step 30."


def test_no_preemption_fails_at_the_first_and_passes_only_at_the_end(vip):
    preempted = check("no_preemption", evidence(vip))
    at, first = evidence(vip).preemptions[0]
    assert preempted.state == FAIL and preempted.reason.startswith(f"Request {first} was preempted at step {at} (")
    calm = run_of(VIP.spec, max_num_seqs=1, prefill_first=False)
    assert check("no_preemption", evidence(calm)).state == PASS
    assert check("no_preemption", evidence(calm, 10)).state == OPEN
    spared = {rid for _, rid in evidence(vip).preemptions} ^ set(range(6))
    assert check("no_preemption", evidence(vip), request=min(spared)).state == PASS


def test_latency_goals_read_every_metric_and_statistic(chat):
    ev = evidence(chat)
    slow = check("latency", ev, metric="ttft", stat="p95", at_most=5)
    assert slow.state == FAIL and slow.reason == "TTFT p95 was 20.0 steps, over 5."
    assert in_lang("zh", slow.reason) == "「TTFT p95」为 20.0 步，超过 5。"
    assert check("latency", ev, metric="ttft", stat="p95", at_most=20).state == PASS
    for metric in ("ttft", "tpot", "e2e", "queueing"):
        values = [getattr(r, metric).steps for r in ev.requests if getattr(r, metric) is not None]
        assert stat_of(values, "p50") == percentile(values, 50) and stat_of(values, "max") == max(values)
        verdict = check("latency", ev, metric=metric, stat="mean", at_most=1000)
        assert verdict.state == PASS and f"{sum(values) / len(values):.1f}" in verdict.reason
    assert check("latency", evidence(chat, 12), metric="ttft", stat="p95", at_most=5).state == OPEN


def test_peak_blocks_fails_once_exceeded_and_passes_at_the_end(chat):
    over = check("peak_blocks", evidence(chat), at_most=40)
    assert over.state == FAIL and over.reason == "64 KV blocks were in use at step 11, over 40."
    assert check("peak_blocks", evidence(chat, 11), at_most=40).state == FAIL  # decided the moment it happens
    assert check("peak_blocks", evidence(chat, 5), at_most=40).state == OPEN
    shared = run_of(CHAT.spec, enable_prefix_caching=True)
    fits = check("peak_blocks", evidence(shared), at_most=40)
    assert fits.state == PASS and fits.reason.startswith("At most 34 KV blocks were in use at once")


def test_throughput_is_judged_at_the_end(vip):
    ev = evidence(vip)
    rate = ev.run.throughput_tokens_per_step
    assert check("throughput", ev, at_least=rate - 0.01).state == PASS
    low = check("throughput", ev, at_least=rate + 0.5)
    assert low.state == FAIL and low.reason == f"{rate:.2f} output tokens per step, under {rate + 0.5:g}."
    assert check("throughput", evidence(vip, 10), at_least=0).state == OPEN


def test_every_goal_kind_has_words_in_both_languages():
    examples = {"finish_by": {"request": 3, "step": 20}, "all_finish_by": {"step": 45}, "no_preemption": {},
                "latency": {"metric": "ttft", "stat": "p95", "at_most": 5.0}, "peak_blocks": {"at_most": 40},
                "throughput": {"at_least": 1.5}, "contract": {},
                "latency_vs": {"metric": "ttft", "stat": "p95", "baseline": "article"}}
    assert set(examples) == set(GOALS)
    for kind, params in examples.items():
        words = Goal(kind, tuple(params.items())).words
        assert words and in_lang("zh", words) != words
    assert Goal("latency", (("metric", "ttft"), ("stat", "p95"), ("at_most", 5.0))).words == \
        "TTFT p95 is at most 5 steps."


# -- the rules: locked settings -----------------------------------------------------------------------------


def test_locked_settings_changed_at_the_start_or_mid_run_break_the_rules():
    assignment = VIP.assignment
    assert assignment.locks("num_kvcache_blocks") and not assignment.locks("queue_policy")
    spec = VIP.spec
    assert assignment.broken_rules(spec, spec) == []
    free = replace(spec, changes=(Change.config(3, {"queue_policy": "priority"}),))
    assert assignment.broken_rules(spec, free) == []
    mid_run = replace(spec, changes=(Change.config(3, {"num_kvcache_blocks": 6}),
                                     Change.request(5, Request(prompt="hi"))))
    assert assignment.broken_rules(spec, mid_run) == [
        "num_kvcache_blocks was changed at frame 3, but the assignment locks it.",
        "A request was added at frame 5, but the assignment does not allow it."]
    at_start = replace(spec, runner="model", config=replace(spec.config, kvcache_block_size=16))
    assert assignment.broken_rules(spec, at_start) == [
        "kvcache_block_size is 16, but the assignment sets it to 10 and locks it.",
        "runner is 'model', but the assignment sets it to 'fake' and locks it."]
    judged = assignment.judge(evidence(run_of(spec, queue_policy="priority")), spec, at_start)
    assert all(v.state == PASS for _, v in judged.verdicts) and not judged.passed  # the goals met, the rules not


def test_an_assignment_opens_on_its_own_model_seed_and_temperature():
    inputs = RunInputs.from_scenario(VIP, "model", temperature=0.7, seed=9)
    assert (inputs.runner, inputs.spec.seed, inputs.temperature) == ("fake", VIP.spec.seed, 0.0)
    free = replace(VIP, assignment=Assignment(VIP.assignment.goals, ("runner", "seed", "temperature")))
    inputs = RunInputs.from_scenario(free, "model", temperature=0.7, seed=9)
    assert (inputs.runner, inputs.spec.seed, inputs.temperature) == ("model", 9, 0.7)


# -- the shipped assignments are solvable ---------------------------------------------------------------------


@pytest.mark.parametrize("scenario, solution, failing", [
    (VIP, {"queue_policy": "priority"}, ["Request 3 finished at step 29, after step 20."]),
    (CHAT, {"enable_prefix_caching": True}, ["TTFT p95 was 20.0 steps, over 5.",
                                             "64 KV blocks were in use at step 11, over 40."]),
], ids=["vip", "chat"])
def test_a_shipped_assignment_fails_as_set_and_passes_solved(scenario, solution, failing):
    assert set(solution) <= set(scenario.assignment.may_change)
    as_set = scenario.assignment.judge(evidence(run_of(scenario.spec)), scenario.spec, scenario.spec)
    assert as_set.ended and not as_set.passed
    assert [v.reason for _, v in as_set.verdicts if v.state == FAIL] == failing
    solved_spec = replace(scenario.spec, changes=(Change.config(0, solution),))
    solved = scenario.assignment.judge(evidence(run_of(solved_spec)), scenario.spec, solved_spec)
    assert solved.passed and not solved.broken


# -- a scenario file's assignment, checked where it is read ----------------------------------------------------


@pytest.mark.parametrize("assignment, key, problem", [
    ('goals = [{ kind = "finsh_by", request = 0, step = 5 }]', "assignment.goals[0].kind", "is not a goal kind"),
    ('goals = [{ kind = "contract" }]', "assignment.goals[0].kind",  # a coding assignment's only
     "'contract' is not a goal kind; use one of: finish_by, all_finish_by, no_preemption, latency, peak_blocks, "
     "throughput"),
    ('goals = [{ kind = "finish_by", step = 5 }]', "assignment.goals[0].request", "missing"),
    ('goals = [{ kind = "finish_by", request = 1, step = 5 }]', "assignment.goals[0].request",
     "out of range: use a number from 0 to 0"),
    ('goals = [{ kind = "finish_by", request = 0, step = "5" }]', "assignment.goals[0].step", "'5'"),
    ('goals = [{ kind = "no_preemption", when = 3 }]', "assignment.goals[0].when", "unknown key"),
    ('goals = [{ kind = "latency", metric = "ttfb", stat = "p95", at_most = 5 }]', "assignment.goals[0].metric",
     "use one of: ttft, tpot, e2e, queueing"),
    ('goals = [{ kind = "latency", metric = "ttft", stat = "p95", at_most = -1 }]', "assignment.goals[0].at_most",
     "out of range"),
    ("goals = []", "assignment.goals", "0 goals"),
    ('may_change = ["num_blocks"]\ngoals = [{ kind = "no_preemption" }]', "assignment.may_change[0]",
     "'num_blocks' is not a setting"),
    ('goal = [{ kind = "no_preemption" }]', "assignment.goal", "unknown key"),
])
def test_a_bad_assignment_is_refused_at_its_key_in_both_languages(tmp_path, assignment, key, problem):
    path = tmp_path / "x.toml"
    path.write_text(GOOD + "\n[assignment]\n" + assignment + "\n")
    with pytest.raises(ScenarioError) as refused:
        load_scenario(path)
    assert refused.value.key == key and problem in str(refused.value)
    assert f"x.toml：{key}：" in in_lang("zh", refused.value)


def test_a_good_assignment_loads_its_goals_in_order(tmp_path):
    path = tmp_path / "x.toml"
    path.write_text(GOOD + '\n[assignment]\nmay_change = ["max_num_seqs"]\n'
                           'goals = [{ kind = "throughput", at_least = 1 }, { kind = "finish_by", request = 0, '
                           'step = 9 }]\n')
    assignment = load_scenario(path).assignment
    assert assignment.may_change == ("max_num_seqs",)
    assert assignment.goals == (Goal("throughput", (("at_least", 1.0),)),
                                Goal("finish_by", (("request", 0), ("step", 9))))
