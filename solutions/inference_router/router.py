"""The router in front of the GPU pools: a sticky weighted split between versions, the least
loaded replica, priority shedding, a retry budget, outlier ejection and canary rollouts."""

from __future__ import annotations

import heapq
import math
import zlib
from collections import deque
from dataclasses import dataclass, field
from typing import NamedTuple

HEALTHY, EJECTED, PROBING = "healthy", "ejected", "probing"
DRAINING, REMOVED = "draining", "removed"
PRIORITIES = 4  # CRITICAL_PLUS, CRITICAL, SHEDDABLE_PLUS, SHEDDABLE


class Event(NamedTuple):
    kind: str
    request_id: str | None
    replica_id: str | None = None
    retry_after: int | None = None


def bucket(key: str) -> int:
    # crc32, not hash(): Python salts str hashes per process; a sticky split must outlive one.
    return zlib.crc32(key.encode("utf-8")) % 100


def _is_int(x: object) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _is_finite(x: object) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def _need(ok: bool, message: str) -> None:
    if not ok:
        raise ValueError(message)


def _need_name(what: str, x: object) -> None:
    _need(isinstance(x, str) and x != "", f"{what} must be a non-empty str, got {x!r}")


@dataclass(eq=False)
class Pool:
    model: str
    version: str
    replicas: list[Replica] = field(default_factory=list)
    # One deque per priority, each in seq order: the best is the first head, the worst the last
    # tail.
    queue: list[deque[Request]] = field(
        default_factory=lambda: [deque() for _ in range(PRIORITIES)])

    def best(self) -> Request | None:
        return next((q[0] for q in self.queue if q), None)

    def worst(self) -> Request | None:
        return next((q[-1] for q in reversed(self.queue) if q), None)

    def queued(self) -> list[str]:
        return [r.id for q in self.queue for r in q]

    def __len__(self) -> int:
        return sum(map(len, self.queue))


@dataclass(eq=False)
class Replica:
    id: str
    pool: Pool
    capacity: int
    in_flight: int = 0
    state: str = HEALTHY
    failures: int = 0  # consecutive failed attempts while healthy
    ejections: int = 0  # j: ejections in a row
    until: float = 0.0  # end of the current ejection
    probe: str | None = None  # the request id of the probe in flight


@dataclass(eq=False)
class Request:
    id: str
    model: str
    key: str
    priority: int
    seq: int
    enqueued_at: float
    attempt: int = 0
    replica: Replica | None = None
    tried: set[str] = field(default_factory=set)
    queued_in: Pool | None = None


@dataclass
class Rollout:
    stable: str
    canary: str
    steps: list[tuple[int, float]]
    max_error_percent: int
    window_s: float
    min_requests: int
    ends: float  # t_i + hold_i of the step in force
    step: int = 0
    records: deque[tuple[float, bool]] = field(default_factory=deque)  # the window, oldest first
    failed: int = 0  # failures among the records


@dataclass
class Model:
    split: list[tuple[str, int]] = field(default_factory=list)
    status: str = "none"
    rollout: Rollout | None = None


