"""Install what the tests, the benches and the Chinese interface need from Debian when it is missing: Chromium (never
a Playwright-downloaded browser), a CJK font (without one, Chinese text renders as boxes in Chromium's screenshots
and GIFs), Noto's other scripts (a class's names in Devanagari, Thai, Arabic... in the screenshots), Redis (the
tests start `redis-server` on a free port: tests/helpers/redis_server.py), nginx (the benches put it in front of
server processes: bench/bench_class_proxy.py, bench/bench_half_open.py), node (tests/test_player_decode.py runs
the player's decoder in it) and poppler-utils (the handout tests read the printed PDF's text with `pdftotext`); and
what pip needs to build pyicu (requirements.txt: ICU's confusable skeleton compares a class's names), ICU's
headers, pkg-config and a C++ compiler, so `make install` runs this before pip. The app needs none of the others.
Only the programs are used: neither service is started by the install (each test or bench starts its own, on a free
port, and stops it). Quick and silent when all are there.
"""

import os
import shutil
import subprocess
from contextlib import contextmanager

# A file each package installs -> the package: present file, nothing to do.
NEEDED = {"/usr/bin/chromium": "chromium",
          "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc": "fonts-noto-cjk",
          "/usr/share/fonts/truetype/noto/NotoSansDevanagari-Regular.ttf": "fonts-noto-core",
          "/usr/bin/redis-server": "redis-server",
          "/usr/bin/pdftotext": "poppler-utils",
          "/usr/sbin/nginx": "nginx-light",
          "/usr/bin/node": "nodejs",
          "/usr/include/unicode/uspoof.h": "libicu-dev", "/usr/bin/pkg-config": "pkg-config", "/usr/bin/g++": "g++",
          "/usr/bin/bwrap": "bubblewrap"}  # the sandbox's jail (sandbox/jail.py)
SERVICES = {"redis-server": "redis-server", "nginx-light": "nginx"}  # package -> the service Debian would start
POLICY = "/usr/sbin/policy-rc.d"  # asked by invoke-rc.d and deb-systemd-invoke before they start a service


@contextmanager
def services_not_started(packages: list[str]):
    """While `packages` install, no service starts (a temporary policy-rc.d that says no, where there is none: a
    container has one already), and on a systemd machine theirs are not enabled for the next boot either."""
    temporary = not os.path.exists(POLICY)
    if temporary:
        with open(POLICY, "w") as f:
            f.write("#!/bin/sh\nexit 101\n")
        os.chmod(POLICY, 0o755)
    try:
        yield
    finally:
        if temporary:
            os.remove(POLICY)
    services = [SERVICES[p] for p in packages if p in SERVICES]
    if services and os.path.isdir("/run/systemd/system"):
        subprocess.run(["systemctl", "disable", "--now", *services], check=False, capture_output=True)


def main() -> None:
    missing = [package for path, package in NEEDED.items() if not os.path.exists(path)]
    if not missing:
        return
    if shutil.which("apt-get") is None or os.geteuid() != 0:
        print(f"{', '.join(missing)} missing and cannot be installed here: the tests that need them are skipped and "
              "Chinese text may show as boxes.")
        return
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    subprocess.run(["apt-get", "update", "-qq"], check=True, env=env)
    with services_not_started(missing):
        subprocess.run(["apt-get", "install", "-y", "-qq", *missing], check=True, env=env)


if __name__ == "__main__":
    main()
