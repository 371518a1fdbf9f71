"""A class in headless Chromium (`streamlit run app.py`, fake model): a lecturer starts a class, three students,
each in a browser of their own, open its link (one in Chinese, one on a projector), name themselves (in three
scripts), follow the lecturer's scenario and steps, one breaks away and comes back, and the class answers a
prediction: a follower's stage goes no further than the lecturer's while it is open, the lecturer tallies, reveals
and keeps the counts. A student's reload keeps their name and a look-alike name from another browser is refused; a
closed tab leaves the roster within 10 s; the lecturer's reload keeps the lectern. Screenshots of the lecturer's
roster and controls at 1280x720 and 1920x1080 and of a follower's view, in both languages, go to artifacts/.
Names and the lecturer's things: two students whose names look alike but are not the same both join, and a
look-alike of one is refused; a follower's page tries the predictions switch while the lecturer's predictions are off
and the class is asked nothing (the lecturer's export holds its header alone); the lecturer removes a name from the
desk and its student is told (screenshots of the desk's roster and its free-or-remove control, in both languages)."""

import csv
import io
import os
import re

import pytest

from render.chromium import CHROMIUM, CHROMIUM_ARGS
from tests.helpers.browser import ARTIFACTS, PLAYER, settled, stays_on_frame, wait_for_frame
from tools.app_server import app_server

WAIT_MS = 30_000

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not os.path.exists(CHROMIUM), reason=f"{CHROMIUM} is not installed (Debian chromium)")]


@pytest.fixture(scope="module")
def browser():
    """(the server's address, Chromium): each person of a class opens their own context, a browser of their own
    (its cookies: who they are in the class)."""
    from playwright.sync_api import sync_playwright

    with app_server("fake") as (url, _process), sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield url, chromium
        finally:
            chromium.close()


def person(chromium, width: int = 1280, height: int = 720):
    """A page in a browser of its own."""
    return chromium.new_context(viewport={"width": width, "height": height}).new_page()


def shown(page) -> int:
    return int(page.locator(PLAYER).get_attribute("data-frame"))


def title(page) -> str:
    return page.locator(f"{PLAYER} .sp-title").inner_text()


def step(page, times: int = 1):
    for _ in range(times):
        page.locator(f"{PLAYER} [data-action=step]").click()


def start_class(chromium, url: str):
    """The lecturer's page on preset 02, a class started in the sidebar: (page, code)."""
    page = person(chromium)
    page.goto(f"{url}/?scenario=02_preemption")
    wait_for_frame(page, 0)
    page.locator("[data-testid=stSidebar]").get_by_text("Class", exact=True).click()
    page.get_by_role("button", name="Start a class").click()
    code_line = page.get_by_text(re.compile(r"^Class code: "))
    code_line.wait_for(timeout=WAIT_MS)
    code = code_line.inner_text().split(": ")[1].strip()
    assert re.fullmatch(r"[A-Z2-9]{5}", code)
    assert "key=" not in page.url and f"class={code}" in page.url  # a projected address bar holds no secret
    return page, code


def join(chromium, url: str, code: str, query: str = "", name: str | None = None, words=("Your name", "Use this name")):
    """A student's page on the class's link, in a browser of its own, named `name` (`words`: the name box's and its
    button's words in the page's language)."""
    page = person(chromium)
    page.goto(f"{url}/?class={code}{query}")
    page.wait_for_selector(PLAYER, timeout=WAIT_MS)
    if name is not None:
        page.get_by_role("textbox", name=re.compile(f"^{words[0]}")).fill(name)
        page.get_by_role("button", name=words[1]).click()
        page.get_by_text(re.compile(r"(You are .* in this class|你在这堂课中的名字是 )")).wait_for(timeout=WAIT_MS)
    return page


def open_roster(page):
    page.locator("[data-testid=stExpander] summary").filter(has_text=re.compile("Roster: |名单：")).first.click()
    settled(page)  # the expander opens with an animation


