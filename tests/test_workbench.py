"""The Workbench's server side: the classes a learner's file defines (parsed, never run), a trace's workload read
back as a run's recipe, the page under AppTest (a starter's text, kept through a language switch, replaced by
Load starter; one run at a time per session; each way a run in the real sandbox can end, said on the page) and the
editor's bundle built by `make install`."""

from concurrent.futures import Future

import pytest

from editor import BUNDLE, Marker
from engine.inputs.scenario import SCENARIOS_DIR, load_scenario
from engine.traces.trace import trace_json
from i18n import in_lang, text
from session.own_scheduler import OwnScheduler
from starters import BY_ID, STARTERS, source
from tests.helpers.app import page_app
from tests.helpers.sandboxed import NEEDS_JAIL, learner, registry  # noqa: F401 - a fixture
from ui.workbench import classes_in
from ui.workbench_run import Run, start
from ui.workbench_state import BENCH_KEY, OWN_KEY, Bench
from ui.workbench_target import trace_workload


def test_the_classes_a_file_defines_are_read_without_running_it():
    code = "import os\nclass A:\n    class Inner: pass\nos.system('x')\nclass B(A): pass\n"
    assert classes_in(code) == ["A", "B"]
    assert classes_in("class A(:\n") == []  # does not parse: the run says where
    assert classes_in("x = (" * 300) == []  # too deeply nested for the parser: no class, no crash


def test_a_traces_workload_is_the_run_it_recorded():
    engine = load_scenario(SCENARIOS_DIR / "02_preemption.toml", runner="fake").engine()
    engine.run()
    spec = trace_workload(trace_json(engine).encode())
    assert spec.config == engine.frames[0].config
    assert [(r.arrival, r.prompt_token_ids, r.max_tokens, r.priority) for r in spec.workload] == \
        [(rec.seq.arrival, tuple(rec.seq.token_ids[:rec.seq.num_prompt_tokens]),
          rec.request.max_tokens, rec.request.priority) for rec in engine.requests]
    with pytest.raises(ValueError):
        trace_workload(b'{"version": 5}')


def in_the_sandbox(test):
    """A test that runs a learner's code: in the jail (skipped without bubblewrap), the kinds it registers on the
    server unregistered after."""
    return NEEDS_JAIL(pytest.mark.usefixtures("registry")(test))


def opened():
    at = page_app("workbench")
    at.run()
    assert not at.exception
    return at


def ran(monkeypatch, code: str, class_name: str = "Mine"):
    """The page after Run on `code` (preset 07_smart_preemption, the fake model) and the run's end."""
    monkeypatch.setenv("SCHEDLAB_RUNNER", "fake")
    at = opened()
    at.session_state[OWN_KEY] = OwnScheduler(code, class_name)
    at.selectbox(key="workbench_scenario").set_value("07_smart_preemption").run()
    return pressed_run(at)


def pressed_run(at):
    """The page after Run and the run's end (AppTest does not wait for the page's poll)."""
    next(b for b in at.button if b.label == text("en", "workbench.run")).click().run()
    at.session_state[BENCH_KEY].run.future.result(timeout=120)
    at.run()
    assert not at.exception
    return at


@in_the_sandbox
def test_a_run_that_keeps_every_invariant_opens_on_the_stage_with_its_prints(monkeypatch):
    at = ran(monkeypatch, learner(before="print('hello from the sandbox')\n"))
    run = at.session_state[BENCH_KEY].run
    assert run.outcome.ok and at.session_state["lab"] is run.lab and run.lab.is_trace
    assert [s.value for s in at.success] == [text("en", "workbench.ok", steps=run.lab.last)]
    assert run.lab.scheduler == run.outcome.kind  # the learner's kind, as the server registered it
    assert any("hello from the sandbox" in c.value for c in at.code)


@in_the_sandbox
def test_a_syntax_error_is_marked_at_its_line_with_their_traceback(monkeypatch):
    at = ran(monkeypatch, learner("    def choose_victim(self, requester)\n        return None\n"))
    line = learner().count("\n") + 1
    assert at.session_state[BENCH_KEY].markers[0].line == line
    assert "SyntaxError" in at.error[0].value and f"(line {line})" in at.error[0].value
    assert "SyntaxError" in at.code[0].value and "ui/" not in at.code[0].value  # their frames only
    assert at.session_state["lab"] is not at.session_state[BENCH_KEY].run.lab


