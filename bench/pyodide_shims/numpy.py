"""Stands for numpy in Pyodide from the npm package, which ships no numpy wheel: the run imports numpy (engine/inputs/
notebook.py) but never calls it; a call says so."""


def __getattr__(name: str):
    raise ImportError(f"numpy.{name}: numpy is not in Pyodide's npm package (bench/bench_sandbox_choice.py)")