def test_named_students_follow_answer_once_and_the_lecturer_keeps_the_class(browser):
    url, chromium = browser
    ARTIFACTS.mkdir(exist_ok=True)
    lecturer, code = start_class(chromium, url)
    en = join(chromium, url, code, name="Alice Smith")
    zh = join(chromium, url, code, "&lang=zh", "王小明", ("你的名字", "使用这个名字"))
    projector = join(chromium, url, code, "&present=1", "प्रिया शर्मा")
    students = [en, zh, projector]
    lecturer.get_by_text(re.compile(r"3 students named, 3 tabs open, 3 students following you")).wait_for(
        timeout=WAIT_MS)
    step(lecturer, 3)
    wait_for_frame(lecturer, 3)
    for page in students:
        wait_for_frame(page, 3)
    assert "preempt" in title(en).lower() and title(en) == title(lecturer)
    assert "抢占" in title(zh)  # the lecturer's scenario, in the student's own language
    assert "class=" in en.url and "key=" not in en.url  # a student never holds the lecturer's secret
    assert en.get_by_text(f"Following the lecturer (class {code})").count() == 1
    assert projector.get_by_text("You are प्रिया शर्मा in this class.").count() == 1  # its marks kept

    en.reload()  # F5: the same browser, the same student
    en.get_by_text("You are Alice Smith in this class.").wait_for(timeout=WAIT_MS)
    wait_for_frame(en, 3)
    mallory = join(chromium, url, code, name=None)
    mallory.get_by_role("textbox", name=re.compile("^Your name")).fill("alice smith")
    mallory.get_by_role("button", name="Use this name").click()
    mallory.get_by_text(re.compile("^Alice Smith is already in this class, from another browser")).wait_for(
        timeout=WAIT_MS)
    lecturer.get_by_text(re.compile(r"3 students named, 4 tabs open")).wait_for(timeout=WAIT_MS)
    mallory.context.close()  # a closed tab leaves the roster within 10 s (the desk is redrawn every 5 s)
    lecturer.get_by_text(re.compile(r"3 students named, 3 tabs open")).wait_for(timeout=12_000)

    en.get_by_role("button", name="Break away").click()
    en.get_by_role("button", name="Follow again").wait_for(timeout=WAIT_MS)
    step(en, 1)
    wait_for_frame(en, 4)
    step(lecturer, 3)
    for page in (zh, projector):
        wait_for_frame(page, 6)
    stays_on_frame(en, 4, 1500, "a student on their own stays where they are while the lecturer steps")
    lecturer.get_by_role("button", name="Bring everyone back").click()
    wait_for_frame(en, 6)
    en.get_by_role("button", name="Break away").wait_for(timeout=WAIT_MS)

    lecturer.get_by_text("Predict, then reveal").click()
    for page, send in ((en, "Send my answer"), (zh, "提交我的答案"), (projector, "Send my answer")):
        page.get_by_role("button", name=send).wait_for(timeout=WAIT_MS)
    step(en, 2)  # a follower tries to look ahead: the stage waits, saying why
    step(zh, 1)
    note = en.get_by_text(re.compile("^The class is answering a question about the next step"))
    note.wait_for(timeout=WAIT_MS)
    zh.get_by_text(re.compile("^全班正在回答关于下一步的问题")).wait_for(timeout=WAIT_MS)
    assert shown(en) == 6 and shown(zh) == 6
    en.mouse.wheel(0, -5000), zh.mouse.wheel(0, -5000)
    en.screenshot(path=ARTIFACTS / "class_follower_waiting_en_1280x720.png")
    zh.screenshot(path=ARTIFACTS / "class_follower_waiting_zh_1280x720.png")
    for page, send in ((en, "Send my answer"), (zh, "提交我的答案"), (projector, "Send my answer")):
        page.locator("[data-testid=stRadio]").last.locator("[role=radiogroup] label").first.click()
        page.get_by_role("button", name=send).click()
    lecturer.get_by_text("3 of 3 named students following have answered.").wait_for(timeout=WAIT_MS)
    counts = lecturer.locator("[data-testid=stMain] li").filter(has_text=re.compile(r": \d+$")).all_inner_texts()
    assert sum(int(c.rsplit(": ", 1)[1]) for c in counts) == 3 and counts[0].endswith(": 3")
    zh.screenshot(path=ARTIFACTS / "class_follower_zh_1280x720.png")
    projector.screenshot(path=ARTIFACTS / "class_follower_projector_1280x720.png")
    lecturer.mouse.wheel(0, -5000)
    open_roster(lecturer)
    lecturer.locator("[data-testid=stExpander] [data-testid=stTable]").first.wait_for(timeout=WAIT_MS)
    roster = lecturer.locator("[data-testid=stExpander] [data-testid=stTable] tbody tr").all_inner_texts()
    assert [row.split("\t")[0].strip() for row in roster] == ["Alice Smith", "प्रिया शर्मा", "王小明"]  # by name's key
    lecturer.screenshot(path=ARTIFACTS / "class_lecturer_roster_en_1280x720.png")
    lecturer.set_viewport_size({"width": 1920, "height": 1080})
    settled(lecturer)
    lecturer.screenshot(path=ARTIFACTS / "class_lecturer_roster_en_1920x1080.png")
    lecturer.locator("[data-testid=stSidebar]").get_by_text("中文").click()  # the lecturer's words, not the class's
    lecturer.get_by_text("正在跟随的 3 名已署名学生中已有 3 名作答。").wait_for(timeout=WAIT_MS)
    lecturer.mouse.wheel(0, -5000)
    open_roster(lecturer)  # its title is in the other language now: a new expander, closed
    lecturer.locator("[data-testid=stExpander] [data-testid=stTable]").first.wait_for(timeout=WAIT_MS)
    lecturer.screenshot(path=ARTIFACTS / "class_lecturer_roster_zh_1920x1080.png")
    lecturer.set_viewport_size({"width": 1280, "height": 720})
    settled(lecturer)
    lecturer.screenshot(path=ARTIFACTS / "class_lecturer_roster_zh_1280x720.png")
    lecturer.get_by_text("正在跟随的 3 名已署名学生中已有 3 名作答。").scroll_into_view_if_needed()
    lecturer.screenshot(path=ARTIFACTS / "class_lecturer_zh_1280x720.png")
    lecturer.get_by_role("button", name="向全班揭晓").click()
    for page in (en, projector):
        page.get_by_text(re.compile(r"^(Right|Not quite): the answer is")).wait_for(timeout=WAIT_MS)
    zh.get_by_text(re.compile(r"^(答对了|不太对)：答案是")).wait_for(timeout=WAIT_MS)
    wait_for_frame(en, lecturer_frame := shown(lecturer))  # the reveal took the class to the step asked about
    assert lecturer_frame > 6
    en.screenshot(path=ARTIFACTS / "class_follower_en_1280x720.png")
    revealed = lecturer.locator("[data-testid=stMain] li").filter(has_text="✅")
    revealed.first.wait_for(timeout=WAIT_MS)  # the counts stay beside the answer
    lecturer.locator("[data-testid=stSidebar]").get_by_text("English").click()
    lecturer.get_by_text(re.compile(f"You lead class {code}")).wait_for(timeout=WAIT_MS)
    revealed.first.scroll_into_view_if_needed()
    lecturer.screenshot(path=ARTIFACTS / "class_lecturer_revealed_en_1280x720.png")

    lecturer.reload()  # the lecturer's F5: still the lecturer, on the same frame; the class stays there
    lecturer.get_by_text(re.compile(f"You lead class {code}")).wait_for(timeout=WAIT_MS)
    wait_for_frame(lecturer, lecturer_frame)
    for page in students:
        stays_on_frame(page, lecturer_frame, 500, "the class stays on the lecturer's frame through their reload")


