"""Linear layers over weights prepacked once for MKL, for the few-row inputs of batched decoding on CPU.

A plain x @ W^T with a handful of rows (a decode batch of 4 or 16 tokens) spends much of its time repacking the
weight into MKL's internal layout, on every call: at 16 rows the product is little more than one pass over the
weight, and the repacking reads and writes it again. MKL's packed GEMM keeps that layout from one call to the next
(`torch.ops.mkl._mkl_linear`, as inductor's frozen CPU graphs use it). A packed weight serves the row count it was
packed for, so inputs of 2 to PACKED_ROWS rows are padded to PACKED_ROWS: rows of a matrix product never mix, so
the padding changes no result. One row (a single decode) is a matrix-vector product that MKL does not repack, and
from a few dozen rows on (a prefill) the product is compute-bound: both keep the plain product.

`use_prepacked_linears` turns the model's `nn.Linear`s into `PrepackedLinear`s, which compute exactly like
`nn.Linear` unless the calling thread is inside `prepacked_linears()`: the runner enters it around its own forward
pass only, so the shared model stays stock for everyone else (e.g. generate()). A flag per layer call costs far
less than a TorchFunctionMode, which would see every one of the ~2,600 torch calls of a decode step. A layer packs
its weight on its first prepacked call (the weights are final by then); the copies add about the weights' size to
the resident memory. Builds of torch without MKL (e.g. on ARM) always take the plain product.
"""

import threading
from contextlib import contextmanager

import torch
import torch.nn.functional as F
from torch import nn

PACKED_ROWS = 16  # the row count weights are packed for: a decode batch of up to 16 sequences

_thread = threading.local()


@contextmanager
def prepacked_linears():
    """On this thread, for the block's duration, CPU inputs of 2 to PACKED_ROWS rows take the prepacked weights."""
    _thread.active = True
    try:
        yield
    finally:
        _thread.active = False


class PrepackedLinear(nn.Linear):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        rows = x.reshape(-1, x.shape[-1])
        if not (getattr(_thread, "active", False) and 1 < len(rows) <= PACKED_ROWS and x.device.type == "cpu"
                and torch.backends.mkl.is_available()):
            return F.linear(x, self.weight, self.bias)
        padded = rows if len(rows) == PACKED_ROWS else F.pad(rows, (0, 0, 0, PACKED_ROWS - len(rows)))
        out = torch.ops.mkl._mkl_linear(padded, self.packed_weight(), self.weight, self.bias, PACKED_ROWS)
        return out[:len(rows)].reshape(*x.shape[:-1], self.out_features)

    def packed_weight(self) -> torch.Tensor:
        """MKL's packed copy of the weight, made on first use (two threads packing at once make the same copy)."""
        packed = self.__dict__.get("_packed")
        if packed is None:
            packed = self.__dict__["_packed"] = torch.ops.mkl._mkl_reorder_linear_weight(self.weight, PACKED_ROWS)
        return packed


def use_prepacked_linears(model: nn.Module):
    """Make every plain `nn.Linear` of `model` a `PrepackedLinear` (same parameters, same results outside
    `prepacked_linears()`)."""
    for module in model.modules():
        if type(module) is nn.Linear:
            module.__class__ = PrepackedLinear
