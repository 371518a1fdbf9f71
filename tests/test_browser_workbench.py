"""A learner on the Workbench in headless Chromium (1280x720, English and Chinese), as a new user works: the
smart-victim exercise typed into the editor at the keyboard over the starter's default, run on the preset where the
victim matters, its run on the stage; the double-free scheduler opened from its file, stopped at the frame where an
invariant broke, that invariant named; a syntax error marked at its line in the editor's gutter. Each learner's text
survives a language switch and a visit to another page. Screenshots go to artifacts/ for a person to look at; the
walk's time is written beside them (the issue's Done-when: the exercise in under ten minutes from the starter)."""

import re
import string
import time

import pytest

from engine.inputs.scenario import SCENARIOS_DIR, load_scenario
from i18n import CATALOGUES, LANGUAGES, text
from starters import BY_ID, source
from tests.helpers.browser import ARTIFACTS, NEEDS_CHROMIUM, PLAYER, scroll_to, settled

pytestmark = NEEDS_CHROMIUM

EDITOR = "[data-testid=schedlab-editor]"
# The exercise's answer as a learner types it in place of the starter's default (starters/smart_victim.py's rule)
ANSWER = ["        def lost_if_preempted(seq):",
          "            done = seq.num_completion_tokens / seq.sampling_params.max_tokens",
          "            return (done, -seq.priority, -seq.arrival)",
          "        return min(self.running, key=lost_if_preempted, default=None)"]
DEFAULT = "return self.running[-1] if self.running else None"  # the starter's line the answer replaces
PRESET = "07_smart_preemption"  # short requests at the running queue's tail when the KV cache runs out
LINE_INDENT = """(() => { const s = window.schedlabEditor.view.state;
  const line = s.doc.lineAt(s.selection.main.head).text; return line.length - line.trimStart().length; })()"""


def editor_text(page) -> str:
    return page.evaluate("window.schedlabEditor.view.state.doc.toString()")


def type_line(page, line: str):
    """`line` typed as a person does: its words, then the editor's indentation set right with Tab / Shift+Tab."""
    page.keyboard.type(line.strip(), delay=10)
    want = len(line) - len(line.lstrip())
    for _ in range(10):
        have = page.evaluate(LINE_INDENT)
        if have == want:
            return
        page.keyboard.press("Tab" if have < want else "Shift+Tab")
    raise AssertionError(f"could not indent {line!r} to {want}")


def open_workbench(browser, url: str, lang: str):
    page = browser.new_page()
    page.set_viewport_size({"width": 1280, "height": 720})
    page.goto(f"{url}/Workbench?lang={lang}")
    page.locator(EDITOR).wait_for(timeout=60_000)
    return page


def said_as(lang: str, key: str) -> tuple[re.Pattern, list[str]]:
    """The message `key` in `lang` with any values (a pattern Playwright can hand to the browser: plain groups), and
    its placeholders' names, in the order of the groups."""
    parsed = list(string.Formatter().parse(CATALOGUES[lang][key]))
    pattern = "".join(re.escape(literal) + (r"\s?(.+?)\s?" if name else "") for literal, name, _, _ in parsed)
    return re.compile(pattern, re.S), [name for _, name, _, _ in parsed if name]


def alert(page, said: re.Pattern | str):
    return page.locator("[data-testid=stAlert]").filter(has_text=said).first


def pick_preset(page, lang: str, name: str):
    """The preset `name` chosen in the Workbench's scenario box, by its title, as a person picks it."""
    title = load_scenario(SCENARIOS_DIR / f"{name}.toml").title_in(lang)
    box = page.get_by_role("combobox", name=text(lang, "sidebar.scenario"))
    box.click()
    page.keyboard.type(title[:20])  # the box filters its options as one types
    page.get_by_role("option").filter(has_text=title).first.click()
    page.wait_for_function("([label, title]) => [...document.querySelectorAll('input[role=combobox]')].some("
                           "box => box.getAttribute('aria-label') === label && box.value === title)",
                           arg=[text(lang, "sidebar.scenario"), title])


def run(page, lang: str, outcome: str) -> dict[str, str]:
    """Press Run (the click takes the focus from the editor, which sends its text) and wait for the message
    `outcome` (a message id); its values, by name."""
    page.get_by_role("button", name=text(lang, "workbench.run"), exact=True).click()
    pattern, names = said_as(lang, outcome)
    alert(page, pattern).wait_for(timeout=120_000)
    return dict(zip(names, pattern.search(alert(page, pattern).inner_text()).groups(), strict=True))


