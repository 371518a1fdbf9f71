"""bench/'s shared helpers: one percentile, importable as a package (no script edits sys.path)."""

import re
from pathlib import Path
from statistics import quantiles

from pytest import approx

from bench.stats import p50, p95, percentiles, spread

BENCH = Path(__file__).resolve().parents[1] / "bench"


def test_percentiles_interpolate_between_ranks_as_statistics_inclusive():
    values = [0.9, 0.1, 0.5, 0.3, 0.7, 1.3]
    cuts = quantiles(values, n=100, method="inclusive")
    assert percentiles(values, 50, 95) == approx((cuts[49], cuts[94]))
    assert (p50(values), p95(values)) == approx((cuts[49], cuts[94]))
    assert percentiles(values, 0, 100) == (0.1, 1.3)


def test_no_values_give_zeros_and_a_spread_is_in_milliseconds():
    assert percentiles([], 50, 95) == (0.0, 0.0)
    assert spread([0.010, 0.020, 0.030]) == "p50 20 ms, p95 29 ms, max 30 ms"


def test_no_bench_script_edits_sys_path():
    assert (BENCH / "__init__.py").is_file()
    edit = re.compile(r"sys\.path\.(insert|append)|sys\.path\s*=")  # (a docstring may name sys.path)
    editing = [path.name for path in BENCH.glob("*.py") if edit.search(path.read_text())]
    assert editing == []
