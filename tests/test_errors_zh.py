"""Errors in the reader's language: what the engine, the session layer and the page refuse carries a message id
and values (English str() for logs and the command line), and the Chinese page shows every such message in
Chinese: a bad link parameter, an out-of-range or impossible setting, a bad scenario file, a bad trace upload, a
refused change. "No English sentence" means no three English words in a row (names such as max_num_seqs, a
file name or a value quoted from the input may stay)."""

import json
import re
from pathlib import Path

import pytest

from engine.inputs.scenario import ScenarioError, load_scenario, preset_paths
from engine.traces.schema import TraceError
from engine.traces.trace import read_trace, trace_dict
from i18n import CATALOGUES, DEFAULT, Message, MessageError, in_lang
from scheduler import Config, ConfigError
from scheduler.article import Scheduler
from scheduler.sequence import SamplingParams, Sequence
from tests.helpers.app import lab, player_message
from tests.helpers.language import chinese_only


def test_the_check_finds_an_english_sentence():
    assert not chinese_only("未应用：max_num_seqs=0: must be at least 1")
    assert chinese_only("未应用：max_num_seqs=0：至少为 1")


def test_a_message_is_its_english_text_and_says_itself_in_chinese():
    message = Message("error.config", field="max_num_seqs", value="0", fix=Message("config.at_least_1"))
    assert message == "max_num_seqs=0: must be at least 1" and isinstance(message, str)
    assert in_lang("zh", message) == "max_num_seqs=0：至少为 1"
    error = MessageError("lab.at_start")
    assert str(error) == "Already at frame 0, the empty start." and error.message_id == "lab.at_start"
    assert in_lang("zh", error) == "已经在第 0 帧，也就是空的起点。"
    assert in_lang("zh", RuntimeError("torch said so")) == "torch said so"  # an error from outside, as it is


def test_every_message_id_the_engine_and_scheduler_name_exists():
    ids = re.compile(r"""["']((?:error|config|abort|scenario|trace|lab|link|workload|adaptive|compare|export|model|"""
                     r"""type|state|stage)\.[a-z_.]+[a-z])["']""")
    root = Path(__file__).resolve().parents[1]
    named = {name for folder in ("engine", "scheduler", "session", "runner", "viz", "ui")
             for path in (root / folder).rglob("*.py") for name in ids.findall(path.read_text())}
    assert len(named) > 60
    # a message that counts is named without its form (count(lang, "compare.memory.least", n)): it has .one and .other
    assert sorted(name for name in named - set(CATALOGUES[DEFAULT]) if f"{name}.one" not in CATALOGUES[DEFAULT]) == []


# -- below the page: every kind of refusal says itself in Chinese --------------------------------------------

BAD_SCENARIOS = {
    "unknown key": 'colour = 1\ntitle = "t"\nnarrative = "n"\n[config]\n[[workload.requests]]\n'
                   'prompt_token_ids = [1]\n',
    "wrong type": 'title = 1\nnarrative = "n"\n[config]\n[[workload.requests]]\nprompt_token_ids = [1]\n',
    "out of range": 'title = "t"\nnarrative = "n"\n[config]\nmax_num_seqs = 100000\n'
                    '[[workload.requests]]\nprompt_token_ids = [1]\n',
    "impossible config": 'title = "t"\nnarrative = "n"\n[config]\nmax_num_batched_tokens = 8\n'
                         '[[workload.requests]]\nprompt_token_ids = [1]\n',
    "not TOML": 'title = "t\n',
    "no requests": 'title = "t"\nnarrative = "n"\n[config]\n[workload]\n',
    "bad request": 'title = "t"\nnarrative = "n"\n[config]\n[[workload.requests]]\nprompt_token_ids = [1]\n'
                   'max_tokens = 0\n',
    "partly translated": 'title = "t"\ntitle_zh = "题"\nnarrative = "n"\n[config]\n[[workload.requests]]\n'
                         'prompt_token_ids = [1]\n',
}