@in_the_sandbox
def test_a_forbidden_act_says_which_limit_stopped_it(monkeypatch):
    at = ran(monkeypatch, learner(before="import os\nos.system('true')\n"))
    stopped = at.session_state[BENCH_KEY].run.outcome.stopped
    assert stopped is not None
    assert [w.value for w in at.warning] == [text("en", "workbench.stopped", why=text("en", stopped.key,
                                                                                     **stopped.values))]


@in_the_sandbox
def test_a_broken_invariant_stands_the_stage_before_its_step(monkeypatch):
    double_free = BY_ID["double_free"]
    at = ran(monkeypatch, source(double_free), double_free.class_name)
    run = at.session_state[BENCH_KEY].run
    step = run.outcome.broken.step
    assert run.lab.cursor == run.lab.last == step - 1
    assert at.error[0].value == text("en", "workbench.broken", step=step, what=in_lang("en", run.outcome.broken)) + \
        "\n\n" + text("en", "workbench.at_frame", frame=step - 1)


def test_the_page_opens_on_the_first_starter_with_its_task(monkeypatch):
    monkeypatch.setenv("SCHEDLAB_RUNNER", "fake")
    at = opened()
    first = STARTERS[0]
    assert at.session_state[OWN_KEY] == OwnScheduler(source(first), first.class_name, first.id)
    assert at.selectbox(key="workbench_starter").value == first.id
    assert text("en", first.task) in [c.value for c in at.caption]
    assert at.selectbox(key="workbench_class").value == first.class_name


def test_the_learners_text_stays_through_a_language_switch_and_a_starter_replaces_it(monkeypatch):
    monkeypatch.setenv("SCHEDLAB_RUNNER", "fake")
    at = opened()
    mine = OwnScheduler(source(STARTERS[0]) + "\n# mine\n", STARTERS[0].class_name, STARTERS[0].id)
    at.session_state[OWN_KEY] = mine
    doc_id = at.session_state[BENCH_KEY].doc_id
    at.session_state["lang"] = "zh"  # the sidebar's switch (app.py draws it) sets this
    at.run()
    assert at.session_state[OWN_KEY] == mine and at.session_state[BENCH_KEY].doc_id == doc_id
    assert text("zh", "workbench.title") in [h.value for h in at.subheader]
    at.session_state[BENCH_KEY].mark((Marker(3, "boom"),))
    at.selectbox(key="workbench_starter").set_value("double_free").run()
    next(b for b in at.button if b.label == text("zh", "workbench.load_starter")).click().run()
    chosen = BY_ID["double_free"]
    assert at.session_state[OWN_KEY] == OwnScheduler(source(chosen), chosen.class_name, chosen.id)
    assert at.session_state[BENCH_KEY].doc_id != doc_id  # the editor takes the new text
    assert at.session_state[BENCH_KEY].markers == ()


def test_one_run_at_a_time_per_session():
    here, own = Bench(), OwnScheduler("class A: pass", "A")
    going = Future()  # a run that has not ended
    here.run = Run(own, going, 0.0)
    assert not start(here, own, None)
    assert here.run.future is going


def test_the_editors_bundle_is_built():
    """`make install` builds it (npm, esbuild); without it the page falls back to a text box, said so."""
    assert BUNDLE.is_file() and "export" in BUNDLE.read_text()[-200:]


@in_the_sandbox
def test_a_custom_workload_runs_as_set(monkeypatch):
    monkeypatch.setenv("SCHEDLAB_RUNNER", "fake")
    at = opened()
    at.session_state[OWN_KEY] = OwnScheduler(learner(), "Mine")
    at.segmented_control(key="workbench_source").set_value("custom").run()
    at.number_input(key="workbench_requests").set_value(3).run()
    at.number_input(key="workbench_max_tokens").set_value(5).run()
    run = pressed_run(at).session_state[BENCH_KEY].run
    assert run.outcome.ok
    assert [(r.id, r.max_tokens) for r in run.lab.frames[run.lab.last].requests] == [(0, 5), (1, 5), (2, 5)]
