"""Linear layers computed weight-first, as (W @ x^T)^T, for the few-row inputs of batched decoding on CPU.

MKL's sgemm for x @ W^T with a handful of rows (a decode batch of 4 or 16 tokens) is memory-bound and threads
poorly on these CPUs; the same product taken as W @ x^T, a tall weight times a thin matrix, runs 1.3-3x faster
at 2 threads (the lm_head, 49152 x 576 for SmolLM2, most of all) and gives the same numbers. From a few dozen
rows on (a prefill) the product is compute-bound and plain x @ W^T is the faster one again.

`prepare_model` turns the model's `nn.Linear`s into `WeightFirstLinear`s, which compute exactly like
`nn.Linear` unless the calling thread is inside `weight_first()`: the runner enters it around its own forward
pass only, so the shared model stays stock for everyone else (e.g. generate()). A flag per layer call costs
far less than a TorchFunctionMode, which would see every one of the ~2,600 torch calls of a decode step.
"""

import threading
from contextlib import contextmanager

import torch
import torch.nn.functional as F
from torch import nn

MAX_ROWS = 32  # above this a linear layer is compute-bound and plain x @ W^T wins

_thread = threading.local()


@contextmanager
def weight_first():
    """On this thread, for the block's duration, CPU inputs of 2 to MAX_ROWS rows take the weight-first product."""
    _thread.active = True
    try:
        yield
    finally:
        _thread.active = False


class WeightFirstLinear(nn.Linear):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        rows = x.reshape(-1, x.shape[-1])
        if not (getattr(_thread, "active", False) and 1 < len(rows) <= MAX_ROWS and x.device.type == "cpu"):
            return F.linear(x, self.weight, self.bias)
        out = torch.mm(self.weight, rows.t()).t().contiguous()  # row-major again, as attention kernels expect
        if self.bias is not None:
            out = out + self.bias
        return out.reshape(*x.shape[:-1], self.out_features)


def use_weight_first(model: nn.Module):
    """Make every plain `nn.Linear` of `model` a `WeightFirstLinear` (same parameters, same results outside
    `weight_first()`)."""
    for module in model.modules():
        if type(module) is nn.Linear:
            module.__class__ = WeightFirstLinear
