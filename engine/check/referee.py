"""The referee: what the server trusts of a run a learner's scheduler made in the sandbox, checked from its trace
alone. The worker that ran it could have patched the checks inside it, or written the trace itself, so that a broken
scheduler looks sound or a slow one fast; `referee(trace)` re-checks on the server, frame by frame, and raises
`Broken` (engine/check/invariants.py: a message under "check." and `.step`, the frame it broke at):

- the invariants readable from frames, by the very rules `drive` checks a scheduler's objects by: no block listed
  twice or held by two requests unless the pool counts both, every block's holders counted, free + used + cached =
  the pool the config gives, a finished request holding no block; each batch within max_num_seqs of the config in
  effect at its frame, each entry computing within its request's known (and drafted) tokens; a status moving only as
  a request's life allows, the queues and statuses agreeing, no request lost, computed tokens never beyond known
  ones; the frame's metrics as its requests and blocks give them;
- the progress the batches give: a request grows by a token exactly when its entry reaches its known tokens (by one
  to its drafts + 1 with drafts), and only then; it ends only by a stop token or a limit, and ends at either (a step
  late at most: overlapped, an end lands after the next step was scheduled);
  every request ends unless the trace says the run stopped early (and it did: a stall ran nothing); the request
  summaries' first-token and finish steps are the frames';
- on the fake model (runner "fake"), every token: the fake model is deterministic given the request, its position,
  the trace's seed and the config's max_model_len and eos (runner/fake.py), so each token a frame adds is compared
  with the one a fresh runner on the server gives. On the real model the tokens cannot be replayed cheaply: there
  only the frames' consistency above is checked.

A length end is held to the outputs a request may write as its kind declares them (`SchedulerInfo.output_budget`:
SGLang clips them to its context and pool as a request arrives), and stop tokens end a request only in the kinds
that read them (`SchedulerInfo.sampling`).

`referee(trace, spec)` also holds the trace to the recipe the server sent (engine/check/recipe_check.py): its seed,
runner, config changes and every request (a request dropped, a shorter prompt is caught), each frame's config as the
changes and the adaptive controller make it, the simulated clock on the fake model, and a run stopped at max_steps to
its steps. `trace` is what `checked_trace` returned (its shape checked there)."""

from __future__ import annotations

from collections import Counter

from engine.check.frame_pool import FramePool
from engine.check.invariants import (
    Broken,
    batch_within,
    computed_within,
    entry_within,
    holds,
    status_moved,
)
from engine.check.recipe_check import RecipeCheck
from engine.run.engine import PROGRESS
from engine.run.frame import Frame, PoolRebuilt, RequestView
from engine.run.metrics import DONE
from engine.run.recipe import RunSpec
from engine.traces.trace import trace_store
from runner.fake import FakeRunner
from scheduler import Config, SamplingParams, Sequence, SequenceStatus
from scheduler.factory import scheduler_info

STATUS = {status.name.lower(): status for status in SequenceStatus}
FIXED = ("num_prompt_tokens", "arrival", "max_tokens", "priority")  # what a request's views never change


def referee(trace: dict, spec: RunSpec | None = None) -> None:
    """Raise `Broken` at the first frame the trace's run breaks a rule at (see the module's docstring); `spec`: the
    recipe the run was made from, to hold the trace to."""
    _Referee(trace).check(spec)


