"""An assignment in a class, in headless Chromium (`streamlit run app.py`, fake model): the lecturer opens assignment
1 and starts a class; two students follow, break away, and work on it: Ada (English) frees the VIP with the
priority queue and passes, Li (Chinese) runs it as set and fails; both hand in under the names they gave the class,
and the lecturer's page, woken by each, shows both by name with every goal's verdict. Screenshots of each student's
panel and of the lecturer's view at 1280x720, in both languages, go to artifacts/."""

import re

from tests.helpers.browser import ARTIFACTS, NEEDS_CHROMIUM
from tests.helpers.browser_class import (  # noqa: F401 (browser: a fixture)
    WAIT_MS,
    browser,
    choose,
    named,
    opened,
    shoot,
    sidebar,
    start_class,
    switch_language,
)

pytestmark = NEEDS_CHROMIUM
VIP = "assignment_1_vip_deadline"


def work(page, words: dict[str, str]):
    """A student's run to the end, handed in under their name (`words`: the buttons in the page's language)."""
    page.get_by_role("button", name=words["run"]).click()
    page.get_by_text(words["ended"]).wait_for(timeout=WAIT_MS)
    page.get_by_role("button", name=words["submit"]).click()
    page.get_by_text(words["sent"]).wait_for(timeout=WAIT_MS)


def test_one_student_passes_another_fails_and_the_lecturer_sees_both_by_name(fake_server, browser):  # noqa: F811
    ARTIFACTS.mkdir(exist_ok=True)
    lecturer, code = start_class(browser, fake_server, VIP)
    ada, li = (opened(browser, f"{fake_server}/?class={code}{lang}") for lang in ("", "&lang=zh"))
    named(ada, "Ada", ("Your name", "Use this name"))
    named(li, "李雷", ("你的名字", "使用这个名字"))
    lecturer.get_by_text(re.compile(r"2 students named, 2 tabs open, 2 students following you")).wait_for(
        timeout=WAIT_MS)
    for page, break_away in ((ada, "Break away"), (li, "自行探索")):
        page.get_by_role("button", name=break_away).click()
    ada.get_by_role("button", name="Follow again").wait_for(timeout=WAIT_MS)

    sidebar(ada).get_by_text("Scheduler settings", exact=True).click()
    sidebar(ada).get_by_text(re.compile("Locked by this scenario's assignment")).filter(visible=True).wait_for(
        timeout=WAIT_MS)
    queue_policy = sidebar(ada).locator("[data-testid=stSelectbox]").filter(has_text="queue policy")
    choose(ada, queue_policy, "priority", "From step 1: queue policy priority (was fcfs).")
    work(ada, {"run": "Run to the end", "ended": "Assignment passed: every goal met.",
               "submit": "Submit to the lecturer", "sent": "Submitted as Ada"})
    work(li, {"run": "运行到结束", "ended": "作业未通过：2 个目标中达成 1 个。", "submit": "提交给讲师",
              "sent": "已以李雷的名义"})

    lecturer.get_by_text("Submissions: 2 students, 1 passed").wait_for(timeout=WAIT_MS)  # woken by each hand-in
    rows = lecturer.locator("[data-testid=stTable]").last.locator("tbody tr").all_inner_texts()  # not the roster
    assert len(rows) == 2 and rows[0].startswith("Ada") and rows[1].startswith("李雷")
    assert "✓ yes" in rows[0] and "✗ no" in rows[1]
    assert "Request 3 finished at step 12, by step 20." in rows[0]
    assert "Request 3 finished at step 29, after step 20." in rows[1]  # in the lecturer's language

    shoot(ada, "Assignment passed: every goal met.", "assignment_student_pass_en_1280x720.png")
    shoot(li, "作业未通过", "assignment_student_fail_zh_1280x720.png")
    shoot(lecturer, "Submissions: 2 students, 1 passed", "assignment_lecturer_en_1280x720.png")
    switch_language(lecturer, "中文", "提交：2 名学生，1 名通过")
    shoot(lecturer, "提交：2 名学生，1 名通过", "assignment_lecturer_zh_1280x720.png")
    switch_language(ada, "中文", "作业通过：所有目标都已达成。")
    shoot(ada, "作业通过：所有目标都已达成。", "assignment_student_pass_zh_1280x720.png")
    switch_language(li, "English", "Assignment not passed: 1 of 2 goals met.")
    shoot(li, "Assignment not passed: 1 of 2 goals met.", "assignment_student_fail_en_1280x720.png")
