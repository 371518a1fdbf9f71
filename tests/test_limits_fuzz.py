"""Issue 13: every input a user can give (a link, a trace file, a scenario file, a sidebar value) ends in a clear
message or a working run: never another exception, never a hang. Hypothesis draws the inputs; the examples are
few and small so the suite stays fast."""

import json
import math
from datetime import timedelta

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.inputs.scenario import ScenarioError, load_scenario, preset_paths
from engine.run.adaptive import AdaptiveBatch
from engine.run.limits import BOUNDS
from engine.traces.trace import trace_dict
from scheduler import ConfigError
from scheduler.factory import SETTINGS
from scheduler.settings import SettingSpec
from session.lab import CUSTOM, Lab, LabError, RunInputs, open_trace
from session.links import KEYS, LinkError, open_link, parse_link
from viz.narrate import narrate

SCENARIOS = {p.stem: load_scenario(p, "fake") for p in preset_paths()}
FUZZ = settings(max_examples=25, deadline=timedelta(seconds=10), derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
STEPS = 4  # steps run after an input is accepted: it must work, not only open

texts = st.one_of(st.sampled_from(["0", "1", "2", "-1", "7", "99999", "1e9", "nan", "inf", "", "true", "off",
                                   "50-200-1-16", "1-2-100-256", "0.5", "02_preemption", CUSTOM, "chat", "poisson"]),
                  st.text(max_size=12))
json_values = st.recursive(st.none() | st.booleans() | st.integers(-2**70, 2**70) | st.floats() | st.text(max_size=8),
                           lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner,
                                                                                       max_size=4), max_leaves=12)


def _runs(lab: Lab):
    """The accepted input works: a few steps (or a trace's frames) read and narrated."""
    if not lab.is_trace:
        lab.run(STEPS)
    for k in range(min(lab.last, STEPS) + 1):
        lab.goto(k)
        narrate(lab.frame, lang="en")


@FUZZ
@given(st.dictionaries(st.sampled_from([*KEYS, "bogus"]), texts, max_size=6))
def test_any_link_opens_or_says_which_parameter_to_fix(params):
    try:
        link = parse_link(params, SCENARIOS)
    except LinkError as e:
        assert "link" in str(e)
        return
    _runs(open_link(link, SCENARIOS, "fake"))


def _small_trace() -> dict:
    engine = SCENARIOS["02_preemption"].engine("fake")
    engine.run(6)
    return trace_dict(engine, "fuzz")


TRACE = json.dumps(_small_trace())


def _paths(node, prefix=()):
    yield prefix
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for key, child in items:
        yield from _paths(child, (*prefix, key))


PATHS = [p for p in _paths(json.loads(TRACE)) if p][:4000]


@FUZZ
@given(st.lists(st.tuples(st.sampled_from(PATHS), json_values), min_size=1, max_size=3))
def test_any_edited_trace_opens_and_steps_through_or_is_refused(edits):
    trace = json.loads(TRACE)
    for path, value in edits:
        node = trace
        try:
            for key in path[:-1]:
                node = node[key]
            node[path[-1]] = value
        except (KeyError, IndexError, TypeError):
            continue  # an earlier edit removed this path
    try:
        data = json.dumps(trace, allow_nan=True).encode()
        lab = open_trace(data, "fuzz.json")
    except LabError as e:
        assert "fuzz.json" in str(e)
        return
    _runs(lab)


SCENARIO_KEYS = {"": ["max_steps", "seed"], "config": ["max_num_seqs", "num_kvcache_blocks", "kvcache_block_size",
                                                        "max_model_len", "max_num_batched_tokens", "chunked_prefill"],
                 "request": ["arrival", "max_tokens", "priority", "temperature", "prompt_token_ids"]}
toml_values = st.one_of(st.integers(-2**63, 2**63 - 1).map(str), st.floats().map(
    lambda f: "nan" if math.isnan(f) else ("inf" if f > 0 else "-inf") if math.isinf(f) else repr(f)),
    st.booleans().map(lambda b: str(b).lower()), st.text(max_size=5).map(json.dumps),
    st.lists(st.integers(-5, 2**40), max_size=5).map(str), st.just("[\"a\", 1]"))


@FUZZ
@given(st.dictionaries(st.sampled_from([(t, k) for t, keys in SCENARIO_KEYS.items() for k in keys]), toml_values,
                       max_size=4), st.binary(max_size=3))
def test_any_scenario_file_loads_and_runs_or_names_the_key(tmp_path_factory, edits, prefix):
    tables = {"": {"title": '"t"', "narrative": '"n"'},
              "config": {"max_num_seqs": "2", "max_num_batched_tokens": "32", "max_model_len": "16"},
              "request": {"prompt_token_ids": "[1, 2, 3]"}}
    for (table, key), value in edits.items():
        tables[table][key] = value
    text = "".join(f"{k} = {v}\n" for k, v in tables[""].items()) + "[config]\n" + "".join(
        f"{k} = {v}\n" for k, v in tables["config"].items()) + "[[workload.requests]]\n" + "".join(
        f"{k} = {v}\n" for k, v in tables["request"].items())
    path = tmp_path_factory.mktemp("fuzz") / "s.toml"
    path.write_bytes(prefix + text.encode())
    try:
        scenario = load_scenario(path, "fake")
    except ScenarioError as e:
        assert str(path) in str(e)
        return
    _runs(Lab(RunInputs.from_scenario(scenario, "fake")))


def _sidebar_value(spec: SettingSpec):
    if spec.choices:
        return st.sampled_from(spec.choices)
    if spec.kind == "int":
        return st.integers(*BOUNDS[spec.key])
    if spec.kind == "float":
        return st.floats(*BOUNDS[spec.key])
    return st.booleans()


ms, seqs = tuple(s * 1000 for s in BOUNDS["adaptive_s"]), BOUNDS["max_num_seqs"]
adaptive_values = st.none() | st.tuples(st.floats(*ms), st.floats(*ms), st.integers(*seqs), st.integers(*seqs))
sidebar_changes = st.one_of(*(st.tuples(st.just(spec.key), _sidebar_value(spec))  # every kind's, as each declares
                              for spec in SETTINGS.values() if spec.declared.sidebar),
                            st.tuples(st.just("overlap"), st.booleans()),
                            st.tuples(st.just("adaptive"), adaptive_values))


def _apply(lab: Lab, field: str, value):
    """What the sidebar's callbacks do with a control's value."""
    if field == "overlap":
        lab.set_options(overlap=value)
    elif field == "adaptive":
        lab.set_options(adaptive=None if value is None else AdaptiveBatch(value[0] / 1000, value[1] / 1000, 1,
                                                                           value[2], value[3]))
    else:
        lab.set_config(**{field: value})


@FUZZ
@given(st.lists(st.tuples(sidebar_changes, st.integers(0, 3)), min_size=1, max_size=4))
def test_any_sidebar_values_apply_or_are_refused_with_the_reason(changes):
    lab = Lab(RunInputs.from_scenario(SCENARIOS["02_preemption"], "fake"))
    lab.run(3)
    for (field, value), frame in changes:
        lab.goto(min(frame, lab.last))
        try:
            _apply(lab, field, value)
        except (ConfigError, LabError, ValueError) as e:  # the sidebar's USER_ERRORS: shown under the control
            assert str(e)
        _runs(lab)
