"""Benchmark scripts, each run from the repository root as `python -m bench.<script>`; they print figures against
baselines measured in the same run."""
