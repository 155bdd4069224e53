"""Fair queueing across tenants: deficit round robin, virtual token counters, guaranteed shares."""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Hashable, Mapping


def _check_int(name: str, value: object, low: int) -> None:
    # bool is an int subclass, but True as a cost or a quantum is a bug, not a number.
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise ValueError(f"{name} must be an int >= {low}, got {value!r}")


def _check_positive(name: str, value: object) -> None:
    if (isinstance(value, bool) or not isinstance(value, (int, float))
            or not math.isfinite(value) or value <= 0):
        raise ValueError(f"{name} must be a finite positive number, got {value!r}")


class DeficitRoundRobin:
    """Tenants take turns; each visit adds `quantum` tokens of credit, and a request is served
    only when its cost fits the credit, so big requests cannot buy more than their turns."""

    def __init__(self, quantum: int):
        _check_int("quantum", quantum, 1)
        self.quantum = quantum
        self._queues: dict[Hashable, deque[tuple[Hashable, int]]] = {}
        self._deficit: dict[Hashable, int] = {}
        self._active: deque[Hashable] = deque()  # backlogged tenants; the front is visited
        self._visiting = False  # has the front tenant's visit begun (its quantum credited)?
        self._ids: set[Hashable] = set()

    def push(self, tenant: Hashable, request_id: Hashable, cost: int) -> None:
        _check_int("cost", cost, 1)
        if request_id in self._ids:
            raise ValueError(f"request_id {request_id!r} is already queued")
        queue = self._queues.setdefault(tenant, deque())
        if not queue:  # newly backlogged: to the back of the round, with no credit
            self._active.append(tenant)
            self._deficit[tenant] = 0
        queue.append((request_id, cost))
        self._ids.add(request_id)

    def pop(self) -> tuple[Hashable, Hashable] | None:
        while self._active:
            tenant = self._active[0]
            queue = self._queues[tenant]
            if not self._visiting:
                self._deficit[tenant] += self.quantum
                self._visiting = True
            request_id, cost = queue[0]
            if cost <= self._deficit[tenant]:
                queue.popleft()
                self._ids.discard(request_id)
                self._deficit[tenant] -= cost
                if not queue:  # an emptied tenant leaves at once; its credit is not kept
                    self._active.popleft()
                    self._visiting = False
                return tenant, request_id
            self._active.rotate(-1)  # the head does not fit: the visit ends, credit is kept
            self._visiting = False
        return None

    def __len__(self) -> int:
        return len(self._ids)


class VirtualTokenCounter:
    """Serve the backlogged tenant that has received the least weighted service so far."""

    def __init__(self, weights: Mapping[Hashable, float] | None = None, *,
                 input_price: float = 1.0, output_price: float = 2.0):
        weights = dict(weights or {})
        for tenant, w in weights.items():
            _check_positive(f"weight of {tenant!r}", w)
        _check_positive("input_price", input_price)
        _check_positive("output_price", output_price)
        self.input_price, self.output_price = input_price, output_price
        self._weights = weights
        self._counters: dict[Hashable, float] = {}
        self._rank: dict[Hashable, int] = {}  # order of first push: breaks ties
        self._queues: dict[Hashable, deque[tuple[Hashable, int]]] = {}
        self._backlogged: dict[Hashable, None] = {}
        self._last: Hashable | None = None  # the tenant served last
        self._served = False
        self._ids: set[Hashable] = set()

    def push(self, tenant: Hashable, request_id: Hashable, prompt_tokens: int) -> None:
        _check_int("prompt_tokens", prompt_tokens, 0)
        if request_id in self._ids:
            raise ValueError(f"request_id {request_id!r} is already queued")
        if tenant not in self._counters:
            self._counters[tenant] = 0.0
            self._rank[tenant] = len(self._rank)
            self._queues[tenant] = deque()
        if not self._queues[tenant]:
            self._lift(tenant)
            self._backlogged[tenant] = None
        self._queues[tenant].append((request_id, prompt_tokens))
        self._ids.add(request_id)

    def pop(self) -> tuple[Hashable, Hashable] | None:
        return self._serve(self._backlogged) if self._backlogged else None

    def charge(self, tenant: Hashable, output_tokens: int) -> None:
        if tenant not in self._counters:
            raise KeyError(tenant)
        _check_int("output_tokens", output_tokens, 0)
        self._counters[tenant] += self._price(tenant, output_tokens, self.output_price)

    def counter(self, tenant: Hashable) -> float:
        return self._counters[tenant]

    def __len__(self) -> int:
        return len(self._ids)

    def _price(self, tenant: Hashable, tokens: int, price: float) -> float:
        return tokens * price / self._weights.get(tenant, 1.0)

    def _lift(self, tenant: Hashable) -> None:
        """A tenant that was idle rejoins no lower than the others: idle time is not banked."""
        others = [self._counters[t] for t in self._backlogged]
        if others:
            floor = min(others)
        elif self._served:
            floor = self._counters[self._last]
        else:
            return
        self._counters[tenant] = max(self._counters[tenant], floor)

    def _serve(self, tenants) -> tuple[Hashable, Hashable]:
        """Serve the lowest counter among `tenants` (all backlogged); ties to the first seen."""
        tenant = min(tenants, key=lambda t: (self._counters[t], self._rank[t]))
        queue = self._queues[tenant]
        request_id, prompt_tokens = queue.popleft()
        if not queue:
            del self._backlogged[tenant]
        self._ids.discard(request_id)
        self._counters[tenant] += self._price(tenant, prompt_tokens, self.input_price)
        self._last, self._served = tenant, True
        return tenant, request_id


