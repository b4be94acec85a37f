"""Token usage of this process, per provider and model (the model that answered)."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, TypedDict, cast

from .._core.turn import Tokens, Turn, Usage
from ..providers._prices import token_cost

if TYPE_CHECKING:
    from ..providers._base import Provider

__all__ = [
    "ModelUsage",
    "TokenUsage",
    "TokensDict",
    "conversation_cost",
    "format_tokens",
    "record_usage",
    "reset_token_usage",
    "served_model",
    "token_usage",
    "tokens_by_turn",
    "usage_of",
]

_lock = threading.Lock()


@dataclass(slots=True)
class _Totals:
    usage: Usage
    tokens: Tokens
    cost: float | None


# By (provider key, model): the provider's name is kept with its totals, for token_usage().
_usage: dict[tuple[str, str], tuple[str, _Totals]] = {}


class TokenUsage(TypedDict):
    """Tokens one model used in this process (chatlas's ``TokenUsage``, and one key more).

    ``input``, ``output`` and ``cached_input`` add up the turns' ``tokens`` as chatlas
    counts them: ``input`` includes cache writes at their price multiplier, and
    ``cached_input`` is what was read from the prompt cache. ``cache_creation`` counts
    the tokens written to the cache. ``cost`` is in USD, None when no price is known
    for the model (see :func:`~chatlas_like.set_token_price`).
    """

    name: str
    model: str
    input: int
    output: int
    cached_input: int
    cache_creation: int
    cost: float | None


ModelUsage = TokenUsage
"""The earlier name of :class:`TokenUsage`."""


class TokensDict(TypedDict):
    """One turn's tokens, as ``Chat.get_tokens()`` reports them (chatlas's shape).

    ``tokens`` is what is new in the turn, ``tokens_total`` all that was sent (user) or
    produced (assistant), ``tokens_cached`` the input read from the prompt cache.
    """

    role: Literal["user", "assistant"]
    tokens: int
    tokens_cached: int
    tokens_total: int


def format_tokens(tokens: Tokens | None, cost: float | None) -> str:
    """``input=12+3 output=5 cost=$0.0001`` (cached input after the ``+``), or ""."""
    if tokens is None:
        return ""
    text = f"input={tokens[0]}" + (f"+{tokens[2]}" if tokens[2] else "")
    text += f" output={tokens[1]}"
    return text + (f" cost=${cost:.4f}" if cost is not None else "")


def record_usage(
    provider: str, model: str, usage: Usage, tokens: Tokens, cost: float | None
) -> None:
    """Add one call's tokens and cost to the process's totals (``provider``: its name,
    ``"Anthropic"``, which :func:`token_usage` reports; kept by its key, in lower case)."""
    with _lock:
        key = (provider.lower(), model)
        found = _usage.get(key)
        if found is None:
            _usage[key] = (provider, _Totals(usage, tokens, cost))
            return
        seen = found[1]
        seen.usage = seen.usage + usage
        seen.tokens = (
            seen.tokens[0] + tokens[0],
            seen.tokens[1] + tokens[1],
            seen.tokens[2] + tokens[2],
        )
        if cost is not None:
            seen.cost = cost if seen.cost is None else seen.cost + cost


def token_usage() -> list[TokenUsage] | None:
    """Tokens used in this process, one entry per provider and model.

    Returns
    -------
    list[TokenUsage] | None
        Per model, in the order first used, with its cost where the price is known;
        None when nothing was sent yet (as chatlas).
    """
    with _lock:
        items = [
            (name, model, _Totals(t.usage, t.tokens, t.cost))
            for (_, model), (name, t) in _usage.items()
        ]
    if not items:
        return None
    return [
        TokenUsage(
            name=name,
            model=model,
            input=t.tokens[0],
            output=t.tokens[1],
            cached_input=t.tokens[2],
            cache_creation=t.usage.cache_creation,
            cost=t.cost,
        )
        for name, model, t in items
    ]


def reset_token_usage() -> None:
    """Forget the process's token totals."""
    with _lock:
        _usage.clear()


# -- one conversation --------------------------------------------------------------------------


def usage_of(turns: Sequence[Turn]) -> Usage:
    """All four token counts of ``turns``, summed."""
    total = Usage()
    for turn in turns:
        if turn.usage is not None:
            total = total + turn.usage
    return total


def tokens_by_turn(turns: Sequence[Turn]) -> list[TokensDict]:
    """``Chat.get_tokens()``: each user and assistant turn's tokens, as chatlas reports them."""
    complete = _complete_pairs(turns)
    if not complete:
        return []
    hint = (
        " This happens when the history was set by hand (set_turns()); each "
        "assistant turn's `tokens` (from get_turns()) still has its counts."
    )
    if len(complete) % 2 or any(
        t.role != ("user" if i % 2 == 0 else "assistant") for i, t in enumerate(complete)
    ):
        raise ValueError("Expected user and assistant turns in turn." + hint)
    answers = complete[1::2]
    if any(t.tokens is None for t in answers):
        raise ValueError("Expected every assistant turn to have token counts." + hint)
    found: list[TokensDict] = []
    before: Tokens | None = None
    for answer in answers:
        tokens = cast(Tokens, answer.tokens)
        sent = tokens[0] - sum(before) if before is not None else tokens[0]
        found.append(
            {"role": "user", "tokens": sent, "tokens_cached": tokens[2], "tokens_total": tokens[0]}
        )
        found.append(
            {
                "role": "assistant",
                "tokens": tokens[1],
                "tokens_cached": 0,
                "tokens_total": tokens[1],
            }
        )
        before = tokens
    return found


def _complete_pairs(turns: Sequence[Turn]) -> list[Turn]:
    """``turns`` without partial answers and the turns they answer (as chatlas counts)."""
    dropped: set[int] = set()
    for i, turn in enumerate(turns):
        if turn.is_partial:
            dropped.update((i, i - 1))
    return [t for i, t in enumerate(turns) if i not in dropped]


def conversation_cost(
    turns: Sequence[Turn],
    provider: Provider,
    *,
    include: Literal["all", "last"] = "all",
    token_price: tuple[float, float, float] | None = None,
) -> float:
    """``Chat.get_cost()``: what the answers among ``turns`` cost in USD."""
    if include not in ("all", "last"):
        raise ValueError(f"include must be 'all' or 'last', got {include!r}")
    answers = [t for t in turns if t.role == "assistant" and not t.is_partial]
    if include == "last":
        answers = answers[-1:]
    return sum((_turn_cost(t, provider, token_price) for t in answers), 0.0)


def served_model(turn: Turn, provider: Provider) -> str:
    """The model that answered (the one asked for, unless the provider says other)."""
    served = (turn.completion_data or {}).get("model")
    return str(served) if served else provider.model


def _turn_cost(
    turn: Turn, provider: Provider, token_price: tuple[float, float, float] | None
) -> float:
    tokens = turn.tokens
    if token_price is not None:
        if tokens is None:
            raise ValueError("a turn without token counts has no cost to compute")
        inp, out, cached = token_price
        return tokens[0] * (inp / 1e6) + tokens[1] * (out / 1e6) + tokens[2] * (cached / 1e6)
    if turn.cost is not None:
        return turn.cost
    if tokens is None:
        raise ValueError("a turn without token counts or a cost has no cost to compute")
    model = served_model(turn, provider)
    cost = token_cost(provider.key, model, tokens)
    if cost is None:
        raise KeyError(
            f"No price is known for {provider.name} model {model!r}: pass "
            "token_price=(input, output, cached_input) in USD per million tokens, "
            "or set one with chatlas_like.set_token_price()."
        )
    return cost
