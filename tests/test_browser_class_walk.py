"""A whole class in headless Chromium as its people use it (`streamlit run serve.py`, fake model, 1280x720, issue
47's four parts together): the lecturer starts a class on an assignment and caps its names at three; two students
type their names (one in Chinese), a third squats "Bob Jones" before the roster, a look-alike and a fourth name are
refused; the lecturer gives a roster, Bob's personal link names him (no word about an unknown link parameter) and the
squatter is told; the lecturer frees Alice's name, which gets a personal code she types. A question is opened at a
frame, three students answer, a second tab of Alice's browser breaks away and her first tab can answer no more; the
lecturer reveals. Wang hands the assignment in; both CSVs hold the right rows, the gradebook's link under the class's
address. A second device leads with the secret, is revoked (its reload is a student's page), the secret is rotated,
the lecturer's reload keeps the desk; the class ends, the sidebar says so and the exports stay until Close.
Screenshots of each part, in both languages, go to artifacts/."""

import csv
import re
from urllib.parse import parse_qs, urlsplit

import pytest

from bench.browser import chromium as started_chromium
from tests.helpers.browser import ARTIFACTS, NEEDS_CHROMIUM, PLAYER, settled, wait_for_frame
from tests.helpers.browser_class import downloaded
from tools.app_server import app_server

WAIT_MS = 30_000
VIP = "assignment_1_vip_deadline"
EN, ZH = ("Your name", "Use this name"), ("你的名字", "使用这个名字")

pytestmark = [pytest.mark.slow, *NEEDS_CHROMIUM]


@pytest.fixture(scope="module")
def chromium():
    with started_chromium() as browser:
        yield browser


def sidebar(page):
    return page.locator("[data-testid=stSidebar]")


def browser_of(chromium):
    """A person's own browser (its cookie: who they are in the class)."""
    return chromium.new_context(viewport={"width": 1280, "height": 720})


def opened(context, address: str):
    page = context.new_page()
    page.goto(address)
    page.wait_for_selector(PLAYER, timeout=WAIT_MS)
    return page


def typed(page, text: str, words=EN):
    """`text` in the class's name box (a roster class's: a personal code), sent."""
    page.get_by_role("textbox", name=re.compile(f"^{words[0]}")).fill(text)
    page.get_by_role("button", name=words[1]).click()


def shoot(page, file: str, anchor=None):
    if anchor is not None:
        anchor.scroll_into_view_if_needed(timeout=WAIT_MS)
    settled(page)
    page.screenshot(path=ARTIFACTS / file)


def popover(page, button: str, scope=None):
    """The popover the button of that name opens (in `scope`: the sidebar, say), opened."""
    (scope or page).get_by_role("button", name=button).click()
    body = page.locator("[data-testid=stPopoverBody]").filter(visible=True)
    body.wait_for(timeout=WAIT_MS)
    return body


def one_line(page, text: str) -> bool:
    """Whether the last table cell showing `text` (the submissions', below the roster's) draws it on one line."""
    return page.evaluate("""text => { const cell = [...document.querySelectorAll('[data-testid=stTable] td, '
      + '[data-testid=stTable] th')].filter(c => c.innerText.trim() === text).pop();
      const range = document.createRange(); range.selectNodeContents(cell);
      const tops = [...range.getClientRects()].map(r => r.top);
      return tops.length > 0 && Math.max(...tops) - Math.min(...tops) < 10; }""",
                         text)