def playing(page) -> bool:
    return page.evaluate(f"() => document.querySelector('{PLAYER}').player.playing")


def test_students_play_along_while_the_lecturer_plays_and_land_on_the_lecturers_frame_at_the_pause(browser):
    url, chromium = browser
    ARTIFACTS.mkdir(exist_ok=True)
    lecturer, code = start_class(chromium, url)
    students = [join(chromium, url, code), join(chromium, url, code, "&lang=zh")]
    lecturer.get_by_text(re.compile(r"2 tabs open, 2 students following you")).wait_for(timeout=WAIT_MS)
    lecturer.locator(f"{PLAYER} .sp-speed").select_option("1")  # 20 frames: time to look before the run ends
    lecturer.locator(f"{PLAYER} [data-action=play]").click()
    for page in students:  # each plays by itself, at the lecturer's speed: frames pass with no step of the lecturer
        page.wait_for_function(f"() => {{ const p = document.querySelector('{PLAYER}').player; "
                               "return p.playing && p.shown >= 3; }", timeout=WAIT_MS)
    assert playing(lecturer) and abs(shown(students[0]) - shown(lecturer)) <= 2
    assert students[0].locator(f"{PLAYER} .sp-speed").input_value() == "1"  # the lecturer's speed
    students[0].screenshot(path=ARTIFACTS / "class_follower_playing_en_1280x720.png")
    students[1].screenshot(path=ARTIFACTS / "class_follower_playing_zh_1280x720.png")
    lecturer.screenshot(path=ARTIFACTS / "class_lecturer_playing_en_1280x720.png")
    assert playing(lecturer)
    lecturer.locator(f"{PLAYER} [data-action=play]").click()  # Pause
    paused_at = shown(lecturer)
    assert not playing(lecturer) and paused_at < 20
    for page in students:
        wait_for_frame(page, paused_at)
        page.wait_for_function(f"() => !document.querySelector('{PLAYER}').player.playing", timeout=WAIT_MS)
    for page in students:  # they stay there, stopped
        stays_on_frame(page, paused_at, 500, "a student stays on the frame the lecturer paused on")
    step(lecturer, 2)  # a step after the pause still leads the class
    for page in students:
        wait_for_frame(page, paused_at + 2)
    lecturer.locator("[data-testid=stSidebar]").get_by_text("中文").click()  # the lecturer's words, not the class's
    lecturer.get_by_text(re.compile(f"你在带领课堂 {code}")).wait_for(timeout=WAIT_MS)
    lecturer.locator(f"{PLAYER} [data-action=play]").click()
    students[1].wait_for_function(f"() => {{ const p = document.querySelector('{PLAYER}').player; "
                                  f"return p.playing && p.shown >= {paused_at + 4}; }}", timeout=WAIT_MS)
    lecturer.screenshot(path=ARTIFACTS / "class_lecturer_playing_zh_1280x720.png")
    lecturer.locator(f"{PLAYER} [data-action=play]").click()


