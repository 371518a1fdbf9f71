"""The type check against the contract (issue 42 point 7: mypy, configured in pyproject.toml, run by `make test` and
`make test-fast`) reads every module of scheduler/ and engine/ (and sandbox/): none is exempt from it, and none is let
off a kind of error, so a scheduler that no longer fits `SchedulerProtocol` fails it (scheduler/factory.py)."""

import tomllib
from pathlib import Path

PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"


def test_every_module_of_scheduler_and_engine_is_type_checked_whole():
    mypy = tomllib.loads(PYPROJECT.read_text())["tool"]["mypy"]
    assert mypy["files"] == ["scheduler", "engine", "sandbox"]
    exempt = [override["module"] for override in mypy.get("overrides", ())
              if override.get("ignore_errors") or override.get("disable_error_code")]
    assert exempt == [], f"modules exempt from the type check: {exempt}"
    assert mypy.get("disable_error_code", []) == ["annotation-unchecked"]  # a note only, see pyproject.toml
