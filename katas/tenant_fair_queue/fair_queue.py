"""Fair queueing across tenants. Read the prompt: `kata show tenant_fair_queue`.

Level 1: DeficitRoundRobin. Level 2: VirtualTokenCounter. Level 3: FairScheduler and QueueFull.
Standard library only.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping


class DeficitRoundRobin:
    """Deficit round robin over tenants; one unit of cost is one token."""

    def __init__(self, quantum: int):
        """`quantum`: the credit a tenant receives once per visit (an int >= 1)."""
        raise NotImplementedError

    def push(self, tenant: Hashable, request_id: Hashable, cost: int) -> None:
        """Queue a request of `cost` tokens (an int >= 1) behind the tenant's earlier ones."""
        raise NotImplementedError

    def pop(self) -> tuple[Hashable, Hashable] | None:
        """Serve one request: `(tenant, request_id)`, or None when nothing is queued."""
        raise NotImplementedError

    def __len__(self) -> int:
        """How many requests are queued."""
        raise NotImplementedError


class VirtualTokenCounter:
    """Serve the backlogged tenant with the lowest weighted counter of tokens served."""

    def __init__(self, weights: Mapping[Hashable, float] | None = None, *,
                 input_price: float = 1.0, output_price: float = 2.0):
        """`weights.get(tenant, 1.0)` is a tenant's weight; prices are per token."""
        raise NotImplementedError

    def push(self, tenant: Hashable, request_id: Hashable, prompt_tokens: int) -> None:
        """Queue a request; a tenant that becomes backlogged may have its counter lifted."""
        raise NotImplementedError

    def pop(self) -> tuple[Hashable, Hashable] | None:
        """Serve the lowest counter's head request, charging its prompt tokens; None if empty."""
        raise NotImplementedError

    def charge(self, tenant: Hashable, output_tokens: int) -> None:
        """Add the price of `output_tokens` generated tokens to the tenant's counter."""
        raise NotImplementedError

    def counter(self, tenant: Hashable) -> float:
        """The tenant's current counter (KeyError for a tenant never pushed)."""
        raise NotImplementedError

    def __len__(self) -> int:
        """How many requests are queued."""
        raise NotImplementedError


class QueueFull(Exception):
    """Raised by FairScheduler.push when the tenant already has max_queued requests waiting."""


class FairScheduler:
    """`capacity` slots shared by the tenants named in `weights`, with guaranteed shares."""

    def __init__(self, capacity: int, weights: Mapping[Hashable, float], *, max_queued: int,
                 input_price: float = 1.0, output_price: float = 2.0):
        raise NotImplementedError

    def push(self, tenant: Hashable, request_id: Hashable, prompt_tokens: int) -> None:
        """Queue a request (QueueFull if the tenant already has max_queued waiting)."""
        raise NotImplementedError

    def admit(self) -> list[tuple[Hashable, Hashable]]:
        """Fill every free slot now; return the admitted `(tenant, request_id)` in order."""
        raise NotImplementedError

    def complete(self, request_id: Hashable) -> None:
        """Free the slot of a running request (KeyError if it is not running)."""
        raise NotImplementedError

    def charge(self, tenant: Hashable, output_tokens: int) -> None:
        """Add the price of generated tokens to the tenant's counter."""
        raise NotImplementedError

    def running(self, tenant: Hashable) -> int:
        """How many of the tenant's requests are running."""
        raise NotImplementedError

    def guaranteed(self, tenant: Hashable) -> int:
        """The tenant's guaranteed share: floor(capacity * weight / sum of all weights)."""
        raise NotImplementedError
