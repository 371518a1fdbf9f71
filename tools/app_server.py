"""`streamlit run serve.py` (the app with schedlab's server hooks) on a free port of 127.0.0.1, for the browser
tests and bench/bench_stage.py: started, waited for, and stopped (it never outlives the `with`)."""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


PORTS_ENV = "SCHEDLAB_PORTS"  # e.g. "8620-8629": the ports this machine's user may take; else any free one


def free_port() -> int:
    first, _, last = os.environ.get(PORTS_ENV, "0").partition("-")
    for port in range(int(first), int(last or first) + 1):
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return s.getsockname()[1]
    raise OSError(f"no free port in ${PORTS_ENV}={os.environ[PORTS_ENV]}")


def app_script(root: Path = ROOT) -> str:
    """The script `streamlit run` starts in the tree at `root`: serve.py (the app with schedlab's server hooks), or
    app.py in a tree from before it (a bench's other version, bench/before.py)."""
    return "serve.py" if (root / "serve.py").exists() else "app.py"


@contextmanager
def app_server(runner: str = "fake", start_timeout_s: float = 60, port: int = 0, root: Path = ROOT,
               base_path: str = "", env: dict[str, str] | None = None):
    """Yields (base URL, the server's Popen); on `port`, or a free one; the app of the tree at `root` (a bench's
    other version), under `base_path` (Streamlit's server.baseUrlPath, as one process of several behind a proxy),
    with `env` added to the environment. The server writes its log to a temporary file (a pipe nobody reads fills
    up and stalls the server) and watches no files (nothing is edited meanwhile)."""
    port = port or free_port()
    base = f"http://127.0.0.1:{port}" + (f"/{base_path.strip('/')}" if base_path else "")
    with tempfile.TemporaryFile() as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", app_script(root), "--server.headless", "true", "--server.port",
             str(port), "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false",
             "--server.fileWatcherType", "none", "--server.baseUrlPath", base_path], cwd=root,
            env=dict(os.environ, SCHEDLAB_RUNNER=runner, **(env or {})), stdout=log, stderr=subprocess.STDOUT)
        try:
            _wait_until_healthy(process, base, start_timeout_s, log)
            yield base, process
        finally:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def _wait_until_healthy(process: subprocess.Popen, base: str, timeout_s: float, log):
    deadline = time.time() + timeout_s
    while True:
        try:
            with urllib.request.urlopen(f"{base}/_stcore/health", timeout=2) as reply:
                if reply.status == 200:
                    return
        except OSError:
            if process.poll() is not None or time.time() > deadline:
                process.kill()
                log.seek(0)
                raise RuntimeError(f"streamlit did not start: {log.read().decode()[-2000:]}") from None
            time.sleep(0.3)