class InferenceRouter:
    def __init__(self, *, queue_limit: int = 0, queue_timeout_s: float | None = None,
                 retry_after_s: float | None = None, max_attempts: int = 1,
                 retry_budget_percent: int = 20, min_retry_concurrency: int = 3,
                 consecutive_failures: int | None = None, base_ejection_s: float = 30.0,
                 max_ejection_s: float = 300.0, max_ejection_percent: int = 10,
                 always_eject_one: bool = False):
        _need(_is_int(queue_limit) and queue_limit >= 0,
              f"queue_limit must be an int >= 0, got {queue_limit!r}")
        _need(queue_timeout_s is None or _is_finite(queue_timeout_s) and queue_timeout_s > 0,
              f"queue_timeout_s must be None or finite > 0, got {queue_timeout_s!r}")
        _need(retry_after_s is None or _is_finite(retry_after_s) and retry_after_s >= 0,
              f"retry_after_s must be None or finite >= 0, got {retry_after_s!r}")
        _need(_is_int(max_attempts) and max_attempts >= 1,
              f"max_attempts must be an int >= 1, got {max_attempts!r}")
        _need(_is_int(retry_budget_percent) and 0 <= retry_budget_percent <= 100,
              f"retry_budget_percent must be an int in 0..100, got {retry_budget_percent!r}")
        _need(_is_int(min_retry_concurrency) and min_retry_concurrency >= 0,
              f"min_retry_concurrency must be an int >= 0, got {min_retry_concurrency!r}")
        _need(consecutive_failures is None
              or _is_int(consecutive_failures) and consecutive_failures >= 1,
              f"consecutive_failures must be None or an int >= 1, got {consecutive_failures!r}")
        _need(_is_finite(base_ejection_s) and base_ejection_s > 0,
              f"base_ejection_s must be finite > 0, got {base_ejection_s!r}")
        _need(_is_finite(max_ejection_s) and max_ejection_s >= base_ejection_s,
              f"max_ejection_s must be finite >= base_ejection_s, got {max_ejection_s!r}")
        _need(_is_int(max_ejection_percent) and 0 <= max_ejection_percent <= 100,
              f"max_ejection_percent must be an int in 0..100, got {max_ejection_percent!r}")
        _need(isinstance(always_eject_one, bool),
              f"always_eject_one must be a bool, got {always_eject_one!r}")
        self.queue_limit = queue_limit
        self.queue_timeout_s = queue_timeout_s
        self.retry_after_s = retry_after_s
        self.max_attempts = max_attempts
        self.retry_budget_percent = retry_budget_percent
        self.min_retry_concurrency = min_retry_concurrency
        self.consecutive_failures = consecutive_failures
        self.base_ejection_s = base_ejection_s
        self.max_ejection_s = max_ejection_s
        self.max_ejection_percent = max_ejection_percent
        self.always_eject_one = always_eject_one

        self._now: float | None = None
        self._models: dict[str, Model] = {}  # in order of first add_replica
        self._pools: dict[tuple[str, str], Pool] = {}  # in order of first add_replica
        self._replicas: dict[str, Replica] = {}  # in add order
        self._requests: dict[str, Request] = {}  # queued or in flight
        self._arrivals: deque[Request] = deque()  # queued requests in seq order, stale ones skipped
        self._ejected: list[tuple[float, int, Replica]] = []  # heap of (until, tiebreak, replica)
        self._seq = 0
        self._in_flight = 0  # attempts in flight, all pools
        self._retries = 0  # attempts in flight numbered 2 or more
        self._queued = 0

    # ---- mutating calls ----

    def add_replica(self, now, replica_id: str, model: str, version: str,
                    capacity: int) -> list[Event]:
        self._check_now(now)
        _need_name("replica_id", replica_id)
        _need_name("model", model)
        _need_name("version", version)
        _need(replica_id not in self._replicas, f"replica {replica_id!r} was added before")
        _need(_is_int(capacity) and capacity >= 1,
              f"capacity must be an int >= 1, got {capacity!r}")
        events = self._clock_step(now)
        pool = self._pools.setdefault((model, version), Pool(model, version))
        self._models.setdefault(model, Model())
        replica = Replica(replica_id, pool, capacity)
        pool.replicas.append(replica)
        self._replicas[replica_id] = replica
        self._pump(events)
        return events

    def set_split(self, now, model: str, weights: dict[str, int]) -> list[Event]:
        self._check_now(now)
        state = self._model(model)
        _need(isinstance(weights, dict), f"weights must be a dict, got {type(weights).__name__}")
        for version, weight in weights.items():
            _need_name("version", version)
            _need(_is_int(weight) and weight >= 0,
                  f"weight of {version!r} must be an int >= 0, got {weight!r}")
            _need(weight == 0 or self._serving(model, version),
                  f"version {version!r} of {model!r} has no non-draining replica")
        _need(sum(weights.values()) == 100, f"weights must sum to 100, got {sum(weights.values())}")
        _need(state.status != "running", f"a rollout of {model!r} is running")
        events = self._clock_step(now)
        state.split = list(weights.items())
        self._pump(events)
        return events

    def submit(self, now, request_id: str, model: str, key: str, priority: int = 1) -> list[Event]:
        self._check_now(now)
        _need_name("request_id", request_id)
        _need_name("model", model)
        _need_name("key", key)
        _need(request_id not in self._requests, f"request {request_id!r} is queued or in flight")
        _need(model in self._models and self._models[model].split != [],
              f"model {model!r} has no split")
        _need(_is_int(priority) and 0 <= priority < PRIORITIES,
              f"priority must be an int in 0..3, got {priority!r}")
        events = self._clock_step(now)
        self._seq += 1
        request = Request(request_id, model, key, priority, self._seq, now)
        pool = self._pool_for(model, key)
        replica = self._candidate(pool)
        if not len(pool) and replica is not None:
            self._requests[request_id] = request
            self._dispatch(request, replica, "dispatch", events)
        elif len(pool) < self.queue_limit:
            self._enqueue(request, pool, events)
        elif (worst := pool.worst()) is not None and worst.priority > priority:
            self._unqueue(worst)
            events.append(Event("shed", worst.id, None, self._retry_after()))
            self._enqueue(request, pool, events)
        else:
            events.append(Event("reject", request_id, None, self._retry_after()))
        self._pump(events)
        return events

    def complete(self, now, request_id: str, ok: bool = True) -> list[Event]:
        self._check_now(now)
        _need_name("request_id", request_id)
        request = self._requests.get(request_id)
        _need(request is not None and request.replica is not None,
              f"request {request_id!r} is not in flight")
        _need(isinstance(ok, bool), f"ok must be a bool, got {ok!r}")
        events = self._clock_step(now)
        replica = request.replica
        self._leave(request)
        self._judge(replica, request, ok, now)
        self._record(replica, ok, now, events)
        if ok:
            events.append(Event("done", request_id, replica.id))
        elif (retry := self._retry_target(request)) is not None:
            self._dispatch(request, retry, "retry", events)
        else:
            events.append(Event("fail", request_id, replica.id))
        if request.replica is None:
            del self._requests[request_id]
        if replica.state == DRAINING and replica.in_flight == 0:
            self._remove(replica, events)
        self._pump(events)
        return events

    def tick(self, now) -> list[Event]:
        self._check_now(now)
        events = self._clock_step(now)
        self._pump(events)
        return events

    def drain(self, now, replica_id: str) -> list[Event]:
        self._check_now(now)
        replica = self._replica(replica_id)
        _need(replica.state not in (DRAINING, REMOVED),
              f"replica {replica_id!r} is already {replica.state}")
        events = self._clock_step(now)
        if replica.state not in (DRAINING, REMOVED):  # the clock step may have retired it
            self._retire(replica, events)
        self._pump(events)
        return events

    def start_rollout(self, now, model: str, version: str, steps: list[tuple[int, float]], *,
                      max_error_percent: int, window_s: float, min_requests: int) -> list[Event]:
        self._check_now(now)
        _need_name("model", model)
        _need_name("version", version)
        state = self._model(model)
        _need(len(state.split) == 1 and state.split[0][1] == 100,
              f"the split of {model!r} must be one version at 100, got {state.split}")
        _need(state.status != "running", f"a rollout of {model!r} is running")
        stable = state.split[0][0]
        _need(version != stable and self._serving(model, version),
              f"version {version!r} must differ from {stable!r} and have a non-draining replica")
        _need(isinstance(steps, list) and steps != [], "steps must be a non-empty list")
        last = 0
        for step in steps:
            _need(isinstance(step, tuple) and len(step) == 2,
                  f"a step must be a (weight, hold) tuple, got {step!r}")
            weight, hold = step
            _need(_is_int(weight) and last < weight <= 100,
                  f"step weights must be ints strictly increasing in 1..100, got {weight!r}")
            _need(_is_finite(hold) and hold > 0, f"a hold must be finite > 0, got {hold!r}")
            last = weight
        _need(_is_int(max_error_percent) and 0 <= max_error_percent <= 100,
              f"max_error_percent must be an int in 0..100, got {max_error_percent!r}")
        _need(_is_finite(window_s) and window_s > 0,
              f"window_s must be finite > 0, got {window_s!r}")
        _need(_is_int(min_requests) and min_requests >= 1,
              f"min_requests must be an int >= 1, got {min_requests!r}")
        events = self._clock_step(now)
        state.rollout = Rollout(stable, version, list(steps), max_error_percent, window_s,
                                min_requests, ends=now + steps[0][1])
        state.status = "running"
        state.split = [(stable, 100 - steps[0][0]), (version, steps[0][0])]
        self._pump(events)
        return events

    # ---- queries ----

    def version_for(self, model: str, key: str) -> str:
        state = self._model(model)
        _need_name("key", key)
        _need(state.split != [], f"model {model!r} has no split")
        b, total = bucket(key), 0
        for version, weight in state.split:
            total += weight
            if b < total:
                return version
        raise AssertionError("a split sums to 100")

    def split(self, model: str) -> list[tuple[str, int]]:
        return list(self._model(model).split)

    def in_flight(self, replica_id: str) -> int:
        return self._replica(replica_id).in_flight

    def queued(self, model: str, version: str) -> list[str]:
        self._model(model)
        _need_name("version", version)
        pool = self._pools.get((model, version))
        return [] if pool is None else pool.queued()

    def replica_state(self, replica_id: str) -> str:
        return self._replica(replica_id).state

    def rollout_status(self, model: str) -> str:
        return self._model(model).status

    # ---- the clock step and the pump ----

    def _clock_step(self, now: float) -> list[Event]:
        self._now = now
        events: list[Event] = []
        self._expire(now, events)
        while self._ejected and self._ejected[0][0] <= now:
            until, _, replica = heapq.heappop(self._ejected)
            if replica.state == EJECTED and replica.until == until:
                replica.state = PROBING
        for model, state in self._models.items():
            self._advance(model, state, now, events)
        self._pump(events)
        return events

    def _expire(self, now: float, events: list[Event]) -> None:
        if self.queue_timeout_s is None:
            return
        while self._arrivals:
            request = self._arrivals[0]
            if request.queued_in is None:  # dispatched, shed or already gone
                self._arrivals.popleft()
            elif now - request.enqueued_at >= self.queue_timeout_s:
                self._arrivals.popleft()
                self._unqueue(request)
                del self._requests[request.id]
                events.append(Event("timeout", request.id, None, self._retry_after()))
            else:
                return

    def _pump(self, events: list[Event]) -> None:
        for pool in self._pools.values():
            while (request := pool.best()) is not None:
                replica = self._candidate(pool)
                if replica is None:
                    break
                self._unqueue(request)
                self._dispatch(request, replica, "dispatch", events)

    def _candidate(self, pool: Pool, exclude: set[str] = frozenset()) -> Replica | None:
        """A probing replica free for its probe, else the least loaded healthy one with room."""
        best = None
        for r in pool.replicas:
            if r.id in exclude or r.in_flight >= r.capacity:
                continue
            if r.state == PROBING and r.probe is None:
                return r
            # in_flight / capacity compared by cross-multiplying: exact, no floats
            if r.state == HEALTHY and (
                    best is None or r.in_flight * best.capacity < best.in_flight * r.capacity):
                best = r
        return best

    # ---- requests ----

    def _enqueue(self, request: Request, pool: Pool, events: list[Event]) -> None:
        pool.queue[request.priority].append(request)
        request.queued_in = pool
        self._requests[request.id] = request
        self._arrivals.append(request)
        self._queued += 1
        events.append(Event("queue", request.id))

    def _unqueue(self, request: Request) -> None:
        """Take a request out of its queue: it is the head or the tail of its priority's deque,
        because timeouts go in seq order and enqueue times grow with seq."""
        q = request.queued_in.queue[request.priority]
        q.popleft() if q[0] is request else q.pop()
        request.queued_in = None
        self._queued -= 1

    def _dispatch(self, request: Request, replica: Replica, kind: str, events: list[Event]) -> None:
        request.attempt += 1
        request.replica = replica
        request.tried.add(replica.id)
        replica.in_flight += 1
        self._in_flight += 1
        self._retries += request.attempt >= 2
        if replica.state == PROBING:
            replica.probe = request.id
        events.append(Event(kind, request.id, replica.id))

    def _leave(self, request: Request) -> None:
        request.replica.in_flight -= 1
        self._in_flight -= 1
        self._retries -= request.attempt >= 2
        request.replica = None

    def _retry_target(self, request: Request) -> Replica | None:
        if request.attempt >= self.max_attempts:
            return None
        active = self._in_flight + self._queued
        allowed = max(active * self.retry_budget_percent // 100, self.min_retry_concurrency)
        if self._retries >= allowed:
            return None
        return self._candidate(self._pool_for(request.model, request.key), exclude=request.tried)

    # ---- replicas: outlier detection and draining ----

    def _judge(self, replica: Replica, request: Request, ok: bool, now: float) -> None:
        if replica.probe == request.id:
            replica.probe = None
            if ok:
                replica.state, replica.ejections = HEALTHY, 0
            else:
                self._eject(replica, now)  # a failed probe does not ask the cap again
        elif replica.state == HEALTHY and self.consecutive_failures is not None:
            replica.failures = 0 if ok else replica.failures + 1
            if replica.failures == self.consecutive_failures:
                replica.failures = 0
                if self._cap_allows(replica.pool):
                    self._eject(replica, now)

    def _cap_allows(self, pool: Pool) -> bool:
        members = [r for r in pool.replicas if r.state not in (DRAINING, REMOVED)]
        out = sum(r.state in (EJECTED, PROBING) for r in members)
        return ((out + 1) * 100 <= self.max_ejection_percent * len(members)
                or self.always_eject_one and out == 0)

    def _eject(self, replica: Replica, now: float) -> None:
        replica.ejections += 1
        replica.state = EJECTED
        replica.until = now + min(replica.ejections * self.base_ejection_s, self.max_ejection_s)
        heapq.heappush(self._ejected, (replica.until, id(replica), replica))

    def _retire(self, replica: Replica, events: list[Event], keep: Replica | None = None) -> None:
        replica.state, replica.probe, replica.failures = DRAINING, None, 0
        if replica.in_flight == 0 and replica is not keep:
            self._remove(replica, events)

    def _remove(self, replica: Replica, events: list[Event]) -> None:
        replica.state = REMOVED
        events.append(Event("removed", None, replica.id))

    # ---- rollouts ----

    def _advance(self, model: str, state: Model, now: float, events: list[Event]) -> None:
        rollout = state.rollout
        while state.status == "running" and now >= rollout.ends:
            rollout.step += 1
            if rollout.step == len(rollout.steps):
                state.status, state.split = "promoted", [(rollout.canary, 100)]
                self._hand_over(model, rollout.stable, rollout.canary, events)
            else:
                weight, hold = rollout.steps[rollout.step]
                rollout.ends += hold
                state.split = [(rollout.stable, 100 - weight), (rollout.canary, weight)]

    def _record(self, replica: Replica, ok: bool, now: float, events: list[Event]) -> None:
        state = self._models[replica.pool.model]
        rollout = state.rollout
        if state.status != "running" or replica.pool.version != rollout.canary:
            return
        records = rollout.records
        records.append((now, ok))
        rollout.failed += not ok
        while now - records[0][0] >= rollout.window_s:
            rollout.failed -= not records.popleft()[1]
        n = len(records)
        if n >= rollout.min_requests and rollout.failed * 100 > rollout.max_error_percent * n:
            state.status, state.split = "rolled_back", [(rollout.stable, 100)]
            self._hand_over(replica.pool.model, rollout.canary, rollout.stable, events,
                            keep=replica)

    def _hand_over(self, model: str, old: str, new: str, events: list[Event],
                   keep: Replica | None = None) -> None:
        """Retire the old version's replicas and move its queue, keeping priority, seq and
        enqueue time, into the new version's pool (over the limit if need be)."""
        source, target = self._pools[(model, old)], self._pools[(model, new)]
        for replica in source.replicas:
            if replica.state not in (DRAINING, REMOVED):
                self._retire(replica, events, keep)
        for p in range(PRIORITIES):
            merged = heapq.merge(target.queue[p], source.queue[p], key=lambda r: r.seq)
            target.queue[p] = deque(merged)
            source.queue[p].clear()
        for q in target.queue:
            for request in q:
                request.queued_in = target

    # ---- lookups and checks ----

    def _check_now(self, now: object) -> None:
        _need(_is_finite(now), f"now must be a finite number, got {now!r}")
        _need(self._now is None or now >= self._now, f"now went backwards: {now!r} < {self._now!r}")

    def _model(self, model: str) -> Model:
        _need_name("model", model)
        _need(model in self._models, f"unknown model {model!r}")
        return self._models[model]

    def _replica(self, replica_id: str) -> Replica:
        _need_name("replica_id", replica_id)
        _need(replica_id in self._replicas, f"unknown replica {replica_id!r}")
        return self._replicas[replica_id]

    def _serving(self, model: str, version: str) -> bool:
        pool = self._pools.get((model, version))
        return pool is not None and any(r.state not in (DRAINING, REMOVED) for r in pool.replicas)

    def _pool_for(self, model: str, key: str) -> Pool:
        return self._pools[(model, self.version_for(model, key))]

    def _retry_after(self) -> int | None:
        return None if self.retry_after_s is None else math.ceil(self.retry_after_s)
