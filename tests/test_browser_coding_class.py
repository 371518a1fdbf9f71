"""A coding assignment in a class, in headless Chromium (`streamlit run app.py`, fake model, the real sandbox): the
lecturer sets the victim exercise on the smart-preemption preset from the form under the stage; the students see it
under theirs and go to the Workbench: Ada (English) opens the reference solution's file there, hands it in and
passes, 李雷 (Chinese) a block freed twice and fails; each Workbench shows the server's grade per goal; the lecturer's
table says so by name, the gradebook's link to Ada's hand-in is refused in words on 李雷's page, and the lecturer
opens Ada's code on the stage (the projector). Screenshots at 1280x720, in both languages, go to artifacts/."""

import re

from starters import BY_ID
from tests.helpers.browser import ARTIFACTS, NEEDS_CHROMIUM
from tests.helpers.browser_class import (  # noqa: F401 (browser: a fixture)
    WAIT_MS,
    browser,
    downloaded,
    named,
    opened,
    shoot,
    start_class,
    switch_language,
)
from tests.helpers.coding import SOLUTION_CLASS, SOLUTION_PATH, WORKLOAD

pytestmark = NEEDS_CHROMIUM
GRADE_MS = 120_000  # a hand-in's runs in the sandbox


def set_assignment(page):
    """The lecturer's form under the stage: the victim starter, one workload, the contract, a mean end-to-end
    latency below the article's scheduler's, no wait past 20 steps."""
    page.get_by_text("Set a coding assignment", exact=True).click()
    page.get_by_role("textbox", name="Name of the assignment").fill("Victim")
    for box, option in (("Workloads it is graded on", re.compile(f"^{WORKLOAD}: ")), ("Latency", "end-to-end latency"),
                        ("Statistic", "mean")):
        pick(page, box, option)
    page.get_by_role("spinbutton", name=re.compile("^No request waits more than")).fill("20")
    page.get_by_role("button", name="Set it").click()
    page.get_by_text("The coding assignment Victim is set").wait_for(timeout=WAIT_MS)


def pick(page, label: str, option):
    """`option` picked in the select or multiselect `label` (a rerun of the stage meanwhile may close its list)."""
    from playwright.sync_api import TimeoutError as NotYet

    field = page.get_by_role("combobox", name=label)
    for _ in range(5):
        try:
            opener = field.locator("..").get_by_role("button", name="Open")  # a select has one
            (opener if opener.count() else field).click(timeout=5_000)
            page.get_by_role("option", name=option, exact=isinstance(option, str)).click(timeout=5_000)
            page.keyboard.press("Escape")  # a multiselect's list stays open
            return
        except NotYet:
            page.keyboard.press("Escape")
    raise AssertionError(f"{option} could not be picked in {label}")


def hand_in(page, path, words: dict[str, str]):
    """On the Workbench (the assignment's link: the same session, in the class), the student's file opened in the
    editor (its class picked) and handed in; returns once the server's grade is shown there."""
    from playwright.sync_api import expect

    page.get_by_role("link", name=words["workbench"]).click()  # under the assignment, on the stepper
    page.get_by_role("button", name=words["hand_in"]).wait_for(timeout=WAIT_MS)  # the Workbench drawn to its end
    page.get_by_role("button", name=words["upload"]).click()
    page.locator("[data-testid=stFileUploaderDropzone]").wait_for(timeout=WAIT_MS)  # the popover drawn
    page.locator("[data-testid=stFileUploaderDropzoneInput]").set_input_files(path)
    expect(page.get_by_role("combobox", name=words["class"])).to_have_value(words["class_name"], timeout=WAIT_MS)
    page.keyboard.press("Escape")  # the popover closed once the file is the learner's
    page.get_by_role("button", name=words["hand_in"]).click()
    page.get_by_text(re.compile(words["graded"])).first.wait_for(timeout=GRADE_MS)


def test_a_lecturer_sets_a_coding_assignment_one_student_passes_one_fails(fake_server, browser):  # noqa: F811
    ARTIFACTS.mkdir(exist_ok=True)
    lecturer, code = start_class(browser, fake_server, WORKLOAD)
    set_assignment(lecturer)
    ada, li = (opened(browser, f"{fake_server}/?class={code}{lang}") for lang in ("", "&lang=zh"))
    named(ada, "Ada", ("Your name", "Use this name"))
    named(li, "李雷", ("你的名字", "使用这个名字"))
    ada.get_by_text("Coding assignment: Victim").wait_for(timeout=WAIT_MS)  # the task, under the stage
    hand_in(ada, SOLUTION_PATH, {"workbench": "Write your scheduler and hand it in on the Workbench",
                                 "upload": "Open a .py file",
                                 "class": "The scheduler class to run", "class_name": SOLUTION_CLASS,
                                 "hand_in": "Hand in the code", "graded": "^Graded at .*: Assignment passed"})
    hand_in(li, BY_ID["double_free"].path, {"workbench": "在工作台上编写你的调度器并提交", "upload": "打开 .py 文件",
                                            "class": "要运行的调度器类", "class_name": "DoubleFree",
                                            "hand_in": "提交代码", "graded": "评分：作业未通过"})
    assert "在第 8 步停止：" in li.locator("[data-testid=stMain]").inner_text()  # the invariant broken, at its step

    lecturer.get_by_text("Submissions: 2 students, 1 passed").wait_for(timeout=WAIT_MS)
    rows = lecturer.locator("[data-testid=stTable]").last.locator("tbody tr").all_inner_texts()
    assert len(rows) == 2 and rows[0].startswith("Ada") and rows[1].startswith("李雷")
    assert "✓ yes" in rows[0] and "✗ no" in rows[1] and "Stopped at step 8" in rows[1]
    shoot(ada, "Graded at", "coding_workbench_pass_en_1280x720.png")
    shoot(li, "评分：", "coding_workbench_fail_zh_1280x720.png")
    shoot(lecturer, "Submissions: 2 students, 1 passed", "coding_lecturer_en_1280x720.png")
    switch_language(lecturer, "中文", "提交：2 名学生，1 名通过")
    assert "在第 8 步停止" in lecturer.locator("[data-testid=stTable]").last.inner_text()  # in the lecturer's language
    shoot(lecturer, "提交：2 名学生，1 名通过", "coding_lecturer_zh_1280x720.png")
    switch_language(lecturer, "English", "Submissions: 2 students, 1 passed")

    links = {row["name"]: row["Victim_link"] for row in downloaded(lecturer, "Export the gradebook (CSV)")}
    assert [r for r in links] == ["Ada", "李雷"] and all(f"class={code}&submission=" in v for v in links.values())
    li.goto(links["Ada"])  # the link as the gradebook has it: in the app's default language
    li.get_by_text("This hand-in is another student's: only its author and the lecturer can open it.").wait_for(
        timeout=WAIT_MS)
    switch_language(li, "中文", "这是另一位学生的提交：只有它的作者和讲师可以打开。")
    shoot(li, "这是另一位学生的提交", "coding_link_refused_zh_1280x720.png")

    lecturer.get_by_role("button", name="Open on the stage").click()  # Ada's, the first: on the projector
    lecturer.get_by_text(f"Ada's code on {WORKLOAD}, as the server ran it in the sandbox (read-only).").wait_for(
        timeout=GRADE_MS)
    shoot(lecturer, "Ada's code on", "coding_lecturer_opened_en_1280x720.png")
