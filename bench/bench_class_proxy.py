"""The README's multi-process recipe tried: three `streamlit run` processes, each under its own path (p1, p2, p3),
behind nginx with tools/nginx_schedlab.conf (its ports replaced by free ones; nginx runs as this user, from a
temporary folder). In headless Chromium: visitors open / and are spread over the processes; a lecturer opens /
too, starts a class on the process it landed on, and hands out the Class panel's link; students open that link
(through nginx) and must all land on the lecturer's process and follow three steps.
Needs nginx (Debian's `nginx-light`; never a dependency of the app): skipped with a note without it.
Run: python -m bench.bench_class_proxy [students]
"""

import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from contextlib import ExitStack
from pathlib import Path

from bench.browser import chromium
from tools.app_server import ROOT, app_server, free_port

PROCESSES, VISITORS, STEPS, WAIT_MS = ("p1", "p2", "p3"), 9, 3, 30_000
PLAYER = "[data-testid=stage-player]"


def nginx_conf(folder: Path, listen: int, ports: dict[str, int]) -> Path:
    """tools/nginx_schedlab.conf on these ports, in an nginx.conf that keeps every file of nginx's in `folder`."""
    site = (ROOT / "tools" / "nginx_schedlab.conf").read_text().replace("listen 80;", f"listen 127.0.0.1:{listen};")
    for name, port in ports.items():
        site = site.replace(f"127.0.0.1:{8500 + int(name[1:])};", f"127.0.0.1:{port};")
    temp = " ".join(f"{kind}_temp_path {folder}/{kind};" for kind in ("client_body", "proxy", "fastcgi", "uwsgi",
                                                                        "scgi"))
    conf = folder / "nginx.conf"
    conf.write_text(f"pid {folder}/nginx.pid; error_log {folder}/error.log; events {{}}\n"
                    f"http {{ access_log {folder}/access.log; {temp}\n{site}\n}}\n")
    return conf


def landed_on(page) -> str:
    return re.match(r"https?://[^/]+/(p\d)/", page.url).group(1)


def wait_for_frame(page, step: int):
    page.wait_for_function(f"() => document.querySelector('{PLAYER}')?.dataset.frame === '{step}'", timeout=WAIT_MS)


NO_NGINX = "nginx is not installed (apt-get install nginx-light)"


def nginx_binary() -> str | None:
    """Debian's nginx, on the PATH or in /usr/sbin (outside a normal user's PATH); None where it is not installed."""
    nginx = shutil.which("nginx") or "/usr/sbin/nginx"
    return nginx if Path(nginx).exists() else None


def main():
    students = int(sys.argv[1]) if len(sys.argv) > 1 else 4
    nginx = nginx_binary()
    if nginx is None:
        print(f"class across processes: skipped, {NO_NGINX}")
        return

    with ExitStack() as stack, tempfile.TemporaryDirectory() as folder:
        ports = {}
        for name in PROCESSES:
            base, _ = stack.enter_context(app_server("fake", base_path=name))
            ports[name] = int(re.search(r":(\d+)/", base).group(1))
        listen = free_port()
        conf = nginx_conf(Path(folder), listen, ports)
        subprocess.run([nginx, "-t", "-c", str(conf)], check=True, capture_output=True)
        proxy = subprocess.Popen([nginx, "-c", str(conf), "-g", "daemon off;"], stderr=subprocess.DEVNULL)
        stack.callback(lambda: (proxy.terminate(), proxy.wait(10)))
        time.sleep(0.5)
        url = f"http://127.0.0.1:{listen}"
        browser = stack.enter_context(chromium())
        context = browser.new_context(viewport={"width": 1280, "height": 720})
        spread = Counter()
        for _ in range(VISITORS):  # a first visit to / lands on a process; the address then names it
            page = context.new_page()
            page.goto(f"{url}/?scenario=01_prefill_first")
            page.wait_for_selector(PLAYER, timeout=WAIT_MS)
            spread[landed_on(page)] += 1
            page.close()
        lecturer = context.new_page()
        lecturer.goto(f"{url}/?scenario=02_preemption")
        wait_for_frame(lecturer, 0)
        lecturer.locator("[data-testid=stSidebar]").get_by_text("Class", exact=True).click()
        lecturer.get_by_role("button", name="Start a class").click()
        lecturer.get_by_text(re.compile(r"^Class code: ")).wait_for(timeout=WAIT_MS)
        lecturer.locator("[data-testid=stSidebar] pre code").first.wait_for(timeout=WAIT_MS)
        link = lecturer.locator("[data-testid=stSidebar] pre code").first.inner_text().strip()
        pages = []
        for _ in range(students):
            page = context.new_page()
            page.goto(link)
            wait_for_frame(page, 0)
            pages.append(page)
        lecturer.get_by_text(re.compile(rf"{students} tabs open, {students} students following you")).wait_for(
            timeout=WAIT_MS)
        for _ in range(STEPS):
            lecturer.locator(f"{PLAYER} [data-action=step]").click()
        followed = 0
        for page in pages:
            try:
                wait_for_frame(page, STEPS)
                followed += 1
            except Exception:  # noqa: BLE001 - counted, and said below
                pass
        home = landed_on(lecturer)
        print(f"class across {len(PROCESSES)} processes behind nginx ({url}): {VISITORS} first visits to / landed "
              f"on {dict(sorted(spread.items()))}; the lecturer on {home}, the students' link {link}; "
              f"{sum(landed_on(p) == home for p in pages)}/{students} students on the lecturer's process, "
              f"{followed}/{students} followed the lecturer's {STEPS} steps")


if __name__ == "__main__":
    main()
