"""The scheduler contract's invariants checked on any kind, built-in or one's own (`python -m engine check`): what
each step must keep (invariants.py), the random configs and workloads they are checked on (strategies.py), and the
search for the smallest workload that breaks one (search.py). tests/test_scheduler_contract.py runs the same checks
on every kind."""