def test_a_class_from_start_to_end_with_names_a_roster_a_question_a_hand_in_devices_and_the_end(chromium):
    ARTIFACTS.mkdir(exist_ok=True)
    with app_server("fake") as (url, _process):
        lecturer = opened(browser_of(chromium), f"{url}/?scenario={VIP}")
        sidebar(lecturer).get_by_text("Class", exact=True).click()
        lecturer.get_by_role("button", name="Start a class").click()
        code_line = lecturer.get_by_text(re.compile(r"^Class code: "))
        code_line.wait_for(timeout=WAIT_MS)
        code = code_line.inner_text().split(": ")[1].strip()
        cap = sidebar(lecturer).get_by_role("spinbutton", name=re.compile("^Names this class takes"))
        cap.fill("3")
        cap.press("Enter")
        lecturer.wait_for_timeout(1000)
        link = f"{url}/?class={code}"

        alice_browser = browser_of(chromium)
        alice = opened(alice_browser, link)
        typed(alice, "Alice Smith")
        alice.get_by_text("You are Alice Smith in this class.").wait_for(timeout=WAIT_MS)
        wang = opened(browser_of(chromium), f"{link}&lang=zh")
        typed(wang, "王小明", ZH)
        wang.get_by_text("你在这堂课中的名字是 王小明。").wait_for(timeout=WAIT_MS)
        squatter = opened(browser_of(chromium), link)
        typed(squatter, "Bob Jones")
        squatter.get_by_text("You are Bob Jones in this class.").wait_for(timeout=WAIT_MS)
        mallory = opened(browser_of(chromium), link)
        typed(mallory, "AIice Smith")  # a capital I for the l
        mallory.get_by_text(re.compile("^Alice Smith is already in this class, from another browser")).wait_for(
            timeout=WAIT_MS)
        typed(mallory, "Eve Adams")  # a fourth name: the lecturer expects three
        mallory.get_by_text(re.compile(r"^This class takes no more names \(its lecturer expects 3\): ask")).wait_for(
            timeout=WAIT_MS)
        shoot(mallory, "class_walk_name_refused_en_1280x720.png")
        mallory.context.close()

        roster = popover(lecturer, "Roster and personal links", sidebar(lecturer))
        roster.get_by_role("textbox", name="Names").fill("Bob Jones\nCarol Wu")
        roster.get_by_role("button", name="Give each a personal link").click()
        with lecturer.expect_download() as download:
            roster.get_by_role("button", name="Export the personal links (CSV)").click()
        with open(download.value.path(), encoding="utf-8-sig") as f:
            links = {row["name"]: row["link"] for row in csv.DictReader(f)}
        assert list(links) == ["Bob Jones", "Carol Wu"] and links["Bob Jones"].startswith(f"{link}&me=")
        lecturer.keyboard.press("Escape")
        bob = opened(browser_of(chromium), links["Bob Jones"])
        bob.get_by_text("You are Bob Jones in this class.").wait_for(timeout=WAIT_MS)
        assert bob.get_by_text(re.compile("parameter .me. is not one schedlab knows")).count() == 0
        assert "me" not in parse_qs(urlsplit(bob.url).query)  # the personal code leaves the address bar
        squatter.reload()
        squatter.get_by_text(re.compile("^The lecturer's roster gives Bob Jones to the student who opened")).wait_for(
            timeout=WAIT_MS)
        squatter.get_by_role("button", name="Use this code").wait_for(timeout=WAIT_MS)  # a code, not a name
        shoot(squatter, "class_walk_squatter_told_en_1280x720.png")

        lecturer.locator("[data-testid=stExpander] summary").filter(has_text="Roster: ").click()
        names = popover(lecturer, "Free or remove a name")
        names.get_by_role("combobox").click()
        lecturer.get_by_role("option", name="Alice Smith").click()
        names.get_by_role("button", name="Free it").click()
        freed = names.get_by_text(re.compile("^Alice Smith's new personal code: ")).inner_text()
        new_code = freed.split(": ")[1].split()[0]
        shoot(lecturer, "class_walk_name_freed_en_1280x720.png")
        lecturer.keyboard.press("Escape")
        alice.get_by_text(re.compile("^The lecturer freed the name Alice Smith from this browser: this class takes "
                                     "names from its roster only")).wait_for(timeout=WAIT_MS)
        typed(alice, new_code, ("Your personal code", "Use this code"))
        alice.get_by_text("You are Alice Smith in this class.").wait_for(timeout=WAIT_MS)

        lecturer.get_by_text("Predict, then reveal").click()
        question = lecturer.get_by_text(re.compile(r"^\d+ of \d+ named students following have answered"))
        question.wait_for(timeout=WAIT_MS)
        for page, send in ((alice, "Send my answer"), (wang, "提交我的答案"), (bob, "Send my answer")):
            page.get_by_role("button", name=send).wait_for(timeout=WAIT_MS)
            page.locator("[data-testid=stRadio]").last.locator("[role=radiogroup] label").first.click()
            page.get_by_role("button", name=send).click()
        lecturer.get_by_text("3 of 3 named students following have answered.").wait_for(timeout=WAIT_MS)
        second_tab = opened(alice_browser, link)  # Alice's second tab breaks away and could look ahead
        second_tab.get_by_role("button", name="Break away").click()
        second_tab.get_by_role("button", name="Follow again").wait_for(timeout=WAIT_MS)
        alice.reload()  # her first tab: no answer to change now, and told why
        alice.get_by_text(re.compile("^A tab of this browser is on its own, broke away while this question was "
                                     "open")).first.wait_for(timeout=WAIT_MS)
        assert alice.get_by_role("button", name="Send my answer").count() == 0
        shoot(alice, "class_walk_vote_closed_en_1280x720.png",
              alice.get_by_text(re.compile("^A tab of this browser")).last)
        counts = lecturer.locator("[data-testid=stMain] li").filter(has_text=re.compile(r": \d+$")).all_inner_texts()
        assert [int(c.rsplit(": ", 1)[1]) for c in counts][:2] == [3, 0]  # her first answer, as sent
        shoot(lecturer, "class_walk_tally_en_1280x720.png", question)
        lecturer.get_by_role("button", name="Reveal for everyone").click()
        wang.get_by_text(re.compile(r"^(答对了|不太对)：答案是")).wait_for(timeout=WAIT_MS)

        wang.get_by_role("button", name="自行探索").click()
        wang.get_by_role("button", name="运行到结束").click()
        wang.get_by_role("button", name="提交给讲师").click()
        wang.get_by_text(re.compile("^已以王小明的名义")).wait_for(timeout=WAIT_MS)
        shoot(wang, "class_walk_handed_in_zh_1280x720.png", wang.get_by_text(re.compile("^已以王小明的名义")))
        submissions = lecturer.get_by_text("Submissions: 1 student, 0 passed")
        submissions.wait_for(timeout=WAIT_MS)
        shoot(lecturer, "class_walk_submissions_en_1280x720.png", submissions)
        assert one_line(lecturer, "王小明")  # beside the verdicts' long words, not broken into lines
        predictions = downloaded(lecturer, "Export the class's predictions (CSV)")
        asked = [row for row in predictions if row["answered"] != "0"]
        assert {row["step"] for row in asked} == {"3"} and {row["answered"] for row in asked} == {"3"}
        assert sum(int(row["count"]) for row in asked) == 3 and sum(int(row["revealed"]) for row in asked) == 4
        gradebook = {row["name"]: row for row in downloaded(lecturer, "Export the gradebook (CSV)")}
        assert sorted(gradebook) == ["Alice Smith", "Bob Jones", "Carol Wu", "王小明"]
        handed = gradebook["王小明"]
        assert handed[f"{VIP}_passed"] == "0" and handed[f"{VIP}_link"].startswith(f"{url}/?scenario={VIP}&")

        sidebar(lecturer).get_by_text("Show the class's lecturer secret").click()
        sidebar(lecturer).get_by_text(re.compile("^To lead from another device")).wait_for(timeout=WAIT_MS)
        secret = sidebar(lecturer).locator("pre code").nth(1).inner_text().strip()  # below the students' link
        sidebar(lecturer).get_by_text("Show the class's lecturer secret").click()
        other = opened(browser_of(chromium), f"{url}/")
        sidebar(other).get_by_text("Class", exact=True).click()
        sidebar(other).get_by_role("textbox", name="Class code").fill(code)
        sidebar(other).get_by_role("textbox", name=re.compile("^Lecturer's secret")).fill(secret)
        sidebar(other).get_by_role("button", name="Join the class").click()
        other.get_by_text(re.compile(f"^You lead class {code}")).wait_for(timeout=WAIT_MS)
        devices = popover(lecturer, "Lecturer devices (2)", sidebar(lecturer))
        devices.get_by_text("(gave the secret)", exact=False).wait_for(timeout=WAIT_MS)
        shoot(lecturer, "class_walk_devices_en_1280x720.png")
        devices.get_by_role("button", name="Revoke").click()
        sidebar(lecturer).get_by_role("button", name="Lecturer devices (1)").wait_for(timeout=WAIT_MS)
        lecturer.keyboard.press("Escape")
        other.reload()
        other.wait_for_selector(PLAYER, timeout=WAIT_MS)
        other.get_by_role("button", name="Break away").wait_for(timeout=WAIT_MS)  # a student's page now
        assert other.get_by_text(re.compile("^You lead class")).count() == 0
        devices = popover(lecturer, "Lecturer devices (1)", sidebar(lecturer))
        devices.get_by_role("button", name="Rotate the secret").click()
        lecturer.get_by_text("The class has a new secret: only this device leads it now.").wait_for(timeout=WAIT_MS)
        lecturer.keyboard.press("Escape")
        frame = int(lecturer.locator(PLAYER).get_attribute("data-frame"))
        lecturer.reload()  # the rotated token's cookie: still the lecturer, on the same frame
        lecturer.get_by_text(re.compile(f"^You lead class {code}: 4 students named")).wait_for(timeout=WAIT_MS)
        wait_for_frame(lecturer, frame)

        sidebar(lecturer).get_by_text("中文").click()
        desk = lecturer.get_by_text(re.compile(f"^你在带领课堂 {code}：4 名学生已署名"))
        desk.wait_for(timeout=WAIT_MS)
        shoot(lecturer, "class_walk_desk_zh_1280x720.png", desk)
        popover(lecturer, "结束这堂课").get_by_role("button", name="现在结束").click()
        ended = sidebar(lecturer).get_by_text(f"课堂 {code} 已结束。", exact=False)
        ended.wait_for(timeout=WAIT_MS)
        shoot(lecturer, "class_walk_ended_zh_1280x720.png", ended)
        alice.get_by_text(f"Class {code} has ended.").wait_for(timeout=WAIT_MS)
        sidebar(lecturer).get_by_text("English").click()
        sidebar(lecturer).get_by_text(re.compile(f"^Class {code} has ended. What it had is kept here")).wait_for(
            timeout=WAIT_MS)
        kept = {row["name"]: row for row in downloaded(lecturer, "Export the gradebook (CSV)")}
        assert kept["王小明"] == handed  # as before the end
        assert downloaded(lecturer, "Export the class's predictions (CSV)") == predictions
        sidebar(lecturer).get_by_role("button", name="Close").click()
        sidebar(lecturer).get_by_text(re.compile(f"^Class {code} has ended.")).wait_for(state="detached",
                                                                                        timeout=WAIT_MS)
        assert sidebar(lecturer).get_by_role("button", name="Export the gradebook (CSV)").count() == 0
