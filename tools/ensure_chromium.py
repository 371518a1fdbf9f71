"""Install Debian's Chromium for the browser tests when it is missing (never a Playwright-downloaded browser)."""

import os
import shutil
import subprocess

CHROMIUM = "/usr/bin/chromium"


def main() -> None:
    if os.path.exists(CHROMIUM):
        return
    if shutil.which("apt-get") is None or os.geteuid() != 0:
        print(f"{CHROMIUM} is missing and cannot be installed here; browser tests will be skipped.")
        return
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    subprocess.run(["apt-get", "update", "-qq"], check=True, env=env)
    subprocess.run(["apt-get", "install", "-y", "-qq", "chromium"], check=True, env=env)


if __name__ == "__main__":
    main()
