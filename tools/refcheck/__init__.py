"""One reference-check harness for every twin: `python -m tools.refcheck SYSTEM --release R` compares a twin
(scheduler/<twin>/) with the system's own scheduler on random workloads, step record by step record, shrinks the
first difference and records golden traces for `make test`. A system plugs in through the small interface in
tools/refcheck/adapter.py (its package here, tools/refcheck/<system>/, and one line in SYSTEMS); vLLM's is
tools/refcheck/vllm/."""
