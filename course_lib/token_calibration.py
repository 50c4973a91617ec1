"""`TokenCalibration`: how far the course's token estimate is from what a provider really counts.

`TokenCounter` counts with tiktoken's `o200k_base` and the 3 + 3 rule: exact for OpenAI's current
models, an estimate for everything else. A model with another tokenizer can count Russian text
2–3 times higher (a llama.cpp server with SmolLM2: estimate 174, `prompt_tokens` 452), and a budget
kept in estimated tokens then overflows the model's real context.

After every call the service reports (estimate, the provider's `usage.prompt_tokens`). The
correction factor for a model is the largest ratio among its recent calls, times a safety margin —
unless every count so far matched the estimate exactly (the same tokenizer and message format),
in which case the estimate is trusted as it is. The window then compares `estimate × factor` with
the budget, so the budget holds in the provider's tokens.
"""

from __future__ import annotations

import math
import threading
from collections import deque
from dataclasses import dataclass

from course_lib.russian import decimal


@dataclass(frozen=True)
class CalibrationEvidence:
    """What the correction of one model rests on: visible in the console and the inspector."""

    model: str
    samples: int
    factor: float
    last_estimate: int | None
    last_actual: int | None
    exact: bool
    """Every provider count so far equalled the estimate: no correction needed."""

    def describe(self) -> str:
        if self.samples == 0:
            return "поправки ещё нет: провайдер не вернул ни одного usage.prompt_tokens"
        if self.exact:
            return f"оценка совпадает с провайдером (замеров: {self.samples}), поправка ×1"
        return (
            f"поправка ×{decimal(self.factor)} (замеров: {self.samples}; "
            f"последний: оценка {self.last_estimate} → провайдер {self.last_actual})"
        )


class TokenCalibration:
    def __init__(self, *, margin: float = 1.05, window: int = 20) -> None:
        if not margin >= 1.0:
            raise ValueError("Запас поправки (margin) не может быть меньше 1.")
        if isinstance(window, bool) or not isinstance(window, int) or window < 1:
            raise ValueError("window должен быть целым числом не меньше 1.")
        self.margin = margin
        self._window = window
        self._samples: dict[str, deque[tuple[int, int]]] = {}
        self._lock = threading.Lock()

    def observe(self, model: str, estimate: int, actual: int | None) -> None:
        """Record one call; calls without usage, or with nonsense figures, teach nothing."""
        if actual is None or estimate <= 0 or actual <= 0:
            return
        with self._lock:
            self._samples.setdefault(model, deque(maxlen=self._window)).append((estimate, actual))

    def factor(self, model: str) -> float:
        return self.evidence(model).factor

    def evidence(self, model: str) -> CalibrationEvidence:
        with self._lock:
            samples = list(self._samples.get(model, ()))
        if not samples:
            return CalibrationEvidence(model, 0, 1.0, None, None, exact=False)
        last_estimate, last_actual = samples[-1]
        if all(estimate == actual for estimate, actual in samples):
            return CalibrationEvidence(model, len(samples), 1.0, last_estimate, last_actual, exact=True)
        worst = max(actual / estimate for estimate, actual in samples)
        # Rounded up to 0.01 (never below the evidence); round() first drops float noise (2.6 × 1.05).
        factor = math.ceil(round(worst * self.margin * 100, 6)) / 100
        return CalibrationEvidence(model, len(samples), factor, last_estimate, last_actual, exact=False)


def corrected(estimate: int, factor: float) -> int:
    """The estimate in the provider's tokens."""
    return estimate if factor == 1.0 else math.ceil(estimate * factor)


def tokenizer_ratio(client: object, instruction: str | None = None) -> float:
    """How many tokens the active model counts per token of the course's estimate, measured on the
    support instruction (1.0 for the offline model and api.openai.com, which count like the course,
    and when the server cannot tell)."""
    if not getattr(client, "needs_token_probe", False):
        return 1.0
    from course_lib.prompts.support_chat import SUPPORT_CHAT_PROMPT
    from course_lib.tokenizer import TokenCounter

    message = {"role": "developer", "content": instruction or SUPPORT_CHAT_PROMPT.render()}
    actual = client.measure_prompt_tokens([message])  # type: ignore[attr-defined]
    estimate = TokenCounter().count_messages([message])
    if not actual or not estimate:
        return 1.0
    return max(1.0, actual / estimate)


def demo_budget(client: object, offline_budget: int, instruction: str | None = None) -> int:
    """A lesson's demo budget on the active model: `offline_budget` as written for the offline
    model, scaled by the model's tokenizer (see `tokenizer_ratio`).

    A budget of 300 holds the instruction and a few turns offline; a small local model counts
    Russian text 2–3 times higher, and the same 300 would make every turn compress. Offline the
    result is exactly `offline_budget`, so the notebooks' stored outputs do not change.
    """
    if isinstance(offline_budget, bool) or not isinstance(offline_budget, int) or offline_budget <= 0:
        raise ValueError("Бюджет должен быть целым числом больше нуля.")
    return math.ceil(offline_budget * tokenizer_ratio(client, instruction))
