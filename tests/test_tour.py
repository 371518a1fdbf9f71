"""The guided tour's content (engine/analysis/tour.py, viz/tour.py): every stop parts, every parting is told in both
languages from what each scheduler recorded, with the source lines its kind declares, and the tour runs every kind
the factory holds (a fifth kind registered in the factory by a test joins every stop by itself), up to the most runs
a comparison holds."""

import re

import pytest

from engine.analysis.partings import WHY, partings
from engine.analysis.tour import STOPS, run_stop, tour_kinds
from engine.inputs.scenario import SCENARIOS_DIR, load_scenario
from i18n import CATALOGUES, count, text
from scheduler.factory import SCHEDULERS, scheduler_info
from tests.helpers.fifth_kind import KIND, register
from viz.narrate import describe
from viz.tour import REASON_SOURCE, SOURCE_ORDER, explained, kind_line

LANGS = ("en", "zh")
PINNED = re.compile(r"^https://github\.com/[\w.-]+/[\w.-]+/blob/(v\d+\.\d+\.\d+|[0-9a-f]{40})/")


def stop_runs(stop):
    return run_stop(stop, load_scenario(SCENARIOS_DIR / f"{stop.preset}.toml"))


@pytest.fixture(scope="module")
def tour():
    return {stop.id: stop_runs(stop) for stop in STOPS}


def by_kind(runs):
    return {run.label: run for run in runs}


@pytest.mark.parametrize("stop", STOPS, ids=lambda stop: stop.id)
def test_every_stop_runs_every_kind_and_they_part(tour, stop):
    runs = tour[stop.id]
    assert [run.label for run in runs] == list(tour_kinds()) == list(SCHEDULERS)
    assert all(run.stop_reason == "finished" for run in runs)
    assert not any(f.events_of("aborted") for run in runs for f in run.frames), "a kind refused the stop's workload"
    assert partings([run.frames for run in runs]), f"the schedulers never part on {stop.preset}"
    for key in ("title", "intro"):
        assert all(text(lang, f"tour.stop.{stop.id}.{key}") for lang in LANGS)


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("stop", STOPS, ids=lambda stop: stop.id)
def test_every_parting_is_told_from_what_each_scheduler_recorded(tour, stop, lang):
    runs = tour[stop.id]
    found = partings([run.frames for run in runs])
    told = explained([(run.label, run.frames) for run in runs], lang=lang)
    assert [t.step for t in told] == [p.step for p in found]
    for each, parting in zip(told, found, strict=True):
        assert each.sentence.startswith(f"Step {each.step}: " if lang == "en" else f"第 {each.step} 步：")
        assert each.whole.startswith(each.sentence)
        for run, run_told, own, why in zip(runs, each.runs, parting.own, parting.why, strict=True):
            frame, before = run.frames[each.step], run.frames[each.step - 1]
            assert run_told.name == text(lang, scheduler_info(run.label).name)
            assert count(lang, "n.token", frame.batch.total_tokens) in run_told.batch or frame.batch.kind == "idle"
            assert why == tuple(e for e in frame.events if e.kind in WHY)  # every reason it recorded, in order
            assert run_told.why == tuple(describe(e, frame, before, lang=lang) for e in why)
            assert all(sentence in each.whole for sentence in run_told.why)
            declared, linked = scheduler_info(run.label).tour, {link.url for link in run_told.links}
            if declared is None:  # a kind without a tour declaration is told without links
                assert not linked
                continue
            decided = {"batch"} | {d.kind for d in own} | {REASON_SOURCE[e.kind] for e in why}
            assert linked == {declared.link(d) for d in SOURCE_ORDER if d in decided and declared.link(d)}
            assert "batch" not in dict(declared.lines) or declared.link("batch") in linked
        if lang == "zh":
            assert re.search("[\u4e00-\u9fff]", each.whole) and "{" not in each.whole


def test_the_stops_part_where_their_words_say(tour):
    """The intros' claims, read from the runs: prefill first admits the newcomers while the real systems hold them
    by max_num_seqs; the article's and vLLM preempt where SGLang, keeping room for future tokens, never does; vLLM
    shares a prefix within the step the article computes it three times."""
    basic = by_kind(tour["basic"])
    first = partings([run.frames for run in tour["basic"]])[0]
    assert {e.seq_id for e in basic["article"].frames[first.step].events_of("admitted")} == {3, 4}
    assert basic["article"].frames[first.step].batch.kind == "prefill"
    for kind, reason in (("vllm", "max_num_seqs"), ("sglang", "max_running_requests")):  # the same limit, named
        assert [e.reason for e in basic[kind].frames[first.step].events_of("blocked")] == [reason]
    assert any(f.batch.kind == "mixed" and f.events_of("admitted") for f in basic["vllm"].frames)
    memory = by_kind(tour["memory"])
    assert memory["article"].run.num_preemptions > 0 and memory["vllm"].run.num_preemptions > 0
    assert memory["sglang"].run.num_preemptions == 0 and memory["sglang"].run.num_steps > memory["vllm"].run.num_steps
    prefix = by_kind(tour["prefix"])
    computed = {kind: {e.seq_id: e.num_tokens for e in run.frames[1].events_of("admitted")}
                for kind, run in prefix.items()}
    assert computed["vllm"][1] < computed["article"][1] and computed["vllm"][2] < computed["article"][2]


@pytest.mark.parametrize("kind", list(SCHEDULERS))
def test_a_kind_declares_its_tour_words_and_pinned_source_lines(kind):
    tour = scheduler_info(kind).tour
    if tour is None:  # a kind may join without one: its stage runs, told without links (see below)
        pytest.skip(f"{kind} declares no tour")
    assert tour.summary.startswith(f"{kind}.") and all(tour.summary in CATALOGUES[lang] for lang in LANGS)
    assert PINNED.match(tour.link(tour.lines[0][0]))
    assert {decision for decision, _ in tour.lines} <= set(SOURCE_ORDER)
    assert all(re.search(r"#L\d+-L\d+$", where) for _, where in tour.lines)
    assert all(kind_line(kind, lang).count(text(lang, tour.summary)) == 1 for lang in LANGS)


def test_a_fifth_kind_registered_in_the_factory_joins_every_stop(monkeypatch):
    """A kind for this test only (tests/helpers/fifth_kind.py), the fifth: its stage runs beside the four others."""
    register(monkeypatch.setitem)
    assert len(tour_kinds()) == 5 and tour_kinds()[-1] == KIND
    for stop in STOPS:
        runs = stop_runs(stop)
        assert [run.label for run in runs] == list(SCHEDULERS)
        for lang in LANGS:
            told = explained([(run.label, run.frames) for run in runs], lang=lang)
            assert told and all(len(t.runs) == len(SCHEDULERS) for t in told)
            assert all(t.runs[-1].links == () for t in told)  # it declares no source lines
        assert kind_line(KIND, "zh").count(text("zh", "tour.no_summary")) == 1
    basic = stop_runs(STOPS[0])  # decode first, the contrary kind parts from the article's at the newcomers
    assert any(p.own[0] != p.own[-1] for p in partings([basic[0].frames, basic[-1].frames]))


def test_a_stop_refuses_another_preset():
    with pytest.raises(ValueError, match="runs preset"):
        run_stop(STOPS[0], load_scenario(SCENARIOS_DIR / f"{STOPS[1].preset}.toml"))