class QueueFull(Exception):
    """A tenant already has `max_queued` requests waiting."""


class FairScheduler:
    """`capacity` slots: each tenant is guaranteed floor(capacity * w / sum w) of them, and a
    slot nobody below their share wants is lent to whoever waits, lowest virtual counter first."""

    def __init__(self, capacity: int, weights: Mapping[Hashable, float], *, max_queued: int,
                 input_price: float = 1.0, output_price: float = 2.0):
        _check_int("capacity", capacity, 1)
        _check_int("max_queued", max_queued, 1)
        if not weights:
            raise ValueError("weights must name at least one tenant")
        self._vtc = VirtualTokenCounter(weights, input_price=input_price,
                                        output_price=output_price)
        self.capacity, self.max_queued = capacity, max_queued
        total = sum(weights.values())
        self._share = {t: math.floor(capacity * w / total) for t, w in weights.items()}
        self._count = dict.fromkeys(weights, 0)
        self._running: dict[Hashable, Hashable] = {}  # request_id -> tenant

    def push(self, tenant: Hashable, request_id: Hashable, prompt_tokens: int) -> None:
        self._check_named(tenant)
        if request_id in self._running:
            raise ValueError(f"request_id {request_id!r} is already running")
        queue = self._vtc._queues.get(tenant, ())
        if len(queue) >= self.max_queued:
            raise QueueFull(f"tenant {tenant!r} already has {self.max_queued} requests waiting")
        self._vtc.push(tenant, request_id, prompt_tokens)

    def admit(self) -> list[tuple[Hashable, Hashable]]:
        admitted = []
        while len(self._running) < self.capacity and self._vtc._backlogged:
            waiting = self._vtc._backlogged
            under = [t for t in waiting if self._count[t] < self._share[t]]
            # Tenants below their share first: that is how a lent share comes back.
            tenant, request_id = self._vtc._serve(under or waiting)
            self._running[request_id] = tenant
            self._count[tenant] += 1
            admitted.append((tenant, request_id))
        return admitted

    def complete(self, request_id: Hashable) -> None:
        tenant = self._running.pop(request_id)  # KeyError if it is not running
        self._count[tenant] -= 1

    def charge(self, tenant: Hashable, output_tokens: int) -> None:
        self._check_named(tenant)
        self._vtc.charge(tenant, output_tokens)

    def running(self, tenant: Hashable) -> int:
        self._check_named(tenant)
        return self._count[tenant]

    def guaranteed(self, tenant: Hashable) -> int:
        self._check_named(tenant)
        return self._share[tenant]

    def _check_named(self, tenant: Hashable) -> None:
        if tenant not in self._share:
            raise KeyError(tenant)
