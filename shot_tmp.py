"""A look at the lecturer's desk in a lecture hall (Redis): the head count's help, en and zh."""
import sys
from playwright.sync_api import sync_playwright
from render.chromium import CHROMIUM, CHROMIUM_ARGS
from tests.helpers.redis_server import RedisServer
from tools.app_server import app_server

with RedisServer() as redis, app_server("fake", env={"SCHEDLAB_REDIS_URL": redis.url}) as (url, _):
    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        for lang in ("en", "zh"):
            page = chromium.new_context(viewport={"width": 1280, "height": 720}).new_page()
            page.goto(f"{url}/?scenario=02_preemption&lang={lang}")
            page.get_by_text("Class" if lang == "en" else "课堂", exact=True).first.click()
            page.get_by_role("button", name="Start a class" if lang == "en" else "开始上课").click()
            desk = page.get_by_text("You lead class" if lang == "en" else "你在带领课堂").first
            desk.wait_for(timeout=60000)
            desk.scroll_into_view_if_needed()
            page.locator("[data-testid=stTooltipIcon]").first.hover()
            page.wait_for_timeout(800)
            page.screenshot(path=f"/tmp/hall/desk_{lang}.png")
        chromium.close()
