"""The policy lab's page with the learner's scheduler (AppTest, the real sandbox): offered beside any comparison when
the Workbench holds one, else where to write one; added as the last stage, in the table and the partings under its
kind's names; a broken one's stage ends saying what broke, a file that does not compile has no stage and shows its
traceback, and the other stages go on; never more stages than the lab holds."""

import json

import pytest

from engine.analysis.compare import MAX_VARIANTS
from session import run_cache
from session.own_scheduler import OwnScheduler
from tests.helpers.app import opened_page
from tests.helpers.sandboxed import learner, registry  # noqa: F401 - a fixture
from tests.helpers.source import ROOT
from ui.workbench_state import OWN_KEY

pytestmark = pytest.mark.usefixtures("registry", "fresh_cache")
SMART = OwnScheduler((ROOT / "starters/smart_victim.py").read_text(), "SmartVictim", "victim")
PRESET, ALL_KINDS = "smart_victim_long_prompt", "article vs vllm vs sglang vs vllm_v0"


@pytest.fixture
def fresh_cache(monkeypatch):
    """A run cache of the test's own: an outcome kept by an earlier test names a kind its registry has dropped."""
    monkeypatch.setattr(run_cache, "_shared", None)


def lab_with(own: OwnScheduler | None, lang: str = "en"):
    at = opened_page("policy_lab")
    if own is not None:
        at.session_state[OWN_KEY] = own
    at.session_state["lang"] = lang
    at.run()
    at.selectbox(key="workload_choice").select(PRESET).run()
    at.selectbox(key="comparison").select(ALL_KINDS).run()
    return at


def run_with_own(at):
    at.toggle(key="own_add").set_value(True).run()
    at.button(key="run").click().run()
    assert not at.exception
    return at


def test_without_a_scheduler_of_ones_own_the_lab_says_where_to_write_one():
    at = lab_with(None)
    assert not any(w.key == "own_add" for w in at.toggle)
    assert any("write one on the Workbench page" in c.value for c in at.caption)


@pytest.mark.parametrize(("lang", "name"), [("en", "smart victim"), ("zh", "聪明的牺牲者")])
def test_the_smart_victim_runs_as_a_fifth_stage_in_the_table_and_the_partings(lang, name):
    at = run_with_own(lab_with(SMART, lang))
    assert not at.error and not at.warning
    table = at.dataframe[0].value
    assert list(table.columns)[-1] == name and len(table.columns) == 6  # the metric, four kinds, and the learner's
    message = json.loads(at.session_state.lockstep_messages[lang])
    assert [run["title"] for run in message["runs"]][-1] == name and message["stopped"] == [None] * 5
    assert message["partings"] and all(name in sentence for _, sentence in message["partings"])
    assert any(name in m.value for m in at.markdown)  # the verdicts' answer to where they part names it


def test_a_broken_scheduler_ends_its_stage_saying_what_broke_and_the_others_go_on():
    double_free = OwnScheduler((ROOT / "starters/double_free.py").read_text(), "DoubleFree")
    at = run_with_own(lab_with(double_free))
    assert not at.error and at.warning[0].value.startswith("double_free: Step ")
    assert "was freed more times than it was taken" in at.warning[0].value
    message = json.loads(at.session_state.lockstep_messages["en"])
    assert " broke an invariant: " in message["stopped"][-1] and message["stopped"][:4] == [None] * 4
    assert message["runs"][-1]["last"] < min(run["last"] for run in message["runs"][:4])
    at.button(key="build_html").click().run()  # the offline animation says it too
    assert not at.exception and message["stopped"][-1] in at.session_state.exports["html"]


def test_a_file_that_does_not_compile_has_no_stage_and_shows_its_traceback():
    broken = OwnScheduler(learner("    def choose_victim(self, requester)\n        return None\n"), "Mine")
    at = run_with_own(lab_with(broken, "zh"))
    assert at.error[0].value.startswith("你的调度器没有舞台") and "6" in at.error[0].value
    assert any("SyntaxError" in code.value for code in at.code)
    assert len(at.dataframe[0].value.columns) == 5  # the four kinds' stages, as without it


def test_the_lab_never_holds_more_stages_than_it_may():
    at = lab_with(SMART)
    at.selectbox(key="comparison").select("custom").run()
    at.number_input(key="num_configs").set_value(MAX_VARIANTS).run()
    assert at.toggle(key="own_add").disabled
    assert any(f"at most {MAX_VARIANTS} stages" in c.value for c in at.caption)