class _Referee:
    def __init__(self, trace: dict):
        self.trace, self.kind = trace, trace["scheduler"]
        self.frames = trace_store(trace)
        self.summaries = trace["requests"]
        self.seqs = [_sequence(r) for r in self.summaries]  # each request's prompt and sampling, to replay it by
        self.tokens = [r["prompt_token_ids"] + r["output_token_ids"] for r in self.summaries]
        self.replays = trace["runner"] == "fake"
        info = scheduler_info(self.kind)
        self.reads_stop_tokens = "stop_token_ids" in info.sampling  # the others end only at EOS and their limits
        self.output_budget = info.output_budget
        self.budget: dict[int, int] = {}  # the outputs each request may write, as its kind lets it
        self._runners: dict[tuple[int, int], FakeRunner] = {}
        self.pool = FramePool(self.kind)
        self.first_token: dict[int, int] = {}
        self.finish: dict[int, int] = {}

    def check(self, spec: RunSpec | None):
        recipe = None if spec is None else RecipeCheck(spec, self.replays)
        if recipe is not None:
            recipe.check_run(self.trace, [seq.sampling_params for seq in self.seqs], self.frames[-1])
        before = None
        for k, frame in enumerate(self.frames):
            try:
                self.check_frame(before, frame)
                if recipe is not None:
                    recipe.check_frame(frame)
            except Broken as e:
                e.step = k
                raise
            before = frame
        try:
            self.check_end(frame, spec)
        except Broken as e:
            e.step = frame.step
            raise

    # -- one frame ---------------------------------------------------------------------------------------

    def check_frame(self, before: Frame | None, frame: Frame):
        if before is not None:
            for event in frame.events:  # requests requeued into a rebuilt pool arrive again
                if isinstance(event, PoolRebuilt):
                    for rid in event.requeued:
                        self.set_budget(frame.config, before.requests[rid])
        # each request's own story first (its status, tokens and end), then what the frame says of them together
        changed: list[tuple[RequestView | None, RequestView]] = []
        if before is not None:
            for old, new in zip(before.requests, frame.requests[:len(before.requests)], strict=True):
                if old is new or old == new:  # unchanged: only an end reached at the frame before may be due
                    self.check_end_due(frame, old, new)
                else:
                    self.check_request(frame, old, new)
                    changed.append((old, new))
        for view in frame.requests[len(before.requests) if before else 0:]:
            self.check_request(frame, None, view)
            changed.append((None, view))
        for event in frame.events:  # what the stage narrates of an end is what the frame shows
            if event.ends is not None:
                status = frame.requests[event.seq_id].status
                holds(status == event.ends, "end_event", seq=event.seq_id, status=status.upper(), event=event.kind)
        if before is not None:
            self.check_batch(before, frame)
        self.check_queues(frame)
        self.pool.check(before, frame, changed)
        self.check_metrics(frame)

    def check_queues(self, frame: Frame):
        """Each request queued once, in the queue of its status; none that has not ended in no queue."""
        queued = Counter([*frame.waiting, *frame.running, *(i for q in frame.queues.values() for i in q)])
        if len(queued) != len(frame.waiting) + len(frame.running) + sum(map(len, frame.queues.values())):
            for rid, n in queued.items():
                holds(n == 1, "queued_twice", seq=rid)
        requests = frame.requests
        for queue in ("waiting", "running"):
            for rid in frame.queue(queue):
                if requests[rid].status != queue:
                    holds(False, "queue_status", seq=rid, queue=queue, status=requests[rid].status.upper())
        for view in requests:
            if view.id not in queued and view.status not in DONE:
                holds(False, "lost", seq=view.id, status=view.status.upper())

    def check_batch(self, before: Frame, frame: Frame):
        """The step's batch, against the requests as the frame before left them (the batch records where each
        entry's chunk started, and its drafts)."""
        batch = frame.batch
        if not set(batch.seq_ids) <= set(before.running):  # a limit lowered mid-run stops admissions, not decodes:
            batch_within(len(batch.seq_ids), frame.config)  # V0 keeps decoding what runs, as vLLM V0 does
        # a trace written since traces say why they stopped records where each entry's chunk starts
        holds(bool(batch.num_computed) or not batch.seq_ids or "ended" not in self.trace, "batch_fields")
        for i, (rid, n) in enumerate(zip(batch.seq_ids, batch.num_tokens, strict=True)):
            new = frame.requests[rid]
            # one added by hand is batched in the step it joins: as it arrived, no token computed
            old = before.requests[rid] if rid < len(before.requests) else new._replace(
                status="waiting", num_tokens=new.num_prompt_tokens, num_computed_tokens=0, block_table=())
            # after its step: running, or ended by it (SGLang aborts an over-long prompt's stub once prefilled)
            holds(n > 0 and new.status != "waiting", "batch_entry", seq=rid, n=n, status=new.status.upper(),
                  scheduled=n)
            if not batch.num_computed:  # an older trace's
                continue
            computed, drafts = batch.num_computed[i], batch.num_drafts[i]
            entry_within(rid, n, computed, old.num_tokens + drafts)
            # a token when its entry reaches its known tokens (one to drafts + 1 with drafts), none for one aborted
            sampled = computed + n >= old.num_tokens + drafts and new.status != "aborted"
            grown = new.num_tokens - old.num_tokens
            holds(grown in (range(1, drafts + 2) if sampled else (0,)), "progress", seq=rid, n=n, computed=computed,
                  known=old.num_tokens, before=old.num_tokens, after=new.num_tokens)
            if new.status == "running":  # its chunk computed, less the drafts the model rejected
                expected = computed + n - (drafts + 1 - grown if sampled and drafts else 0)
                holds(new.num_computed_tokens == expected, "computed_moved", seq=rid, after=new.num_computed_tokens,
                      n=n, computed=computed, expected=expected)

    def check_request(self, frame: Frame, old: RequestView | None, new: RequestView):
        rid, step = new.id, frame.step
        computed_within(rid, new.num_computed_tokens, new.num_tokens)
        if old is not None:
            status_moved(rid, STATUS[old.status], STATUS[new.status])
            if rid not in frame.batch.seq_ids:  # no token and nothing computed outside the batch
                holds(new.num_tokens <= old.num_tokens, "progress", seq=rid, n=0, computed=old.num_computed_tokens,
                      known=old.num_tokens, before=old.num_tokens, after=new.num_tokens)
                holds(new.num_computed_tokens <= old.num_computed_tokens, "computed_moved", seq=rid,
                      after=new.num_computed_tokens, n=0, computed=old.num_computed_tokens,
                      expected=old.num_computed_tokens)
            for field in FIXED:
                if getattr(new, field) != getattr(old, field):
                    holds(False, "request_changed", seq=rid, field=field, before=getattr(old, field),
                          after=getattr(new, field))
        else:
            self.check_arrival(step, new)
            self.set_budget(frame.config, new)
        start = old.num_tokens if old is not None else new.num_prompt_tokens
        if self.replays:
            self.check_tokens(frame.config, rid, start, new.num_tokens)
        if new.num_tokens > new.num_prompt_tokens:
            self.first_token.setdefault(rid, step)
        ended = new.status in DONE
        if ended and (old is None or old.status not in DONE):
            self.finish[rid] = step
            if new.status == "finished":
                holds(self.at_end(frame.config, new), "finish_early", seq=rid,
                      tokens=new.num_tokens - new.num_prompt_tokens, reason=new.finish_reason or "-")
            said = any(e.seq_id == rid and e.ends == new.status for e in frame.events)
            holds(said, "end_event", seq=rid, status=new.status.upper(), event="-")
        if old is not None:
            self.check_end_due(frame, old, new)
        holds(new.num_tokens - new.num_prompt_tokens <= new.max_tokens, "too_long", seq=rid,
              tokens=new.num_tokens - new.num_prompt_tokens, most=new.max_tokens)

    def check_arrival(self, step: int, view: RequestView):
        """A request shows first at the frame of its arrival (one of the workload's, queued at the end of that step)
        or the next (one added by hand after that frame), with the prompt and arrival its summary records."""
        summary = self.summaries[view.id]
        holds(view.num_prompt_tokens == self.seqs[view.id].num_prompt_tokens, "prompt", seq=view.id,
              n=view.num_prompt_tokens, prompt=self.seqs[view.id].num_prompt_tokens)
        holds(summary.get("arrival", view.arrival) == view.arrival, "summary", seq=view.id, field="arrival",
              claimed=summary.get("arrival"), actual=view.arrival)
        holds(step - 1 <= view.arrival <= step, "arrival", seq=view.id, arrival=view.arrival, step=step)

    def check_end_due(self, frame: Frame, old: RequestView, new: RequestView):
        """A request at its end at the frame before has ended by this one: an end known only after the next step
        was scheduled (overlapped: an EOS, or V1's limits) comes a step late."""
        if new.status not in DONE and old.status not in DONE and self.at_end(frame.config, old):
            holds(False, "unfinished", seq=new.id, status=new.status.upper(),
                  tokens=new.num_tokens - new.num_prompt_tokens)

    def check_tokens(self, config: Config, rid: int, start: int, end: int):
        """The tokens a frame adds to request `rid` ([start, end)) are the fake model's."""
        runner, seq, tokens = self._runner(config), self.seqs[rid], self.tokens[rid]
        for position in range(start, end):
            expected = runner.sampled(seq, position)
            holds(tokens[position] == expected, "token", seq=rid, index=position - seq.num_prompt_tokens,
                  token=tokens[position], expected=expected)

    def _runner(self, config: Config) -> FakeRunner:
        key = (config.max_model_len, config.eos)
        if key not in self._runners:
            self._runners[key] = FakeRunner(config.max_model_len, eos=config.eos, seed=self.trace["seed"])
        return self._runners[key]

    def set_budget(self, config: Config, view: RequestView):
        """The outputs the request may write in all, from now: its max_tokens, or what its kind clips them to as it
        arrives (SchedulerInfo.output_budget), counting those it has written."""
        written = view.num_tokens - view.num_prompt_tokens
        budget = self.output_budget
        self.budget[view.id] = view.max_tokens if budget is None else \
            written + budget(config, view.num_tokens, max(view.max_tokens - written, 0))

    def at_end(self, config: Config, view: RequestView) -> bool:
        """Whether the request has reached an end it must stop at, once it has written a token: its last token one
        it stops at (EOS unless it ignores it, its stop tokens where its kind reads them, once it has its
        min_tokens), or a limit (its output budget, max_model_len; V0 prefills a prompt of max_model_len tokens,
        then ends it)."""
        params, outputs = self.seqs[view.id].sampling_params, view.num_tokens - view.num_prompt_tokens
        if outputs < 1:
            return False
        if outputs >= self.budget[view.id] or view.num_tokens >= config.max_model_len:
            return True
        last = self.tokens[view.id][view.num_tokens - 1]
        return outputs >= params.min_tokens and (last == config.eos and not params.ignore_eos
                                                 or self.reads_stop_tokens and last in params.stop_token_ids)

    def check_metrics(self, frame: Frame):
        """The frame's metrics (the stage's and the lab's figures) as its queues, batch and blocks give them."""
        free, cached, used = self.pool.free, self.pool.cached, self.pool.used
        for name, actual in (("num_waiting", len(frame.waiting)), ("num_running", len(frame.running)),
                             ("num_batched_tokens", sum(frame.batch.num_tokens)), ("num_free_blocks", free),
                             ("num_cached_free_blocks", cached), ("kv_usage", used / (used + free))):
            claimed = getattr(frame.metrics, name)
            holds(abs(claimed - actual) < 1e-9, "metric", name=name, claimed=claimed, actual=actual)

    # -- the run as a whole ------------------------------------------------------------------------------

    def check_end(self, last: Frame, spec: RunSpec | None):
        ended = self.trace.get("ended", "finished")
        for rid in range(len(last.requests), len(self.summaries)):  # a request no frame shows
            holds(False, "summary", seq=rid, field="arrival", claimed=self.summaries[rid].get("arrival"), actual="-")
        left = [view.id for view in last.requests if view.status not in DONE]
        if ended == "finished":
            holds(not left, "unended", ended=ended, seqs=", ".join(map(str, left)))
        elif ended == "stalled":  # the last step ran nothing and moved nothing on
            holds(not last.batch.seq_ids and not any(e.kind in PROGRESS for e in last.events), "stall", step=last.step)
        elif ended == "max_steps" and spec is not None:
            holds(last.step == spec.max_steps, "recipe", field="max_steps", claimed=last.step, actual=spec.max_steps)
        if ended in ("finished", "stalled") and spec is not None:  # nothing was left to arrive
            asked = len(spec.workload) + sum(c.kind == "request" for c in spec.changes)
            holds(len(self.summaries) == asked, "recipe", field="requests", claimed=len(self.summaries), actual=asked)
        for rid, summary in enumerate(self.summaries):
            for field, steps in (("first_token_step", self.first_token), ("finish_step", self.finish)):
                if summary.get(field, steps.get(rid)) != steps.get(rid):
                    holds(False, "summary", seq=rid, field=field, claimed=summary[field], actual=steps.get(rid))
            holds(len(self.tokens[rid]) == last.requests[rid].num_tokens, "summary", seq=rid, field="tokens",
                  claimed=len(self.tokens[rid]), actual=last.requests[rid].num_tokens)


def _sequence(summary: dict) -> Sequence:
    """A request's prompt and sampling as its summary records them (an older trace's: the defaults), to replay it by;
    its max_tokens is its frames' (any that allows its min_tokens here)."""
    sampling = summary.get("sampling") or {}
    least = sampling.get("min_tokens", 0)
    params = SamplingParams(max_tokens=max(least, 1), ignore_eos=sampling.get("ignore_eos", False),
                            stop_token_ids=tuple(sampling.get("stop_token_ids", ())), min_tokens=least)
    return Sequence(summary["prompt_token_ids"], params, seq_id=summary["id"])
