"""The message catalogues: every id in every language with the same placeholders, every id the code names
exists, the Chinese narration of whole presets is Chinese, and scenario files are translated all or nothing."""

import json
import re
from pathlib import Path

import pytest

import engine.inputs.scenario as scenario_module
from engine.inputs.scenario import ScenarioError, load_scenario, preset_paths
from i18n import CATALOGUES, DEFAULT, LANGUAGES, count, join_and, language, messages, problems, text
from session.feed import Feed
from session.lab import Lab, RunInputs
from session.links import LinkError, parse_link
from viz.frame_payload import player_strings
from viz.glossary import SETTING_FIELDS, legend_lines, setting
from viz.html_export import animation_html
from viz.narrate import narrate

ROOT = Path(__file__).resolve().parents[1]
SCENARIOS = {path.stem: load_scenario(path, runner="fake") for path in preset_paths()}
# English a Chinese sentence keeps on purpose: config and field names, policy values, units and abbreviations.
KEPT_ENGLISH = re.compile(r"\b(?:[a-z]+_[a-z_]+|K/V|KV|token|id|EOS|E2E|TTFT|TPOT|nano-vllm|vLLM|tail|smart|"
                          r"priority|fcfs|LRU|ms|MB|SmolLM2[-\w]*|n-gram|SGLang|NO_TOKEN|lpm|dfs-weight|lof|"
                          r"LATER|NEVER|FINISHED_IGNORED|CPU|GPU|preemption-mode (?:swap|recompute))\b")


def test_every_message_exists_in_every_language_with_the_same_placeholders():
    assert problems() == []
    assert all(message.strip() for catalogue in CATALOGUES.values() for key, message in catalogue.items()
               if not key.endswith("sep"))  # a separator may be a space, or nothing between Chinese sentences


def test_a_message_in_one_language_only_or_with_other_placeholders_is_reported(monkeypatch):
    chinese = CATALOGUES["zh"]
    monkeypatch.setitem(CATALOGUES, "zh", {**chinese, "only.here": "只在这里", "narrate.idle": "第 {frame} 步空闲。"})
    assert problems() == ["zh: only.here is not in en",
                          "zh: narrate.idle has the placeholders ['frame'], en ['step']"]
    monkeypatch.setitem(CATALOGUES, "zh", {k: v for k, v in chinese.items() if k != "player.step"})
    assert problems() == ["zh: player.step is missing"]


def test_every_message_id_the_code_names_exists():
    """Literal ids in t("..."), text(lang, "...") and text("en", "...") calls across the code."""
    pattern = re.compile(r"""\b(?:t|text)\((?:lang, |"\w+", )?"([a-z][\w.]*)\"""")
    named = set()
    for folder in ("ui", "viz", "session", "app_pages"):
        for path in (ROOT / folder).rglob("*.py"):
            named |= set(pattern.findall(path.read_text()))
    named |= set(pattern.findall((ROOT / "app.py").read_text()))
    assert len(named) > 150
    assert not named - set(CATALOGUES[DEFAULT])
    for field in SETTING_FIELDS:  # the ids built from names
        assert all(setting(field, lang).label for lang in LANGUAGES)


def test_lookup_fills_placeholders_counts_and_lists():
    assert text("en", "narrate.idle", step=4) == "Step 4 was idle: no request could run."
    assert text("zh", "narrate.idle", step=4) == "第 4 步空闲：没有请求可以运行。"
    assert count("en", "n.block", 1) == "1 block" and count("en", "n.block", 2) == "2 blocks"
    assert join_and("en", [1, 2, 3]) == "1, 2 and 3" and join_and("zh", [1, 2, 3]) == "1、2 和 3"
    assert language("zh") == "zh" and language("fr") == DEFAULT and language(None) == DEFAULT
    assert messages("zh", "player.")["step_name"] == "单步"


@pytest.mark.parametrize("scheduler", ["article", "vllm", "sglang"])
def test_a_chinese_message_spaces_a_filled_value_as_its_own_words(scheduler):
    # the vLLM twin's name starts with Latin letters, the article's with Chinese: "由 vLLM 孪生调度器决定" and
    # "由文章的调度器决定", whatever the template put around {scheduler}; "由vLLM" or "文章的调度器 不读取" read wrong
    name = text("zh", f"{scheduler}.run_name")
    for key in ("stage.scheduler", "run.other_scheduler", "sidebar.scheduler_unread", "sidebar.scheduler_restarted"):
        said = text("zh", key, scheduler=name, title="标题", frame=3)
        assert not re.search(r"[\u4e00-\u9fff][A-Za-z0-9]|[A-Za-z0-9][\u4e00-\u9fff]", said), said
        assert not re.search(r"[\u4e00-\u9fff] [\u4e00-\u9fff]", said), said
    assert text("zh", "stage.scheduler", scheduler=name) == (" · 由文章的调度器决定" if scheduler == "article"
                                                             else f" · 由 {name}决定")


def test_a_chinese_list_has_no_space_beside_a_full_width_mark():
    # the lab's parting note: "接纳了请求 1（14 个 token）、2（14 个 token）和 3", not "…token） 和 3"
    assert join_and("zh", ["1（14 个 token）", "2（14 个 token）", "3"]) == "1（14 个 token）、2（14 个 token）和 3"
    assert join_and("zh", ["1", "2"]) == "1 和 2"



