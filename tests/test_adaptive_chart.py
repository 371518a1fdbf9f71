"""The adaptive batch chart shows the limit, the batch and the latency of every step, over the band."""

import pytest

from engine.inputs.scenario import SCENARIOS_DIR, load_scenario
from viz.adaptive import adaptive_batch_figure


def test_the_chart_follows_the_run():
    scenario = load_scenario(SCENARIOS_DIR / "09_adaptive_batch.toml")
    engine = scenario.engine()
    engine.run(steps=45)
    fig = adaptive_batch_figure(engine.frames, scenario.spec.adaptive, current_step=41, lang="en")
    bars, limit, latency = fig.data
    assert list(limit.x) == list(range(1, 46)) and limit.y[6:10] == (2, 3, 4, 5)
    assert bars.y[40] == 5 and latency.y[40] == pytest.approx(375)  # step 41: five prompts prefilled in 375 ms
    band = fig.layout.shapes[0]
    assert (band.y0, band.y1, band.yref) == (50, 200, "y2")
