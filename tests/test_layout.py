"""House rules that hold across the tree: which layer may pull in what, and no word made in a default language."""

import ast
import subprocess
import sys
from pathlib import Path

from tests.helpers.source import imported_modules, source_files

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


def lang_parameters(source: str):
    """(function name, whether its `lang` has a default) for each function in `source` that takes a `lang`."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            args = node.args
            positional = args.posonlyargs + args.args
            defaults = [None] * (len(positional) - len(args.defaults)) + args.defaults
            for arg, default in [*zip(positional, defaults, strict=True),
                                  *zip(args.kwonlyargs, args.kw_defaults, strict=True)]:
                if arg.arg == "lang":
                    yield node.name, default is not None


def test_every_function_that_makes_words_is_told_the_language():
    # A default language would let a caller forget it and show English on a Chinese page without any error.
    paths = [ROOT / "app.py"] + [p for folder in ("viz", "ui", "session", "app_pages", "engine", "scheduler", "runner",
                                                  "i18n") for p in sorted((ROOT / folder).rglob("*.py"))]
    taking, defaulted = 0, []
    for path in paths:
        for name, has_default in lang_parameters(path.read_text()):
            taking += 1
            if has_default:
                defaulted.append(f"{path.relative_to(ROOT)}: {name}")
    assert taking > 80  # the walk saw the viz/ functions
    assert defaulted == []


def test_the_walk_sees_a_default_language():
    source = ("def narrate(frame, before=None, lang='en'): pass\n"
              "def figure(runs, height=300, *, lang='en'): pass\n"
              "def told(frame, before=None, *, lang): pass\n")
    assert list(lang_parameters(source)) == [("narrate", True), ("figure", True), ("told", False)]


def test_no_test_module_imports_another():
    # Shared fixtures are in tests/conftest.py, shared helpers in tests/helpers/: a test module imported elsewhere
    # would run its tests twice or hide what it shares.
    imported = []
    for path in sorted((ROOT / "tests").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            names = ([node.module or ""] if isinstance(node, ast.ImportFrom)
                     else [a.name for a in node.names] if isinstance(node, ast.Import) else [])
            imported += [f"{path.name}: {name}" for name in names
                         if name.split(".")[-1].startswith(("test_", "conftest"))]
    assert imported == []


# -- which layer may import what: dependencies point down, and the pure layers start nothing ----------------------

# The layers above each one, which it never imports (what it may import below it is open: viz reads engine's frames).
ABOVE = {
    "scheduler": {"engine", "runner", "session", "viz", "render", "ui", "app_pages", "app"},
    "runner": {"engine", "session", "viz", "render", "ui", "app_pages", "app"},
    "engine": {"session", "viz", "render", "ui", "app_pages", "app"},
    "viz": {"session", "render", "ui", "app_pages", "app"},
    "player": {"session", "render", "ui", "app_pages", "app"},  # assets.py reads viz/frame_payload.py's wire names
    "session": {"render", "ui", "app_pages", "app"},
}
PROCESSES = {"subprocess", "multiprocessing", "playwright"}  # a browser or another process: render/ and runner/
THREADS = {"threading", "_thread", "concurrent"}  # overlapped scheduling's model thread is runner/step_thread.py
# What each pure layer may not start. session/ may use threads: the locks over what sessions share (the run cache,
# a class and its store, the guessing limits) and the thread that precomputes presets (session/precompute.py).
NOT_STARTED = {"scheduler": PROCESSES | THREADS, "engine": PROCESSES | THREADS, "viz": PROCESSES | THREADS,
               "session": PROCESSES}


def imports_against(rules: dict[str, set[str]]) -> list[str]:
    """Each import of a layer's module that `rules` (layer: top-level names it may not import) forbid."""
    return [f"{relative}:{line} imports {module}" for layer, banned in rules.items()
            for relative, tree in source_files(layer) for line, module in imported_modules(tree)
            if module.split(".")[0] in banned]


def test_no_layer_imports_one_above_it():
    assert imports_against(ABOVE) == []


def test_the_pure_layers_start_no_browser_process_or_thread():
    assert imports_against(NOT_STARTED) == []


def test_the_scan_sees_what_the_layers_above_import():
    # render/ is where the browser starts: the same scan over it finds Playwright, subprocess and the browser's lock.
    found = imports_against({"render": PROCESSES | THREADS})
    assert {line.split(" imports ")[1].split(".")[0] for line in found} == {"playwright", "subprocess", "threading"}
    tree = ast.parse("import os\ndef later():\n    from concurrent.futures import ThreadPoolExecutor\n"
                     "from . import sibling\n")
    assert list(imported_modules(tree)) == [(1, "os"), (3, "concurrent.futures")]  # deferred too; relative: local


def test_the_comparison_measures_and_viz_says_it():
    # engine/analysis/compare.py hands what it finds over as data (viz/compare_words.py words it); the catalogue is
    # read there only to label the variants, whose labels name the runs (`partial(text, lang)` in variants_for).
    (_, tree), = source_files("engine/analysis/compare.py")
    said = [node.lineno for node in ast.walk(tree) if isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name | ast.Attribute) and ast.unparse(node.func) in ("text", "i18n.text")]
    assert said == []
