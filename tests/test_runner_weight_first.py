"""The weight-first linear layers the runner switches on for its own forward pass on CPU: the same numbers, in
row-major layout, and a stock nn.Linear outside `weight_first()`."""

import pytest
import torch
from torch import nn

from runner.weight_first import MAX_ROWS, WeightFirstLinear, use_weight_first, weight_first


def linear_pair(with_bias: bool, seed: int) -> tuple[nn.Linear, nn.Linear]:
    torch.manual_seed(seed)
    plain = nn.Linear(64, 96, bias=with_bias)
    converted = nn.Sequential(nn.Linear(64, 96, bias=with_bias))
    converted[0].load_state_dict(plain.state_dict())
    use_weight_first(converted)
    return plain, converted[0]


@pytest.mark.parametrize("rows", [1, 4, 16, MAX_ROWS + 8])
@pytest.mark.parametrize("with_bias", [False, True])
def test_linear_matches_plain_and_stays_row_major(rows, with_bias):
    plain, layer = linear_pair(with_bias, seed=rows)
    assert isinstance(layer, WeightFirstLinear) and layer.weight is not plain.weight
    x = torch.randn(1, rows, 64, generator=torch.Generator().manual_seed(rows))
    with weight_first():
        out = layer(x)
    assert out.shape == (1, rows, 96)
    assert out.is_contiguous()  # a transposed view would push SDPA onto its slow math backend
    torch.testing.assert_close(out, plain(x), rtol=1e-5, atol=1e-5)


def test_outside_the_block_and_on_other_threads_it_is_plain_linear(monkeypatch):
    """The switch is per thread and per block: elsewhere the layer never takes the weight-first product."""
    import threading

    plain, layer = linear_pair(True, seed=3)
    taken = []
    real_mm = torch.mm
    monkeypatch.setattr(torch, "mm", lambda *args: taken.append(1) or real_mm(*args))
    x = torch.randn(8, 64)
    torch.testing.assert_close(layer(x), plain(x), rtol=0, atol=0)
    seen_by_other_thread = []
    with weight_first():
        worker = threading.Thread(target=lambda: seen_by_other_thread.append(layer(x)))
        worker.start()
        worker.join()
        layer(x)
    assert len(taken) == 1  # only the call inside the block, on this thread
    torch.testing.assert_close(seen_by_other_thread[0], plain(x), rtol=0, atol=0)
