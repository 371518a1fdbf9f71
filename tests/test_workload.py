"""Workload generators: deterministic, in range, with the shapes they promise."""

from collections import Counter
from statistics import fmean

import pytest

from engine.inputs.workload import (
    SHAREGPT_MEAN_INPUT,
    bursty_arrivals,
    chat_prompts,
    lengths,
    poisson_arrivals,
    random_token_prompts,
    random_workload,
)
from engine.run.recipe import Request


def test_the_articles_prompts_are_seeded_and_in_range():
    prompts = random_token_prompts(200, seed=0)
    assert prompts == random_token_prompts(200, seed=0) != random_token_prompts(200, seed=1)
    assert all(1 <= len(p) <= 10 for p in prompts)
    assert all(1 <= t <= 999 for p in prompts for t in p)


def test_poisson_arrivals_follow_the_rate():
    steps = poisson_arrivals(2000, rate=0.5, seed=0)
    assert steps == sorted(steps)
    assert steps[-1] == pytest.approx(2000 / 0.5, rel=0.1)
    with pytest.raises(ValueError):
        poisson_arrivals(3, rate=0)


def test_bursty_arrivals_come_in_groups():
    assert bursty_arrivals(7, burst_size=3, every=10, start=2) == [2, 2, 2, 12, 12, 12, 22]


def test_length_distributions():
    uniform = lengths(500, "uniform", low=100, high=1024)
    assert min(uniform) >= 100 and max(uniform) <= 1024
    sharegpt = lengths(4000, "sharegpt_input", scale=0.1)
    assert fmean(sharegpt) == pytest.approx(SHAREGPT_MEAN_INPUT * 0.1, rel=0.1)
    assert max(lengths(100, "sharegpt_output", high=50)) <= 50
    with pytest.raises(ValueError, match="distribution"):
        lengths(3, "normal")


def test_half_of_the_requests_share_the_prefix():
    requests = random_workload(200, seed=1, prompt_lengths=[40] * 200, shared_prefix_len=32, shared_fraction=0.5)
    ((_, sharing),) = Counter(r.prompt_token_ids[:32] for r in requests).most_common(1)
    assert 70 < sharing < 130
    assert all(len(r.prompt_token_ids) == 40 for r in requests)


def test_built_in_chat_prompts():
    prompts = chat_prompts()
    assert len(prompts) >= 20 and len({p["name"] for p in prompts}) == len(prompts)
    system = [p["text"] for p in prompts if p["system"]]
    assert len(system) >= 5
    shared = system[0].split("\n\n")[0]
    assert len(shared) > 300 and all(t.startswith(shared) for t in system)
    assert any(len(p["text"]) > 300 for p in prompts if not p["system"])  # some long prompts of their own


@pytest.mark.parametrize("bad", [dict(), dict(prompt="hi", prompt_token_ids=(1,)), dict(prompt="hi", max_tokens=0),
                                 dict(prompt="hi", arrival=-1), dict(prompt="hi", temperature=-1.0)])
def test_a_malformed_request_is_refused(bad):
    with pytest.raises(ValueError):
        Request(**bad)
