"""A kind owns its settings (scheduler/settings.py): the shared Config carries each kind's own as a section, every
reader finds them through the declarations, and the formats written before (a trace's flat config, a link's
parameters, a scenario file's [config] table) open as they did."""

import json
from dataclasses import dataclass, replace
from pathlib import Path

import pytest

from engine.inputs.scenario import load_scenario, preset_paths
from engine.run.engine import Engine
from engine.run.frame import config_to_dict
from engine.traces.trace import read_trace, trace_dict
from scheduler import Config, ConfigError
from scheduler.article.settings import ArticleSettings
from scheduler.factory import SCHEDULER_KINDS, SETTINGS, scheduler_info, settings_of
from scheduler.settings import KindSettings, declared, setting
from scheduler.sglang.settings import SglangSettings
from scheduler.vllm_v1.settings import VllmSettings
from session.links import link_of, open_link, parse_link, replay

DATA = Path(__file__).parent / "data"
SCENARIOS = {path.stem: load_scenario(path) for path in preset_paths()}


def test_a_kinds_setting_lands_in_its_section_and_a_config_at_the_defaults_carries_none():
    config = Config(max_num_seqs=2, watermark=0.1, schedule_policy="lpm")
    assert config.max_num_seqs == 2 and config.of(VllmSettings).watermark == 0.1
    assert config.of(SglangSettings).schedule_policy == "lpm" and config.of(ArticleSettings) == ArticleSettings()
    assert [type(s) for s in config.sections] == [SglangSettings, VllmSettings]  # the set ones, in a fixed order
    assert replace(config, watermark=0.0, schedule_policy="fcfs") == Config(max_num_seqs=2)  # one run, one config
    assert replace(config, max_num_seqs=3).value("watermark") == 0.1  # a shared change keeps the sections
    assert Config(watermark=0) == Config(watermark=0.0) and isinstance(Config(watermark=0).value("watermark"), float)
    with pytest.raises(TypeError, match="no setting 'wattermark'"):
        Config(wattermark=0.1)


def test_a_kinds_setting_is_checked_against_the_shared_ones_it_refines():
    with pytest.raises(ConfigError) as refused:
        Config(max_num_seqs=2, max_num_active_seqs=3)  # vLLM's: at most max_num_seqs
    assert refused.value.field == "max_num_active_seqs"
    with pytest.raises(ConfigError, match="kvcache_block_size=8"):
        replace(Config(kvcache_block_size=4, chunked_prefill_size=4), kvcache_block_size=8)  # SGLang's: a page
    with pytest.raises(ConfigError, match="use one of lpm, dfs-weight, fcfs, lof"):
        Config(schedule_policy="random")


def test_every_setting_is_declared_once_with_its_words_range_and_default():
    for kind in SCHEDULER_KINDS:
        info = scheduler_info(kind)
        own = info.own_settings
        assert {s.key for s in settings_of(kind)} == {*(s.key for s in own), *(s.key for s in settings_of(kind)
                                                                               if s.owner is Config)}
        assert all(SETTINGS[s.key].owner is info.settings for s in own)  # no key of another kind's
        assert [s.key for s in own if s.flag] == [s.key for s in own if s.flag.startswith("--")]
    assert {s.key: s.flag for s in scheduler_info("vllm").own_settings}["watermark"] == "--watermark"
    assert scheduler_info("article").launch.system == "vLLM"  # its closest system, with its own notes

    with pytest.raises(TypeError, match="VllmSettings declares the key .watermark. already"):
        @dataclass(frozen=True)
        class Clashing(KindSettings):  # a later kind reusing the vLLM twin's key: refused when defined
            messages = "clashing.setting"
            watermark: float = setting(0.5)
    assert Config(watermark=0.2).of(VllmSettings).watermark == 0.2  # and the registry still routes it to vLLM

    @dataclass(frozen=True)
    class Later(KindSettings):  # the same field under a key of its own: the system's name kept, the key unique
        messages = "later.setting"
        watermark: float = setting(0.01, bounds=(0.0, 0.5), key="later_watermark")
    later = Config(later_watermark=0.2, watermark=0.1)
    assert later.of(Later).watermark == 0.2 and later.value("later_watermark") == 0.2
    assert later.value("watermark") == 0.1 and [s.key for s in declared(Later)] == ["later_watermark"]


