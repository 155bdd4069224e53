"""The one greedy generation loop and its stop rules, shared by ToyLM and the fakes."""

from collections.abc import Callable, Sequence

ModelNext = Callable[[list[list[int]]], list[int]]


def generate_with(
    model_next: ModelNext,
    prompt: Sequence[int],
    max_tokens: int,
    stop_token: int | None = None,
    stop_sequence: Sequence[int] | None = None,
) -> list[int]:
    """Greedy continuation of `prompt`, one solo `model_next` call per token.

    After each new token: a `stop_token` ends generation and is dropped; else output ending
    with `stop_sequence` ends it with that sequence removed; else `max_tokens` tokens end it.
    """
    if max_tokens < 0:
        raise ValueError(f"max_tokens must be >= 0, got {max_tokens}")
    if stop_sequence is not None and len(stop_sequence) == 0:
        raise ValueError("stop_sequence must not be empty (pass None for no stop sequence)")
    stop = list(stop_sequence or [])
    out: list[int] = []
    while len(out) < max_tokens:
        token = model_next([[*prompt, *out]])[0]
        if token == stop_token:
            break
        out.append(token)
        if stop and out[-len(stop) :] == stop:
            del out[-len(stop) :]
            break
    return out
