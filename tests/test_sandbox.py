"""A learner's scheduler run in the sandbox (sandbox/): a sound one's run comes back as a trace of a kind the
server registered as a declaration only, which opens as any trace does; a broken one stops at the frame where an
invariant broke, named; a syntax error gives its line; an exception shows the learner's frames only; a class that
declares more than a derived kind may is refused in words."""

import json

import pytest

from engine.analysis.tour import tour_kinds
from engine.traces.trace import read_trace
from i18n import in_lang
from sandbox import Limits, run_learner
from sandbox.kinds import DeclarationError
from scheduler.factory import SCHEDULERS, make_scheduler, scheduler_info
from starters import STARTERS, source
from tests.helpers.sandboxed import NEEDS_JAIL, learner, preset_spec, registry  # noqa: F401 - a fixture
from tests.helpers.source import ROOT

pytestmark = [NEEDS_JAIL, pytest.mark.usefixtures("registry")]


def starter(name: str) -> str:
    return (ROOT / "starters" / name).read_text()


def test_smart_victim_runs_to_the_end_and_its_trace_opens_as_a_declared_kind_that_no_list_of_kinds_shows():
    listed = list(SCHEDULERS), tour_kinds()
    outcome = run_learner(starter("smart_victim.py"), "SmartVictim", preset_spec())
    assert (list(SCHEDULERS), tour_kinds()) == listed  # no choice of kinds offers another session's
    assert outcome.ok, (outcome.fault, outcome.stopped, outcome.broken)
    assert outcome.kind is not None and outcome.kind.startswith("own_") and outcome.trace["scheduler"] == outcome.kind
    info = scheduler_info(outcome.kind)
    assert info == SCHEDULERS["article"].info.derive(outcome.kind, system="smart_victim")
    assert in_lang("zh", _name(outcome.kind)) == "聪明的牺牲者"
    store, trace = read_trace(json.dumps(outcome.trace))
    assert len(store) == len(outcome.trace["frames"]) > 10
    assert all(r["finish_reason"] for r in trace["requests"])  # every request ended
    with pytest.raises(DeclarationError):  # a declaration only: no learner code on the server
        make_scheduler(outcome.kind, store[0].config)


@pytest.mark.parametrize("starter", [s for s in STARTERS if s.id != "double_free"], ids=lambda s: s.id)
def test_every_sound_starter_runs_in_the_sandbox(starter):
    outcome = run_learner(source(starter), starter.class_name, preset_spec())
    assert outcome.ok, (outcome.fault, outcome.stopped, outcome.broken)
    assert outcome.trace["ended"] == "finished"


def test_a_hooks_unusable_answer_is_the_invariant_it_breaks():
    outcome = run_learner(learner("    def choose_victim(self, requester):\n        return 'the oldest'\n"), "Mine",
                          preset_spec())
    assert outcome.broken is not None and outcome.broken.message_id == "article.hook.victim", outcome
    assert outcome.broken.step == len(outcome.trace["frames"])


def _name(kind):
    from i18n import Message
    return Message(scheduler_info(kind).name)


def test_the_same_declaration_is_the_same_kind_and_another_a_new_one():
    first = run_learner(starter("smart_victim.py"), "SmartVictim", preset_spec(), Limits(steps=5))
    again = run_learner(starter("smart_victim.py"), "SmartVictim", preset_spec(), Limits(steps=5))
    renamed = run_learner(starter("smart_victim.py").replace("聪明的牺牲者", "另一个"), "SmartVictim", preset_spec(),
                          Limits(steps=5))
    assert first.kind == again.kind != renamed.kind
    assert len(first.trace["frames"]) == 6  # frame 0 and five steps


def test_double_free_stops_at_the_frame_where_the_invariant_broke_named():
    outcome = run_learner(starter("double_free.py"), "DoubleFree", preset_spec())
    assert outcome.broken is not None and outcome.fault is None and outcome.stopped is None
    assert outcome.broken.message_id == "check.freed_twice"
    assert outcome.broken.step == len(outcome.trace["frames"]) > 1  # the frames before the one that broke
    read_trace(json.dumps(outcome.trace))


STARVES_REQUEST_0 = """
    def schedule(self):
        held = [seq for seq in self.waiting if seq.seq_id == 0]  # request 0 never considered
        for seq in held:
            self.waiting.remove(seq)
        try:
            return super().schedule()
        finally:
            self.waiting.extendleft(held)
"""


def test_a_scheduler_that_starves_a_request_is_told_so_at_the_frame_its_run_stalled():
    outcome = run_learner(learner(STARVES_REQUEST_0), "Mine", preset_spec())
    assert outcome.broken is not None and outcome.fault is None and outcome.stopped is None
    assert outcome.broken.message_id == "check.stalled" and outcome.broken.message.values["seqs"] == "0"
    assert outcome.trace["ended"] == "stalled" and outcome.broken.step == len(outcome.trace["frames"]) - 1
    assert "starved" in in_lang("en", outcome.broken.message) and "饿死" in in_lang("zh", outcome.broken.message)


def test_a_syntax_error_gives_its_line():
    source = learner("    def choose_victim(self, requester)\n        return None\n")
    outcome = run_learner(source, "Mine", preset_spec())
    assert outcome.fault is not None and outcome.trace is None
    assert outcome.fault.line == 6 and "SyntaxError" in outcome.fault.text
    assert outcome.fault.message.key == "sandbox.raised"


def test_their_exception_shows_their_frames_only_at_their_line():
    source = learner("    def choose_victim(self, requester):\n        return helper()\n",
                     before="def helper():\n    return {}['victim']\n\n\n")
    outcome = run_learner(source, "Mine", preset_spec())
    assert outcome.fault is not None and outcome.fault.line == 5
    frames = [line for line in outcome.fault.text.splitlines() if line.strip().startswith("File ")]
    assert frames == ['  File "/learner/mine.py", line 11, in choose_victim',
                      '  File "/learner/mine.py", line 5, in helper']
    assert outcome.fault.text.rstrip().endswith("KeyError: 'victim'")
    assert "scheduler/" not in outcome.fault.text and "engine/" not in outcome.fault.text
    assert outcome.trace is not None  # the frames before it raised


def test_a_missing_class_and_a_declaration_that_changes_more_than_a_derive_are_refused_in_words():
    missing = run_learner(learner(), "Yours", preset_spec())
    assert missing.fault is not None and missing.fault.message.key == "learner.no_class"
    widened = learner().replace('derive("mine")', 'derive("mine", reserved_units=3)')
    refused = run_learner(widened, "Mine", preset_spec())
    assert refused.fault is not None and refused.fault.message.key == "sandbox.declares_more"
    assert "reserved_units" in str(refused.fault.message)


def test_prints_come_back_and_limits_out_of_bounds_are_refused():
    outcome = run_learner(learner(before="print('hello from', 'mine')\n"), "Mine", preset_spec(), Limits(steps=2))
    assert outcome.ok and outcome.prints == "hello from mine\n"
    with pytest.raises(ValueError, match="cpu_s"):
        Limits(cpu_s=10_000)