def test_under_a_base_path_the_students_link_points_at_the_lecturers_own_process(browser):
    """Several server processes behind one address, each under its own path (README, "Running a class"): the link
    the lecturer hands out is built from the lecturer's page address, so it leads to the process holding the class."""
    _url, chromium = browser
    with app_server("fake", base_path="p2") as (url, _process):
        try:
            lecturer, code = start_class(chromium, url)
            lecturer.locator("[data-testid=stSidebar] pre code").first.wait_for(timeout=WAIT_MS)
            links = lecturer.locator("[data-testid=stSidebar] pre code").all_inner_texts()
            assert url.endswith("/p2") and links[0].strip() == f"{url}/?class={code}"
            student = person(chromium)
            student.goto(links[0].strip())
            wait_for_frame(student, 0)
            step(lecturer, 2)
            wait_for_frame(student, 2)
            assert title(student) == title(lecturer)
        finally:
            for context in chromium.contexts:
                context.close()


def exported_predictions(lecturer) -> list[dict]:
    """The lecturer's predictions CSV, as the sidebar's button downloads it."""
    sidebar = lecturer.locator("[data-testid=stSidebar]")
    with lecturer.expect_download() as download:
        sidebar.get_by_role("button", name="Export the class's predictions (CSV)").click()
    with open(download.value.path(), encoding="utf-8-sig") as f:
        return list(csv.DictReader(io.StringIO(f.read())))


