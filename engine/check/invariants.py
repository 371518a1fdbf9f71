"""The invariants every scheduler keeps, read only through the contract (scheduler/contract.py), checked after every
call while `drive` runs a kind on a workload with the fake model: no unit owned twice (each unit's holders as its
pool counts them), free + used + cached = the pool, a status moves only as a request's life allows and only the
scheduler changes a request, computed tokens never beyond known ones, a batch within its limits, and no request
starved (the run ends within a stated number of steps). A broken one raises `Broken`, saying what broke in plain
words ("request 3 holds block 5, which request 1 also holds, ...")."""

from __future__ import annotations

from collections import Counter

from i18n import MessageError
from runner.fake import FakeRunner
from scheduler import Config, RequestRejected, SequenceStatus
from scheduler.contract import UnitState
from scheduler.factory import make_scheduler, scheduler_info
from scheduler.interface import BadDecision

WAITING, RUNNING, FINISHED, ABORTED = (SequenceStatus.WAITING, SequenceStatus.RUNNING, SequenceStatus.FINISHED,
                                       SequenceStatus.ABORTED)
ALLOWED = {WAITING: {WAITING, RUNNING, FINISHED, ABORTED}, RUNNING: {RUNNING, WAITING, FINISHED, ABORTED},
           FINISHED: {FINISHED}, ABORTED: {ABORTED}}  # a status a request may have next
MOST_STEPS = 600  # the stated bound: every request ends within this many steps (100 where a run may wait for good)


class Broken(MessageError):
    """An invariant the scheduler broke, in plain words (a message id under "check.", or a `BadDecision`'s: a hook's
    answer it could not use); `step`, the step it broke at (set by `drive`)."""
    step = 0


def holds(condition: bool, key: str, **values):
    if not condition:
        raise Broken(f"check.{key}", **values)


# -- the rules, over plain values: read here from the scheduler's objects, and from a trace's frames by the referee
# (engine/check/referee.py) --------------------------------------------------------------------------------------

def listed_once(seq_id: int, table, unit: str):
    """A request lists each unit of its table once."""
    for u, n in Counter(table).items():
        holds(n == 1, "listed_twice", seq=seq_id, unit=unit, id=u)


def holders_counted(unit: str, u: int, counted: int, owners: list[int], reserved: bool):
    """The pool counts each unit's holders: every request holding it (a shared cached prefix has several), one more
    for a reserved unit."""
    if len(owners) > 1:  # shared (a cached prefix): the pool must count every holder
        holds(counted == len(owners), "held_twice", seq=owners[-1], other=owners[0], unit=unit, id=u,
              counted=counted)
    holds(counted >= 0, "freed_twice", unit=unit, id=u, counted=counted)
    holds(counted == len(owners) + reserved, "holders", unit=unit, id=u, counted=counted, owners=len(owners),
          seqs=", ".join(map(str, owners)) or "-")


def pool_counted(free: int, used: int, cached: int, units: int):
    """Free + used + cached units are the pool's (reserved ones aside)."""
    holds(free + used + cached == units, "counts", free=free, used=used, cached=cached, units=units)


def status_moved(seq_id: int, before: SequenceStatus, after: SequenceStatus):
    """A status moves only as a request's life allows (ALLOWED)."""
    holds(after in ALLOWED[before], "status_move", seq=seq_id, before=before.name, after=after.name)


def computed_within(seq_id: int, computed: int, known: int):
    """Computed tokens never beyond known ones."""
    holds(computed <= known, "computed", seq=seq_id, computed=computed, known=known)


def entry_within(seq_id: int, n: int, computed: int, known: int):
    """A batch entry computes within its request's known (and drafted) tokens."""
    holds(computed + n <= known, "batch_beyond", seq=seq_id, n=n, computed=computed, known=known)


def batch_within(n: int, config: Config):
    """A batch within max_num_seqs (every kind reads it)."""
    holds(n <= config.max_num_seqs, "batch_seqs", n=n, most=config.max_num_seqs)


# -- the checks over a scheduler's objects ------------------------------------------------------------------------

def check_pool(scheduler):
    """No unit owned twice, free + used + cached = pool, each unit's holders as its state says."""
    pool, held = scheduler.pool, [*scheduler.running_seqs, *scheduler.waiting_seqs]
    unit = pool.unit_name
    holders_of: dict[int, list[int]] = {}
    for seq in held:
        listed_once(seq.seq_id, seq.block_table, unit)
        for u in seq.block_table:
            holders_of.setdefault(u, []).append(seq.seq_id)
    reserved = set(pool.reserved_unit_ids)
    for u in holders_of.keys() & reserved:
        holds(False, "reserved", seq=holders_of[u][0], unit=unit, id=u)
    free = list(pool.free_order())
    for u, n in Counter(free).items():
        holds(n == 1, "free_twice", unit=unit, id=u)
    holds(len(free) == pool.num_free_units, "free_count", n=len(free), free=pool.num_free_units)
    states = Counter()
    for u in pool.unit_ids:
        counted, key = pool.unit_state(u)
        holders_counted(unit, u, counted, holders_of.get(u, []), u in reserved)
        state = pool.state(u)
        holds((state is UnitState.USED) == (counted > 0), "state", unit=unit, id=u, state=state.value,
              counted=counted)
        holds(state is not UnitState.CACHED or key is not None, "cached_key", unit=unit, id=u)
        if u not in reserved:
            states[state] += 1
    for u in set(free) ^ {u for u in pool.unit_ids if pool.state(u) is not UnitState.USED}:
        holds(False, "free_set", unit=unit, id=u, state=pool.state(u).value)
    free_n, used, cached = (states[s] for s in (UnitState.FREE, UnitState.USED, UnitState.CACHED))
    pool_counted(free_n, used, cached, pool.num_units)
    holds(free_n + cached == pool.num_free_units, "free_units", free=free_n, cached=cached, n=pool.num_free_units)
    for u, key in pool.cached_keys().items():
        holds(pool.unit_state(u)[1] == key, "cache_keys", unit=unit, id=u)


