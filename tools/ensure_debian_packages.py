"""Install what the browser tests and the Chinese interface need from Debian when it is missing: Chromium (never a
Playwright-downloaded browser), a CJK font (without one, Chinese text renders as boxes in Chromium's screenshots
and GIFs) and node (tests/test_player_decode.py runs the player's decoder in it). Quick and silent when all are
there."""

import os
import shutil
import subprocess

# A file each package installs -> the package: present file, nothing to do.
NEEDED = {"/usr/bin/chromium": "chromium",
          "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc": "fonts-noto-cjk",
          "/usr/bin/node": "nodejs"}


def main() -> None:
    missing = [package for path, package in NEEDED.items() if not os.path.exists(path)]
    if not missing:
        return
    if shutil.which("apt-get") is None or os.geteuid() != 0:
        print(f"{', '.join(missing)} missing and cannot be installed here: browser tests will be skipped and Chinese "
              "text may show as boxes.")
        return
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    subprocess.run(["apt-get", "update", "-qq"], check=True, env=env)
    subprocess.run(["apt-get", "install", "-y", "-qq", *missing], check=True, env=env)


if __name__ == "__main__":
    main()