def test_look_alike_distinct_names_join_a_follower_cannot_switch_predictions_on_and_the_desk_removes_a_name(browser):
    url, chromium = browser
    ARTIFACTS.mkdir(exist_ok=True)
    lecturer, code = start_class(chromium, url)
    lia = join(chromium, url, code, name="Lia Chen")
    ila = join(chromium, url, code, name="Ila Chen")  # another student: a capital I, then l
    join(chromium, url, code, name="Ella Stone")
    join(chromium, url, code, name="Elia Stone")
    join(chromium, url, code, name="\u0410nna Lee")  # a Cyrillic А: spelled out on the desk
    mallory = join(chromium, url, code)
    mallory.get_by_role("textbox", name=re.compile("^Your name")).fill("lla Chen")  # two small Ls: Ila's look-alike
    mallory.get_by_role("button", name="Use this name").click()
    mallory.get_by_text(re.compile("^Ila Chen is already in this class, from another browser")).wait_for(
        timeout=WAIT_MS)
    mallory.context.close()

    switch = lia.get_by_role("switch", name="Predict, then reveal")
    assert switch.is_disabled()  # the lecturer's switch, shown
    lia.get_by_text("Predict, then reveal").click(force=True)  # tried all the same
    lia.wait_for_timeout(1500)
    assert not switch.is_checked() and lia.get_by_role("button", name="Send my answer").count() == 0
    lecturer.get_by_text("Class", exact=True).first.scroll_into_view_if_needed()
    assert exported_predictions(lecturer) == []  # no question asked: the header alone

    lecturer.get_by_text(re.compile(r"5 students named, 5 tabs open")).wait_for(timeout=WAIT_MS)
    lecturer.mouse.wheel(0, -5000)
    open_roster(lecturer)
    roster = lecturer.locator("[data-testid=stExpander] [data-testid=stTable] tbody tr").all_inner_texts()
    assert [row.split("\t")[0].strip() for row in roster] == [  # by name's skeleton: a look-alike beside its like
        "Аnna Lee (letters of other scripts: А U+0410)", "Elia Stone", "Ella Stone", "Ila Chen", "Lia Chen"]
    settled(lecturer)
    lecturer.screenshot(path=ARTIFACTS / "class_desk_roster_names_en_1280x720.png")
    lecturer.get_by_role("button", name="Free or remove a name").click()
    popover = lecturer.locator("[data-testid=stPopoverBody]")
    popover.get_by_role("combobox").click()
    lecturer.get_by_role("option", name="Ila Chen").click()
    settled(lecturer)
    lecturer.screenshot(path=ARTIFACTS / "class_desk_names_en_1280x720.png")
    popover.get_by_role("button", name="Remove from the class").click()
    lecturer.get_by_text("Ila Chen was removed from the class.").wait_for(timeout=WAIT_MS)
    ila.get_by_text(re.compile("^The lecturer removed Ila Chen from this class")).wait_for(timeout=WAIT_MS)

    lecturer.keyboard.press("Escape")
    lecturer.locator("[data-testid=stSidebar]").get_by_text("中文").click()
    lecturer.get_by_text(re.compile(r"4 名学生")).first.wait_for(timeout=WAIT_MS)
    lecturer.mouse.wheel(0, -5000)
    open_roster(lecturer)
    settled(lecturer)
    lecturer.screenshot(path=ARTIFACTS / "class_desk_roster_names_zh_1280x720.png")
    lecturer.get_by_role("button", name="释放或移除名字").click()
    lecturer.locator("[data-testid=stPopoverBody]").get_by_role("button", name="移出这堂课").wait_for(timeout=WAIT_MS)
    settled(lecturer)
    lecturer.screenshot(path=ARTIFACTS / "class_desk_names_zh_1280x720.png")