def shot(page, name: str, seen, block: str = "center"):
    """A screenshot with `seen` (a locator) amid the window (`block`: or "end", at its bottom), as the learner
    scrolls to it."""
    scroll_to(seen.first, block)
    settled(page)
    page.screenshot(path=str(ARTIFACTS / f"workbench_{name}.png"))


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_learner_writes_the_smart_victim_and_sees_it_on_the_stage(fake_server, browser, lang):
    ARTIFACTS.mkdir(exist_ok=True)
    started = time.monotonic()
    page = open_workbench(browser, fake_server, lang)
    exercise = BY_ID["victim"]
    assert page.get_by_text(text(lang, exercise.title)).count()  # the first starter, with its task beside it
    assert editor_text(page) == source(exercise)
    page.locator(".cm-line", has_text=DEFAULT).click()
    page.keyboard.press("End")
    page.keyboard.press("Shift+Home")  # the default's words (the line's indentation kept)
    for i, line in enumerate(ANSWER):
        if i:
            page.keyboard.press("Enter")
        type_line(page, line)
    typed = editor_text(page)
    assert "\n".join(ANSWER) in typed and DEFAULT not in typed
    pick_preset(page, lang, PRESET)
    ran = run(page, lang, "workbench.ok")
    seconds = time.monotonic() - started
    page.locator(PLAYER).wait_for(timeout=30_000)
    assert int(ran["steps"]) > 0
    header = page.locator(PLAYER).inner_text()
    assert "我的抢占对象选择" in header if lang == "zh" else "my victim choice" in header  # the learner's kind's name
    shot(page, f"smart_victim_{lang}", alert(page, said_as(lang, "workbench.ok")[0]))
    (ARTIFACTS / f"workbench_walk_{lang}.txt").write_text(
        f"the smart-victim exercise from the starter to its run on the stage: {seconds:.1f} s (typed by Playwright)\n")
    # The text stays through a visit to another page and back, and a switch of language (a server that had lost it
    # would give the editor the starter's text again, under a new doc_id).
    page.get_by_role("link", name=text(lang, "app.tour")).click()
    page.wait_for_url("**/Tour*")
    page.get_by_role("link", name=text(lang, "workbench.page")).click()
    page.locator(EDITOR).wait_for(timeout=60_000)
    other = "zh" if lang == "en" else "en"
    page.get_by_text(LANGUAGES[other], exact=True).click()
    page.get_by_role("button", name=text(other, "workbench.run"), exact=True).wait_for(timeout=30_000)
    assert editor_text(page) == typed
    assert page.locator("[data-testid=stException]").count() == 0
    page.close()


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_double_free_stops_at_its_frame_with_the_invariant_named(fake_server, browser, lang):
    page = open_workbench(browser, fake_server, lang)
    page.get_by_role("button", name=text(lang, "workbench.upload_short")).click()
    page.locator("[data-testid=stFileUploaderDropzoneInput]").set_input_files(BY_ID["double_free"].path)
    page.wait_for_function("() => window.schedlabEditor.view.state.doc.toString().includes('class DoubleFree')",
                           timeout=30_000)
    page.keyboard.press("Escape")
    pick_preset(page, lang, PRESET)
    broken = run(page, lang, "workbench.broken")
    assert ("释放" if lang == "zh" else "freed") in broken["what"]  # the invariant, in the learner's words
    pattern, _ = said_as(lang, "workbench.at_frame")
    frame = int(pattern.search(alert(page, pattern).inner_text())[1])
    assert frame == int(broken["step"]) - 1  # the trace's last frame: the step that broke could not be recorded
    page.wait_for_function(f"() => document.querySelector('{PLAYER}')?.dataset.frame === '{frame}'")
    shot(page, f"double_free_{lang}", alert(page, pattern))
    page.close()


def test_a_syntax_error_is_marked_at_its_line(fake_server, browser):
    page = open_workbench(browser, fake_server, "en")
    line = page.locator(".cm-line", has_text="def choose_victim(self, requester):")
    number = editor_text(page).splitlines().index("    def choose_victim(self, requester):") + 1
    line.click()
    page.keyboard.press("End")
    page.keyboard.press("Backspace")  # the colon
    page.get_by_role("button", name=text("en", "workbench.run"), exact=True).click()
    marker = page.locator(".cm-gutter-lint .cm-gutterElement").filter(has=page.locator(".cm-lint-marker-error"))
    marker.first.wait_for(timeout=30_000)
    fault = alert(page, "SyntaxError").inner_text()
    assert f"(line {number})" in fault
    gutter_line = page.evaluate("""() => { const v = window.schedlabEditor.view;
      const marker = document.querySelector('.cm-lint-marker-error').getBoundingClientRect();
      return v.state.doc.lineAt(v.posAtCoords({x: marker.right + 40, y: marker.top + marker.height / 2})).number; }""")
    assert gutter_line == number
    shot(page, "syntax_error_en", alert(page, "SyntaxError"), "end")
    page.close()

