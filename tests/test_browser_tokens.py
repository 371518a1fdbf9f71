"""The token's cookie and the websocket's origin through the started app (`streamlit run serve.py`, fake model, its
classes in a Redis of the test's own, which this test reads too, as another server process would: issue 47, finding
8 and point 5). The cookie arrives from the server HttpOnly and SameSite=Strict, Secure when the trusted proxy says
https, only for a request of the app's own origin; a page on another port of 127.0.0.1 cannot read it, nor open the
app's websocket with it; a websocket whose Origin has another port is refused; a student's reload keeps their name
through the cookie the server set. The lecturer's desk lists its devices (screenshots in both languages, 1280x720,
to artifacts/), revokes one, and rotates the secret: the new token's cookie keeps the desk across a reload."""

import asyncio
import http.server
import os
import re
import threading
import time
import urllib.error
import urllib.request
from contextlib import contextmanager

import pytest

from bench.browser import chromium as started_chromium
from render.chromium import CHROMIUM
from session.classroom import Registry
from session.redis_store import RedisStore
from tests.helpers.browser import ARTIFACTS, PLAYER, settled
from tests.helpers.redis_server import RedisServer, installed
from tools.app_server import app_server, free_port

WAIT_MS = 30_000

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not os.path.exists(CHROMIUM), reason=f"{CHROMIUM} is not installed (Debian chromium)"),
              pytest.mark.skipif(not installed(), reason="redis-server is not installed")]


@pytest.fixture(scope="module")
def hall():
    """(the app's address, a registry over the app's Redis: this test's side of the lecture hall)."""
    with RedisServer() as redis, app_server("fake", env={"SCHEDLAB_REDIS_URL": redis.url}) as (url, _process):
        registry = Registry(store=RedisStore(redis.url))
        try:
            yield url, registry
        finally:
            registry.store.close()


@pytest.fixture(scope="module")
def chromium():
    with started_chromium() as browser:
        yield browser


