"""The sandbox: a learner's scheduler code runs here and nowhere else on the server (docs/sandbox.md).

    from sandbox import run_learner, Outcome, Limits
    outcome = run_learner(source, "MyScheduler", spec)   # spec: engine/run/recipe.py RunSpec

The server's side (run_learner and the jail) is imported on first use only: the worker imports this package in the
jail, where libseccomp's binding cannot load (it runs ldconfig to find its library)."""

from importlib import import_module

_LAZY = {"Limits": "sandbox.limits", "Fault": "sandbox.run", "Outcome": "sandbox.run", "run_learner": "sandbox.run"}

__all__ = list(_LAZY)


def __getattr__(name: str):
    if name in _LAZY:
        return getattr(import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'sandbox' has no attribute {name!r}")