def check_requests(scheduler, every_seq, statuses: dict):
    """Queues and statuses agree; a status only moves along ALLOWED; computed tokens never exceed known ones."""
    queued = Counter(s.seq_id for s in [*scheduler.waiting_seqs, *scheduler.running_seqs])
    for seq_id, n in queued.items():
        holds(n == 1, "queued_twice", seq=seq_id)
    for queue, status in (("waiting", WAITING), ("running", RUNNING)):
        for seq in getattr(scheduler, f"{queue}_seqs"):
            holds(seq.status is status, "queue_status", seq=seq.seq_id, queue=queue, status=seq.status.name)
    for seq in every_seq:
        if seq.seq_id in statuses:
            status_moved(seq.seq_id, statuses[seq.seq_id], seq.status)
            holds(seq.seq_id in queued or seq.is_done, "lost", seq=seq.seq_id, status=seq.status.name)
            statuses[seq.seq_id] = seq.status
        computed_within(seq.seq_id, seq.num_computed_tokens, len(seq.token_ids))


def check_batch(batch, config: Config):
    """Each batched request running and scheduled as the batch says, within its known (and drafted) tokens; the
    batch within max_num_seqs (every kind reads it). Its tokens are not held to max_num_batched_tokens: V0 counts
    only the tokens a prefix hit leaves to compute against it, as vLLM V0 does."""
    for seq, n in zip(batch.seqs, batch.num_scheduled_tokens, strict=True):
        holds(seq.status is RUNNING and 0 < n == seq.num_scheduled_tokens, "batch_entry", seq=seq.seq_id, n=n,
              status=seq.status.name, scheduled=seq.num_scheduled_tokens)
        entry_within(seq.seq_id, n, seq.num_computed_tokens, len(seq.token_ids) + len(seq.draft_token_ids))
    batch_within(len(batch.seqs), config)


def must_end(kind: str, config: Config) -> bool:
    """Whether a run must end: not one that queues a prompt larger than its pool (it may wait for good, as in
    vLLM), nor one under a config its system itself livelocks under (V0's chunked prefill)."""
    info = scheduler_info(kind)
    fits = not info.queues_oversized_prompt or config.max_model_len <= config.kv_capacity_tokens
    return fits and not (info.stalls and info.stalls(config))


def drive(kind: str, config: Config, workload) -> None:
    """Add, schedule, run the fake model, postprocess (and abort where the workload says), checking the invariants
    after every call, until every request ended; `workload`: (arrival step, sequence, abort step or None)."""
    scheduler = make_scheduler(kind, config)
    runner = FakeRunner(config.max_model_len, eos=config.eos)
    statuses: dict[int, SequenceStatus] = {}
    most = MOST_STEPS if must_end(kind, config) else 100
    for step in range(1, most + 1):
        try:
            one_step(scheduler, runner, config, step, workload, statuses)
        except Broken as e:
            e.step = step  # where it broke, for the reader
            raise
        if step >= max(arrival for arrival, _, _ in workload) and scheduler.is_finished():
            return
    left = [seq.seq_id for _, seq, _ in workload if not seq.is_done]
    holds(most < MOST_STEPS, "starved", steps=MOST_STEPS, seqs=", ".join(map(str, left)))


def one_step(scheduler, runner, config: Config, step: int, workload, statuses: dict):
    """One step of `drive`; a decision of one's own that came back unusable (`BadDecision`) is a `Broken` too."""
    try:
        _one_step(scheduler, runner, config, step, workload, statuses)
    except BadDecision as e:
        raise Broken(e.message_id, **e.message.values) from e


def _one_step(scheduler, runner, config: Config, step: int, workload, statuses: dict):
    every_seq = [seq for _, seq, _ in workload]
    for arrival, seq, abort_at in workload:
        if arrival == step:
            try:
                scheduler.add(seq)
                statuses[seq.seq_id] = seq.status
            except RequestRejected:
                holds(seq.status is ABORTED and bool(seq.finish_reason), "refused", seq=seq.seq_id,
                      status=seq.status.name)
        if abort_at == step and seq.seq_id in statuses and not seq.is_done:
            event = scheduler.abort(seq, "by the checker")
            holds((event.seq_id, seq.status, seq.block_table) == (seq.seq_id, ABORTED, []), "abort",
                  seq=seq.seq_id, status=seq.status.name, units=len(seq.block_table))
    check_requests(scheduler, every_seq, statuses)
    batch = scheduler.schedule()
    check_batch(batch, config)
    check_pool(scheduler)
    before = [(seq.status, len(seq.token_ids), seq.num_computed_tokens) for seq in every_seq]
    outputs = runner.run(batch.seqs)
    holds([(seq.status, len(seq.token_ids), seq.num_computed_tokens) for seq in every_seq] == before,
          "outside", step=step)
    scheduler.postprocess(batch.seqs, outputs)
    check_requests(scheduler, every_seq, statuses)
    check_pool(scheduler)