def test_a_version_2_trace_reads_its_flat_config_and_writes_it_back_the_same():
    """tests/data/trace_v2.json holds a config written flat, every setting of its day by name: read, each lands
    where it belongs now, and written again it is the same dict, key for key."""
    data = json.loads((DATA / "trace_v2.json").read_text())
    store, _ = read_trace(json.dumps(data))
    assert config_to_dict(store[0].config) == data["config"]
    assert store[0].config.value("prefill_first") is True and store[0].config.value("long_prefill_token_threshold") == 0


def test_an_old_trace_that_carries_another_kinds_setting_opens_and_keeps_it():
    """A trace of the article's run made after a vLLM knob and an SGLang policy were set (the old flat Config held
    every kind's fields): it opens, the article's run is decided as before, and the settings are kept as written."""
    data = json.loads((DATA / "trace_v2.json").read_text())
    for config in (data["config"], *(frame["config"] for frame in data["frames"] if "config" in frame)):
        config |= {"watermark": 0.1, "schedule_policy": "lpm"}
    store, _ = read_trace(json.dumps(data))
    assert store[0].config.value("watermark") == 0.1 and store[-1].config.value("schedule_policy") == "lpm"
    assert config_to_dict(store[0].config) == data["config"]
    plain, _ = read_trace((DATA / "trace_v2.json").read_text())
    assert [store[k].batch for k in range(len(store))] == [plain[k].batch for k in range(len(plain))]


def reopened(params: dict):
    link = parse_link(params, SCENARIOS)
    lab = open_link(link, SCENARIOS, "fake")
    assert replay(lab, link, lambda at, frame: at.run(frame - at.cursor)) is None
    return lab


@pytest.mark.parametrize("params", [
    {"scenario": "custom", "requests": "8", "prompts": "chat", "max_tokens": "16", "arrivals": "poisson", "seed": "3",
     "max_num_seqs": "2", "frame": "7"},  # the README's custom setup
    {"scenario": "06_priority", "scheduler": "vllm", "frame": "5"},  # the README's twin link
    {"scenario": "vllm_knobs", "watermark": "0.2", "scheduler_reserve_full_isl": "0", "frame": "3"},
    {"scenario": "02_preemption", "prefill_first": "0", "preemption_policy": "smart", "frame": "4"},
    {"scenario": "02_preemption", "schedule_policy": "lpm", "frame": "2"},  # another kind's: kept, not read
])
def test_links_written_before_open_and_read_back_the_same(params):
    lab = reopened(params)
    assert lab.cursor == int(params["frame"])
    assert link_of(lab, SCENARIOS, lang="en").params() == params


def test_a_link_carrying_another_kinds_setting_runs_as_it_did_without_it():
    with_it, without = reopened({"scenario": "02_preemption", "watermark": "0.5", "frame": "12"}), \
        reopened({"scenario": "02_preemption", "frame": "12"})
    assert with_it.config_in_effect().value("watermark") == 0.5  # carried in its section, as the old Config held it
    assert [with_it.frames[k].batch for k in range(13)] == [without.frames[k].batch for k in range(13)]


def test_a_scenario_file_names_any_kinds_setting_in_its_config_table(tmp_path):
    """A scenario file of the article's scheduler may set the twin's knobs (the old flat [config] took them): it
    loads, and the article's run is the one it makes without them."""
    table = ("title = 't'\nnarrative = 'n'\n[config]\nmax_num_seqs = 2\nmax_num_batched_tokens = 64\n"
             "max_model_len = 20\nnum_kvcache_blocks = 10\nkvcache_block_size = 4\n{extra}"
             "[workload]\nrequests = [{{ prompt_token_ids = [1, 2, 3, 4, 5], max_tokens = 6 }}, "
             "{{ prompt_token_ids = [1, 2, 3], max_tokens = 4 }}]\n")
    runs = []
    for extra in ("watermark = 0.5\nschedule_policy = 'lof'\n", ""):
        path = tmp_path / f"s{len(runs)}.toml"
        path.write_text(table.format(extra=extra))
        scenario = load_scenario(path, "fake")
        engine = Engine(scenario.spec)
        engine.run()
        runs.append((scenario.spec.config, [f.batch for f in engine.frames], trace_dict(engine, "t")["config"]))
    (knobs, batches, written), (plain, plain_batches, _) = runs
    assert knobs.value("watermark") == 0.5 and knobs.value("schedule_policy") == "lof"
    assert batches == plain_batches and written["watermark"] == 0.5 and "watermark" not in runs[1][2]
