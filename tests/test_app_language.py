"""Both pages in both languages (AppTest): a link with lang=zh opens the stepper in Chinese (sidebar, story, the
player's words, narration and key-frame notes, charts), the sidebar's switch changes every word and keeps lang in
the URL, and the policy lab speaks the language chosen."""

import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.helpers.app import figures, no_errors, player_message, player_views

LAB_PAGE = str(Path(__file__).resolve().parents[1] / "app_pages" / "policy_lab.py")
CHINESE = re.compile(r"[\u4e00-\u9fff]")



def open_link(at: AppTest, **params) -> AppTest:
    for key, value in params.items():
        at.query_params[key] = value
    return at.run()


def test_a_chinese_link_opens_the_article_frame_in_chinese(app):
    open_link(app, lang="zh", scenario="article_2_preemption", frame="9")
    assert no_errors(app) and not app.warning
    assert app.radio(key="lang").value == "zh"
    assert app.selectbox(key="scenario_choice").label == "场景"
    assert any("笔记本" in m.value for m in app.sidebar.markdown)  # the story, in Chinese
    message = player_message(app)
    assert message["lang"] == "zh" and message["strings"]["step_name"] == "单步"
    assert message["title"].startswith("与文章一致：三个块下的抢占")
    note = next(note for step, note, _ in message["key_frames"] if step == 9)
    assert note.startswith("文章的第 9 帧")
    narration = player_views(app)[9]["narration"]
    assert narration[0] == "第 9 步运行了一个预填充批次，含 1 个请求（1 个 token）：3。"
    assert all(CHINESE.search(line) for line in narration)
    assert app.query_params["lang"] == "zh" and app.query_params["frame"] == "9"


def test_the_switch_changes_every_word_and_the_link_keeps_it(app):
    open_link(app, scenario="02_preemption", frame="3")
    english = player_message(app)
    assert english["lang"] == "en" and english["strings"]["step_name"] == "Step"
    assert "lang" not in app.query_params
    app.radio(key="lang").set_value("zh").run()
    assert no_errors(app)
    chinese = player_message(app)
    assert chinese["lang"] == "zh" and chinese["run"] > english["run"] and chinese["from"] == 0
    assert chinese["frames"][1]["narration"][0].startswith("第 1 步运行了一个预填充批次")
    assert app.query_params["lang"] == "zh" and app.query_params["frame"] == "3"
    app.segmented_control(key="lower_view").set_value("charts").run()
    titles = [f["layout"]["title"]["text"] for f in figures(app)]
    assert "队列长度与 KV 使用率" in titles and "请求时间线" in titles
    app.segmented_control(key="lower_view").set_value("metrics").run()
    assert "平均 TTFT" in list(app.dataframe[0].value[""])
    app.radio(key="lang").set_value("en").run()
    assert player_message(app)["strings"]["step_name"] == "Step" and "lang" not in app.query_params


def test_a_link_in_a_language_the_app_does_not_speak_says_what_to_fix(app):
    open_link(app, lang="fr", scenario="02_preemption")
    assert not app.exception
    assert any("lang='fr'" in w.value and "en, zh" in w.value for w in app.warning)


@pytest.mark.parametrize(("lang", "title", "heading", "metric", "verdict"),
                         [("en", "Policy lab: which", "What the numbers say", "metric", "- **first token**: "),
                          ("zh", "策略实验室：", "数字说明了什么", "指标", "- **首 token**：")])
def test_the_policy_lab_speaks_the_language_chosen(lang, title, heading, metric, verdict):
    at = AppTest.from_file(LAB_PAGE, default_timeout=60)
    at.query_params["lang"] = lang
    at.run()
    assert not at.exception and at.title[0].value.startswith(title)
    at.selectbox(key="workload_choice").select("02_preemption").run()
    at.selectbox(key="comparison").select("tail vs smart preemption").run()
    at.button(key="run").click().run()
    assert not at.exception and not at.error
    assert at.subheader[0].value.startswith(heading)
    assert any(m.value.startswith(verdict) for m in at.markdown)
    table = at.dataframe[0].value
    assert list(table.columns)[0] == metric and len(table.columns) == 3
    if lang == "zh":
        assert "平均 TTFT" in at.markdown[0].value or any("平均 TTFT" in m.value for m in at.markdown)
        assert at.info[0].value.startswith(("与 tail 抢占相比", "smart 抢占与 tail 抢占"))
