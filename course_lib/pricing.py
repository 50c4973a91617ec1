"""What a reply costs: prices per million tokens, and prompt caching's discount.

Defaults are the list prices (USD per 1M tokens) of the models the README names; override or add
models with `MODEL_PRICES` in `.env`, as JSON: `{"my-model": [input, cached_input, output]}`.
A model with no price shows no cost (never a guessed one).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class Price:
    """USD per one million tokens."""

    input: float
    cached_input: float
    output: float

    def cost(self, prompt_tokens: int, completion_tokens: int, cached_tokens: int = 0) -> float:
        """Cached input tokens are part of `prompt_tokens` and billed at the cached price."""
        cached = min(max(cached_tokens, 0), prompt_tokens)
        return (
            (prompt_tokens - cached) * self.input
            + cached * self.cached_input
            + completion_tokens * self.output
        ) / 1_000_000


DEFAULT_PRICES: dict[str, Price] = {
    "gpt-4.1": Price(2.00, 0.50, 8.00),
    "gpt-4.1-mini": Price(0.40, 0.10, 1.60),
    "gpt-4.1-nano": Price(0.10, 0.025, 0.40),
    "gpt-4o": Price(2.50, 1.25, 10.00),
    "gpt-4o-mini": Price(0.15, 0.075, 0.60),
}


def price_for(model: str, prices: Mapping[str, Price]) -> Price | None:
    """The price of `model`; a dated snapshot ("gpt-4.1-2025-04-14") takes its family's price."""
    if model in prices:
        return prices[model]
    # The longest family name that prefixes the model: "gpt-4.1-mini-…" is not priced as "gpt-4.1".
    families = sorted((name for name in prices if model.startswith(name + "-")), key=len, reverse=True)
    for family in families:
        suffix = model[len(family) + 1 :]
        if suffix[:4].isdigit():  # a date, not another model of the family
            return prices[family]
    return None


def format_usd(amount: float | None) -> str:
    return "—" if amount is None else f"${amount:.6f}".replace(".", ",")
