"""House rules that hold across the tree: which layer may pull in what."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def modules_pulled_in(package: str) -> set[str]:
    """The top-level modules loaded by importing every module of `package`, in a fresh interpreter."""
    script = (f"import importlib, pkgutil, sys, {package}\n"
              f"for info in pkgutil.walk_packages({package}.__path__, '{package}.'):\n"
              "    importlib.import_module(info.name)\n"
              "print(' '.join(sorted({name.split('.')[0] for name in sys.modules})))")
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=True)
    return set(done.stdout.split())


def test_the_session_layer_draws_nothing():
    # session/ holds a learner's run and feeds the player; figures (Plotly) and the page (Streamlit) are above it.
    pulled_in = modules_pulled_in("session")
    assert "session" in pulled_in and "viz" in pulled_in  # the walk did import something
    assert "plotly" not in pulled_in
    assert "streamlit" not in pulled_in
