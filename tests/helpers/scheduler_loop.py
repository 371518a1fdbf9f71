"""A minimal loop that drives a scheduler with a fake model, shared by the scheduler tests, and one step of the
SGLang twin on its own."""

from runner.fake import FakeRunner
from scheduler import RequestRejected, Sequence
from scheduler.article import Scheduler
from scheduler.sglang import ScheduleBatch
from scheduler.sglang import Scheduler as SglangTwin


def run_to_end(scheduler: Scheduler, arrivals: dict[int, list[Sequence]], seed: int = 0,
               max_steps: int = 10_000, on_step=None, rejected: list | None = None) -> list:
    """Add `arrivals[step]` before each step, then schedule, run the fake model, postprocess.
    Requests that add() refuses go to `rejected` when it is given (else the error propagates). Calls
    `on_step(step, batch, events)` after each step, `events` those of schedule() and postprocess().
    Returns the batches; fails if the run does not end within `max_steps`."""
    cfg = scheduler.config
    runner = FakeRunner(cfg.max_model_len, eos=cfg.eos, seed=seed)
    batches, last_arrival = [], max(arrivals, default=0)
    for step in range(1, max_steps + 1):
        for seq in arrivals.get(step, []):
            try:
                scheduler.add(seq)
            except RequestRejected:
                if rejected is None:
                    raise
                rejected.append(seq)
        batch = scheduler.schedule()
        finished = scheduler.postprocess(batch.seqs, runner.run(batch.seqs))
        batches.append(batch)
        if on_step:
            on_step(step, batch, [*batch.events, *finished])
        if step >= last_arrival and scheduler.is_finished():
            return batches
    raise AssertionError(f"the run did not end within {max_steps} steps")


def step_sglang_twin(twin: SglangTwin) -> ScheduleBatch | None:
    """One step of the SGLang twin as SGLang's event loop runs it; every request's token is 100 + its id (never
    EOS)."""
    batch = twin.get_next_batch_to_run()
    if batch is None:
        twin.on_idle()
    twin.step_done(batch)
    if batch is not None:
        twin.process_batch_result(batch, [100 + r.rid for r in batch.reqs])
    return batch