@pytest.mark.parametrize("name", sorted(BAD_SCENARIOS))
def test_a_bad_scenario_file_is_refused_in_chinese(name, tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text(BAD_SCENARIOS[name])
    with pytest.raises(ScenarioError) as refused:
        load_scenario(path)
    shown = in_lang("zh", refused.value)
    assert chinese_only(shown), shown
    assert str(refused.value) == in_lang("en", refused.value) and str(refused.value).startswith(f"{path}: ")


def bad_traces() -> dict[str, bytes]:
    engine = load_scenario(preset_paths()[1]).engine("fake")
    engine.run(3)
    good = trace_dict(engine, "t")
    broken_step = json.loads(json.dumps(good))
    broken_step["frames"][1]["step"] = 7
    broken_status = json.loads(json.dumps(good))
    broken_status["frames"][2]["requests"][0]["status"] = "sleeping"
    return {"not JSON": b"{nope", "not UTF-8": b"\xff\xfe{}", "no frames": b'{"requests": []}',
            "steps out of order": json.dumps(broken_step).encode(),
            "unknown status": json.dumps(broken_status).encode()}


@pytest.mark.parametrize("name", ["not JSON", "not UTF-8", "no frames", "steps out of order", "unknown status"])
def test_a_bad_trace_is_refused_in_chinese(name):
    with pytest.raises(TraceError) as refused:
        read_trace(bad_traces()[name])
    assert chinese_only(in_lang("zh", refused.value)), in_lang("zh", refused.value)


def test_a_refused_request_and_an_abort_reason_say_themselves_in_chinese():
    with pytest.raises(ConfigError) as refused:
        Config(max_num_batched_tokens=8)
    assert chinese_only(in_lang("zh", refused.value))
    scheduler = Scheduler(Config(max_model_len=4, max_num_batched_tokens=16))
    seq = Sequence([1, 2, 3, 4, 5], SamplingParams(max_tokens=2))
    with pytest.raises(MessageError):
        scheduler.add(seq)
    assert seq.finish_reason.startswith("request ") and chinese_only(in_lang("zh", seq.finish_reason))


# -- on the page (AppTest): each error path in a Chinese session --------------------------------------------


def shown_messages(at) -> list[str]:
    return [m.value for m in (*at.warning, *at.error)]


@pytest.mark.parametrize("params", [
    {"scenario": "02_preemption", "max_num_seqs": "999"},  # out of range
    {"scenario": "02_preemption", "colour": "red"},  # a parameter schedlab does not know
    {"scenario": "no_such_preset"},
    {"scenario": "02_preemption", "prefill_first": "maybe"},
    {"scenario": "02_preemption", "adaptive": "fast"},
    {"scenario": "02_preemption", "max_num_batched_tokens": "8"},  # settings that cannot go together
])
def test_a_bad_link_says_what_to_fix_in_chinese(app, params):
    app.query_params.update({"lang": "zh", **params})
    app.run()
    assert not app.exception
    (shown,) = shown_messages(app)
    assert chinese_only(shown), shown


def test_an_impossible_setting_is_refused_in_chinese_and_follows_the_switch(app):
    app.query_params.update({"lang": "zh", "scenario": "02_preemption"})
    app.run()
    app.number_input(key="cfg_max_num_batched_tokens").set_value(8).run()
    (shown,) = shown_messages(app)
    assert shown.startswith("未应用：max_num_batched_tokens=8：") and chinese_only(shown), shown
    app.radio(key="lang").set_value("en").run()
    (shown,) = shown_messages(app)
    assert shown.startswith("Not applied: max_num_batched_tokens=8: without chunked prefill")


@pytest.mark.parametrize("data", [b"{nope", b"\xff\xfe{}", b'{"requests": [], "frames": []}'])
def test_a_bad_trace_upload_is_refused_in_chinese(app, data):
    app.query_params["lang"] = "zh"
    app.run()
    app.file_uploader[0].set_value(("t.json", data, "application/json"))
    app.run()
    assert not app.exception
    (shown,) = shown_messages(app)
    assert shown.startswith("t.json 不是由") and chinese_only(shown), shown


def test_a_trace_opened_in_chinese_is_titled_in_chinese(app):
    engine = load_scenario(preset_paths()[1]).engine("fake")
    engine.run(2)
    app.query_params["lang"] = "zh"
    app.run()
    app.file_uploader[0].set_value(("t.json", json.dumps(trace_dict(engine, "my run")).encode(), "application/json"))
    app.run()
    assert player_message(app)["title"] == "轨迹：my run"


def test_a_refused_change_is_said_in_chinese(app):
    app.query_params.update({"lang": "zh", "scenario": "02_preemption"})
    app.run()
    add = next(b for b in app.button if b.label == "添加请求")
    add.click().run()  # no prompt typed
    (shown,) = [m.value for m in app.error]
    assert chinese_only(shown) and "提示" in shown, shown
    lab(app).goto(0)
    with pytest.raises(MessageError) as refused:
        lab(app).back()
    assert chinese_only(in_lang("zh", refused.value))