@contextmanager
def other_origin():
    """A page of its own on another port of 127.0.0.1: its address."""
    class Page(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.end_headers()
            self.wfile.write(b"<!doctype html><title>another app</title><p>another app on this host</p>")

        def log_message(self, *_):
            pass
    server = http.server.ThreadingHTTPServer(("127.0.0.1", free_port()), Page)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def post_ticket(url: str, ticket: str, origin: str, **headers) -> tuple[int, str]:
    """(status, Set-Cookie) of the route's answer to a ticket sent from a page of `origin`."""
    request = urllib.request.Request(f"{url}/_schedlab/token", data=ticket.encode(), method="POST",
                                     headers={"Origin": origin, **headers})
    try:
        with urllib.request.urlopen(request, timeout=10) as reply:
            return reply.status, reply.headers.get("Set-Cookie", "")
    except urllib.error.HTTPError as e:
        return e.code, e.headers.get("Set-Cookie", "")


def test_the_server_sets_the_cookie_httponly_samesite_and_secure_behind_https(hall):
    url, registry = hall
    token = registry.tokens.issue()  # issued by another process of the hall: the app knows it as its own
    other = "http://127.0.0.1:" + str(free_port())
    ticket = registry.tokens.ticket(token)
    assert post_ticket(url, ticket, other) == (403, "")  # a page of another port: nothing
    status, cookie = post_ticket(url, ticket, url)
    assert status == 204 and cookie.startswith(f"schedlab_browser={token};")
    attributes = {a.strip().split("=")[0].lower(): a.strip() for a in cookie.split(";")[1:]}
    assert "httponly" in attributes and attributes["samesite"].lower() == "samesite=strict"
    assert attributes["path"] == "Path=/" and "secure" not in attributes  # plain http: a browser would drop it
    assert post_ticket(url, ticket, url)[0] == 410  # used once
    https = url.replace("http://", "https://")  # the proxy in front says the page came over https
    status, cookie = post_ticket(url, registry.tokens.ticket(token), https, **{"X-Forwarded-Proto": "https"})
    assert status == 204 and "Secure" in cookie and "HttpOnly" in cookie


def test_a_process_under_its_own_path_keeps_its_own_cookie():
    with RedisServer() as redis, app_server("fake", base_path="p1", env={"SCHEDLAB_REDIS_URL": redis.url}) as (url, _):
        registry = Registry(store=RedisStore(redis.url))
        try:
            origin = url.rsplit("/", 1)[0]
            status, cookie = post_ticket(url, registry.tokens.ticket(registry.tokens.issue()), origin)
        finally:
            registry.store.close()
    assert status == 204 and "Path=/p1/" in [a.strip() for a in cookie.split(";")]


async def websocket_opens(url: str, origin: str) -> bool:
    import websockets

    try:
        async with websockets.connect(url.replace("http", "ws", 1) + "/_stcore/stream", subprotocols=["streamlit"],
                                      origin=origin, open_timeout=10):
            return True
    except websockets.InvalidStatus as e:
        assert e.response.status_code == 403
        return False


def test_a_websocket_from_another_port_is_refused(hall):
    url, _ = hall
    port = int(url.rsplit(":", 1)[1])
    assert asyncio.run(websocket_opens(url, url))
    for origin in (f"http://127.0.0.1:{port + 1}", f"https://127.0.0.1:{port}", "http://127.0.0.1",
                   f"http://localhost:{port}", "null"):
        assert not asyncio.run(websocket_opens(url, origin)), origin


def cookie_of(context) -> dict | None:
    deadline = time.monotonic() + WAIT_MS / 1000
    while time.monotonic() < deadline:
        if found := [c for c in context.cookies() if c["name"] == "schedlab_browser"]:
            return found[0]
        time.sleep(0.2)
    return None


def test_a_page_on_another_port_cannot_read_the_cookie_nor_use_it_and_a_reload_keeps_the_name(hall, chromium):
    url, registry = hall
    room = registry.start(registry.tokens.issue())
    context = chromium.new_context(viewport={"width": 1280, "height": 720})
    page = context.new_page()
    page.goto(f"{url}/?class={room.code}")
    page.wait_for_selector(PLAYER, timeout=WAIT_MS)
    page.get_by_role("textbox", name=re.compile("^Your name")).fill("Alice Smith")
    page.get_by_role("button", name="Use this name").click()
    page.get_by_text("You are Alice Smith in this class.").wait_for(timeout=WAIT_MS)
    cookie = cookie_of(context)
    assert cookie is not None and cookie["httpOnly"] and cookie["sameSite"] == "Strict" and not cookie["secure"]
    assert registry.tokens.issued(cookie["value"]) and room.names.name_of(cookie["value"]) == "Alice Smith"
    assert "schedlab_browser" not in page.evaluate("document.cookie")  # not even the app's own page reads it
    page.reload()  # a new session: the cookie the server set says who this is
    page.get_by_text("You are Alice Smith in this class.").wait_for(timeout=WAIT_MS)
    with other_origin() as elsewhere:
        page.goto(elsewhere)
        assert "schedlab_browser" not in page.evaluate("document.cookie")
        opened = page.evaluate("""url => new Promise(done => {
          const ws = new WebSocket(url, 'streamlit');
          ws.onopen = () => { ws.close(); done(true); };
          ws.onerror = ws.onclose = () => done(false);
        })""", url.replace("http", "ws", 1) + "/_stcore/stream")
        assert not opened  # the browser would have sent the cookie: the origin's port refuses it
    context.close()


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_desk_lists_the_lecturers_devices_and_revokes_one(hall, chromium, lang):
    url, registry = hall
    words = {"en": ("Class", "Start a class", "Lecturer devices"), "zh": ("课堂", "开始一堂课", "讲师设备")}[lang]
    context = chromium.new_context(viewport={"width": 1280, "height": 720})
    page = context.new_page()
    page.goto(f"{url}/?scenario=02_preemption&lang={lang}")
    page.wait_for_selector(PLAYER, timeout=WAIT_MS)
    page.locator("[data-testid=stSidebar]").get_by_text(words[0], exact=True).click()
    page.get_by_role("button", name=words[1]).click()
    page.get_by_role("button", name=re.compile(f"^{words[2]} ?[(（]1[)）]")).wait_for(timeout=WAIT_MS)
    assert cookie_of(context) is not None  # set by the server: the reload below is the lecturer's
    room = registry.get(re.search(r"class=([A-Z2-9]+)", page.url)[1])
    tablet = registry.tokens.issue()
    assert room.lectern.take_lectern(tablet, room.secret, "Safari · iPadOS")  # a second device, on another process
    page.reload()
    page.wait_for_selector(PLAYER, timeout=WAIT_MS)
    page.get_by_role("button", name=re.compile(f"^{words[2]} ?[(（]2[)）]")).click()  # the reload kept the lectern
    settled(page)
    page.get_by_text(re.compile("^Safari · iPadOS")).wait_for(timeout=WAIT_MS)
    mine = page.locator("[data-testid=stMarkdownContainer]").filter(has_text=re.compile("(this device|本设备)"))
    assert "Chrome · Linux" in mine.inner_text()
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=ARTIFACTS / f"lecturer_devices_{lang}.png")
    page.get_by_role("button", name={"en": "Revoke", "zh": "撤销"}[lang]).click()
    page.get_by_role("button", name=re.compile(f"^{words[2]} ?[(（]1[)）]")).wait_for(timeout=WAIT_MS)
    assert not room.lectern.is_lecturer(tablet, fresh=True)
    old = cookie_of(context)["value"]
    rotate = page.get_by_role("button", name={"en": "Rotate the secret", "zh": "更换口令"}[lang])
    if not rotate.is_visible():  # the popover closed with the rerun
        page.get_by_role("button", name=re.compile(f"^{words[2]}")).click()
    rotate.click()
    deadline = time.monotonic() + WAIT_MS / 1000
    while cookie_of(context)["value"] == old and time.monotonic() < deadline:  # the server sets the new token's
        time.sleep(0.2)
    new = cookie_of(context)["value"]
    assert new != old and room.lectern.is_lecturer(new, fresh=True) and not room.lectern.is_lecturer(old, fresh=True)
    page.reload()  # the rotated lecturer's reload keeps the desk, through the new cookie
    page.get_by_role("button", name=re.compile(f"^{words[2]} ?[(（]1[)）]")).wait_for(timeout=WAIT_MS)
    context.close()
