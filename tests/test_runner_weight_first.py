"""The weight-first linear mode the runner enters on CPU computes the same linear layers, in row-major layout."""

import pytest
import torch
import torch.nn.functional as F

from runner.weight_first import WeightFirstLinear


@pytest.mark.parametrize("rows", [1, 4, 16])
@pytest.mark.parametrize("with_bias", [False, True])
def test_linear_matches_plain_and_stays_row_major(rows, with_bias):
    generator = torch.Generator().manual_seed(rows)
    x = torch.randn(1, rows, 64, generator=generator)
    weight = torch.randn(96, 64, generator=generator)
    bias = torch.randn(96, generator=generator) if with_bias else None
    with WeightFirstLinear():
        out = F.linear(x, weight, bias)
    assert out.shape == (1, rows, 96)
    assert out.is_contiguous()  # a transposed view would push SDPA onto its slow math backend
    torch.testing.assert_close(out, F.linear(x, weight, bias), rtol=1e-5, atol=1e-5)