def test_a_chinese_seam_of_spaces_alone_between_two_values_is_spaced_as_any_other():
    # the lab's verdict: "前缀缓存开比前缀缓存关更早 24%", not "…前缀缓存关 更早 24%"; a Latin name keeps its space
    said = {loser: text("zh", "compare.winner", winner="前缀缓存开", loser=loser, how="更早 24%", measure="模拟时间",
                        value="0.126", unit="秒", others="…") for loser in ("前缀缓存关", "vLLM 0.33")}
    assert said["前缀缓存关"].startswith("前缀缓存开比前缀缓存关更早 24%（模拟时间 0.126 秒")
    assert said["vLLM 0.33"].startswith("前缀缓存开比 vLLM 0.33 更早 24%")

def english_words(sentence: str) -> list[str]:
    """Words of two or more Latin letters, besides the kept ones and {placeholders}."""
    return re.findall(r"[A-Za-z]{2,}", KEPT_ENGLISH.sub("", re.sub(r"\{\w+\}", "", sentence)))


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_the_chinese_narration_of_a_whole_preset_has_no_english_left(name):
    engine = SCENARIOS[name].engine()
    engine.run(200)
    frames = engine.frames
    for k in range(len(frames)):
        for sentence in narrate(frames[k], frames[k - 1] if k else None, lang="zh"):
            assert not english_words(sentence), f"{name} frame {k}: {sentence}"
            assert re.search(r"[\u4e00-\u9fff]", sentence)


def test_the_players_words_and_the_legend_are_chinese():
    strings = player_strings("zh")
    words = [v for v in strings.values() if isinstance(v, str)]
    words += [w for _, w in strings["legend"]["tokens"] + strings["legend"]["pool"]] + legend_lines("zh")
    assert [w for w in words if not re.search(r"[\u4e00-\u9fff]", w) and english_words(w)] == []
    assert strings["step_name"] == "单步" and player_strings("en")["step_name"] == "Step"


def test_every_shipped_preset_tells_its_story_in_both_languages():
    for scenario in SCENARIOS.values():
        assert scenario.is_translated("zh")
        assert re.search(r"[\u4e00-\u9fff]", scenario.title_in("zh") + scenario.narrative_in("zh"))
        assert all(re.search(r"[\u4e00-\u9fff]", k.note_in("zh")) for k in scenario.key_frames)
        assert scenario.title_in("en") == scenario.title


def _file(tmp_path, name: str, extra: str = "", note_extra: str = "") -> Path:
    path = tmp_path / name
    path.write_text(f'title = "T"\nnarrative = "N"\n{extra}\n[config]\nmax_num_seqs = 2\n'
                    '[[workload.requests]]\nprompt_token_ids = [1, 2]\n'
                    f'[[key_frames]]\nstep = 1\nnote = "n"\n{note_extra}expect = {{ admitted = [0] }}\n')
    return path


def test_a_users_file_without_chinese_loads_and_falls_back_to_english(tmp_path):
    scenario = load_scenario(_file(tmp_path, "mine.toml"))
    assert not scenario.is_translated("zh") and scenario.title_in("zh") == "T"
    assert scenario.key_frames[0].note_in("zh") == "n"


def test_a_file_with_a_message_in_one_language_only_is_refused(tmp_path):
    with pytest.raises(ScenarioError, match=r"mine\.toml: key_frames\[0\]\.note_zh: missing"):
        load_scenario(_file(tmp_path, "mine.toml", 'title_zh = "标"\nnarrative_zh = "叙"'))
    done = load_scenario(_file(tmp_path, "mine.toml", 'title_zh = "标"\nnarrative_zh = "叙"', 'note_zh = "注"\n'))
    assert done.title_in("zh") == "标" and done.key_frames[0].note_in("zh") == "注"


def test_a_shipped_preset_without_chinese_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(scenario_module, "SCENARIOS_DIR", tmp_path.resolve())
    with pytest.raises(ScenarioError, match=r"preset\.toml: title_zh: missing.*every shipped preset"):
        load_scenario(_file(tmp_path, "preset.toml"))


def test_a_link_keeps_the_language():
    link = parse_link({"scenario": "02_preemption", "frame": "3", "lang": "zh"}, SCENARIOS)
    assert link.lang == "zh" and link.params()["lang"] == "zh"
    assert "lang" not in parse_link({"scenario": "02_preemption"}, SCENARIOS).params()
    with pytest.raises(LinkError, match="lang='fr'.*en, zh"):
        parse_link({"lang": "fr"}, SCENARIOS)


def test_switching_language_sends_the_frames_again_in_it():
    lab = Lab(RunInputs.from_scenario(SCENARIOS["02_preemption"], "fake"))
    lab.run(3)
    feed = Feed(lang="en")
    english = feed.message(lab, {})
    assert english["frames"][1]["narration"][0].startswith("Step 1 ran a prefill batch")
    feed.use_language("zh")
    chinese = feed.message(lab, {})
    assert chinese["run"] == english["run"] + 1 and chinese["from"] == 0 and chinese["lang"] == "zh"
    assert chinese["frames"][1]["narration"][0].startswith("第 1 步运行了一个预填充批次")
    assert chinese["strings"]["step_name"] == "单步"


def test_the_offline_animation_speaks_the_language_asked_for():
    engine = SCENARIOS["02_preemption"].engine()
    engine.run(3)
    page = animation_html([("run", engine.frames)], "标题", lang="zh")
    assert page.startswith("<!DOCTYPE html><html lang='zh'>")
    runs = json.loads(page.split("const RUNS = ")[1].split(";\n")[0])
    assert runs[0]["strings"]["step_name"] == "单步" and runs[0]["model"] == "录制的运行"
    assert runs[0]["frames"][1]["narration"][0].startswith("第 1 步运行了一个预填充批次")
