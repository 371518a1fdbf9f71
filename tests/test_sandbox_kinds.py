"""A learner's kind on the server (sandbox/kinds.py): registered from the worker's declaration as data, under an id
the server makes, with names cleaned; data that is no declaration is refused, and so is a kind past the bound."""

from pathlib import Path

import pytest

from i18n import Message
from sandbox import Limits, jail, kinds
from sandbox import run as sandbox_run
from scheduler.factory import SCHEDULERS, scheduler_info
from tests.helpers.sandboxed import preset_spec, registry  # noqa: F401 - a fixture

pytestmark = pytest.mark.usefixtures("registry")


def declared(**changes):
    return {"base": "article", "kind": "mine", "names": {"en": "mine", "zh": "我的"}, **changes}


def test_a_declaration_is_registered_once_under_the_servers_own_id_with_its_names_cleaned():
    kind = kinds.register(declared(names={"en": " my\x00  sched\u202euler\n" + "x" * 80, "xx": "ignored"}))
    assert kind == kinds.register(declared(names={"en": " my\x00  sched\u202euler\n" + "x" * 80}))
    assert kind.startswith("own_") and scheduler_info(kind) == SCHEDULERS["article"].info.derive(kind, system="mine")
    name = str(Message(scheduler_info(kind).name))
    assert name.startswith("my sched uler xxx") and len(name) == kinds.MAX_NAME
    assert str(Message(scheduler_info(kinds.register(declared(names={}))).name)) == "mine"  # its kind id


@pytest.mark.parametrize("data", [None, [], declared(base="own_x"), declared(base="nope"), declared(kind="Mine!"),
                                  declared(kind="x" * 41), declared(names="mine"), {**declared(), "info": {}}])
def test_data_that_is_no_declaration_of_a_built_in_kind_derived_is_refused(data):
    with pytest.raises(kinds.DeclarationError) as refused:
        kinds.register(data)
    assert refused.value.message_id == "sandbox.bad_declaration"


def test_the_server_holds_a_bounded_number_of_kinds(monkeypatch):
    monkeypatch.setattr(kinds, "SANDBOX_KINDS", len(kinds._registered) + 2)
    kinds.register(declared(kind="one"))
    kinds.register(declared(kind="two"))
    kinds.register(declared(kind="one"))  # known already
    with pytest.raises(kinds.DeclarationError) as full:
        kinds.register(declared(kind="three"))
    assert full.value.message_id == "sandbox.kinds_full"


def test_a_servers_workers_yield_the_cpu_to_its_class(monkeypatch):
    """SCHED_IDLE and nice 19 for the worker, and nice 19 for its autogroup (its session would otherwise be weighed
    as the equal of the server's whole session)."""
    monkeypatch.setattr(jail, "YIELDING", True)
    command = jail.command(Limits(), 3)
    start = command.index("chrt")
    assert command[start:start + 7] == ["chrt", "--idle", "0", "nice", "-n", "19", "bwrap"]
    process = jail.start(Limits())
    try:
        autogroup = Path(f"/proc/{process.pid}/autogroup")
        assert not autogroup.exists() or autogroup.read_text().split()[-1] == "19"
    finally:
        sandbox_run._kill(process)


def test_a_server_without_bubblewrap_says_so(monkeypatch):
    monkeypatch.setattr(sandbox_run.jail, "available", lambda: False)
    assert sandbox_run.run_learner("", "Mine", preset_spec()).stopped.key == "sandbox.unavailable"
