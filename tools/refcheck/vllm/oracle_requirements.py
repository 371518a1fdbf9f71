"""The requirements of an installed vLLM that its Scheduler's imports may need on a CPU machine, one per line.

    VENV/bin/python tools/refcheck/vllm/oracle_requirements.py vllm

`make vllm-venv VLLM=0.33` installs vLLM 0.33.0 (a CUDA build) with `--no-deps` over the local CPU torch, then
what this prints: its declared requirements whose markers hold here, less torch (kept at the local build) and the
GPU-only packages (their wheels pin a CUDA torch or fail to install without a GPU). The oracle only steps vLLM's
Scheduler with fake tokens, so none of those is ever loaded."""

from __future__ import annotations

import sys
from importlib.metadata import requires

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

# Canonical name prefixes left out: torch stays the local CPU build; the rest are video decoding, GPU kernels
# and their loaders ("humming-kernels", "tokenspeed-mla", "apache-tvm-ffi", "nvidia-cutlass-dsl"...).
LEFT_OUT = ("torch", "pynvvideocodec", "flashinfer", "nvidia-", "tilelang", "quack", "humming", "tokenspeed",
            "fastsafetensors", "instanttensor", "nvtx", "tvm-ffi", "apache-tvm-ffi")


def kept(requirement: Requirement) -> bool:
    if canonicalize_name(requirement.name).startswith(LEFT_OUT):
        return False
    return requirement.marker is None or requirement.marker.evaluate({"extra": ""})


def main(distribution: str) -> None:
    for line in requires(distribution) or ():
        requirement = Requirement(line)
        if kept(requirement):
            requirement.marker = None
            print(str(requirement))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "vllm")
