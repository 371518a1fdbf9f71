"""Names and the lecturer's things in headless Chromium (`streamlit run app.py`, fake model): two students whose
names look alike but are not the same both join, and a look-alike of one is refused; a follower's page tries the
predictions switch while the lecturer's predictions are off and the class is asked nothing (the lecturer's export
holds its header alone); the lecturer removes a name from the desk and its student is told. Screenshots of the
desk's roster with the names and the free-or-remove control at 1280x720, in both languages, go to artifacts/."""

import csv
import io
import os
import re

import pytest

from render.chromium import CHROMIUM
from tests.helpers.browser import ARTIFACTS, settled
from tests.test_browser_class import WAIT_MS, browser, join, open_roster, start_class  # noqa: F401 (a fixture)

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not os.path.exists(CHROMIUM), reason=f"{CHROMIUM} is not installed (Debian chromium)")]


def exported_predictions(lecturer) -> list[dict]:
    """The lecturer's predictions CSV, as the sidebar's button downloads it."""
    sidebar = lecturer.locator("[data-testid=stSidebar]")
    with lecturer.expect_download() as download:
        sidebar.get_by_role("button", name="Export the class's predictions (CSV)").click()
    with open(download.value.path(), encoding="utf-8-sig") as f:
        return list(csv.DictReader(io.StringIO(f.read())))


def test_look_alike_distinct_names_join_a_follower_cannot_switch_predictions_on_and_the_desk_removes_a_name(
        browser):  # noqa: F811 (the class's server and Chromium, tests/test_browser_class.py)
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
    assert [row.split("\t")[0].strip() for row in roster] == [
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
