"""The common interface of the memory strategies and the record of one turn.

Every strategy answers one question differently: *which messages go into this turn's request, and
what is kept for the next one?* Everything else is shared: the same developer instruction, the
customer's text in `<customer_message>` tags, the reply checked before anything is stored, and a
`CallMeter` that counts each model call. So the figures of different strategies are comparable.

    strategy.reply("Напомните номер заказа.")  # -> TurnRecord (request, reply, tokens, calls, time)
    strategy.stored_messages()                  # what the strategy keeps between turns
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import ClassVar, Protocol, runtime_checkable

from course_lib.chat_service import ChatService, normalize_user_text, validate_reply
from course_lib.messages import Message
from course_lib.llm.errors import LLMClientError
from course_lib.pricing import Price
from course_lib.prompts.support_chat import SUPPORT_CHAT_PROMPT
from course_lib.prompts.template import PromptTemplate
from course_lib.strategies.metering import CallMeter, GeneratingClient, ModelCall


class StrategyError(RuntimeError):
    """A turn could not be completed; the strategy's stored state is unchanged."""


@dataclass(frozen=True)
class TurnRecord:
    """One turn of one strategy: what was sent, what came back, and what it cost."""

    turn: int
    user_text: str
    reply_text: str
    request: tuple[Message, ...]
    """The chat request of this turn (instruction included), as the model received it."""
    prompt_tokens: int
    completion_tokens: int
    summary_calls: int = 0
    summary_prompt_tokens: int = 0
    summary_completion_tokens: int = 0
    cached_tokens: int = 0
    """Input tokens of the chat call served from the provider's prompt cache."""
    summary_cached_tokens: int = 0
    prepare_seconds: float = 0.0
    """Time the application spent on this turn outside model calls (building the request)."""

    @property
    def model_calls(self) -> int:
        return 1 + self.summary_calls

    @property
    def input_tokens(self) -> int:
        """Everything sent to the model this turn: the chat request plus any summary request."""
        return self.prompt_tokens + self.summary_prompt_tokens

    def cost(self, price: Price, *, with_cache: bool = True) -> float:
        """USD for this turn's calls; without the cache every input token is billed in full."""
        return price.cost(
            self.prompt_tokens, self.completion_tokens, self.cached_tokens if with_cache else 0
        ) + price.cost(
            self.summary_prompt_tokens,
            self.summary_completion_tokens,
            self.summary_cached_tokens if with_cache else 0,
        )


@runtime_checkable
class MemoryStrategy(Protocol):
    """What the comparison needs from a strategy."""

    name: str
    title: str

    def reply(self, user_text: str) -> TurnRecord: ...

    def stored_messages(self) -> tuple[Message, ...]: ...


class StrategyBase(ABC):
    """Shared mechanics: the instruction, message building, reply checks and metering.

    A subclass implements `_reply(text)`: build the request, call `self._chat(request)`, and only
    then update its own state.
    """

    name: ClassVar[str]
    title: ClassVar[str]

    def __init__(self, llm_client: GeneratingClient, prompt: PromptTemplate = SUPPORT_CHAT_PROMPT) -> None:
        self._meter = CallMeter(llm_client)
        self._chat_client = self._meter.client("chat")
        self._prompt = prompt
        self._developer_message: Message = {"role": "developer", "content": prompt.render()}
        self._turns = 0

    @property
    def calls(self) -> tuple[ModelCall, ...]:
        """Every model call this strategy made, in order."""
        return self._meter.calls

    def reply(self, user_text: str) -> TurnRecord:
        text = normalize_user_text(user_text, StrategyError)
        (request, reply_text), calls, own_seconds = self._meter.measure(lambda: self._reply(text))
        self._turns += 1
        chat_call = next(call for call in reversed(calls) if call.purpose == "chat")
        summary_calls = [call for call in calls if call.purpose == "summary"]
        return TurnRecord(
            turn=self._turns,
            user_text=text,
            reply_text=reply_text,
            request=tuple(request),
            prompt_tokens=chat_call.prompt_tokens,
            completion_tokens=chat_call.completion_tokens,
            summary_calls=len(summary_calls),
            summary_prompt_tokens=sum(call.prompt_tokens for call in summary_calls),
            summary_completion_tokens=sum(call.completion_tokens for call in summary_calls),
            cached_tokens=chat_call.cached_tokens,
            summary_cached_tokens=sum(call.cached_tokens for call in summary_calls),
            prepare_seconds=own_seconds,
        )

    @abstractmethod
    def _reply(self, text: str) -> tuple[list[Message], str]:
        """Answer one customer message: return the chat request sent and the checked reply text."""

    @abstractmethod
    def stored_messages(self) -> tuple[Message, ...]:
        """What the strategy keeps between turns (the instruction is not stored)."""

    def snapshot(self) -> object:
        """The strategy's state, to `restore` after a what-if turn (the memory benchmark asks each
        question on the same state). Lists and dicts are copied: `_reply` may extend them in place."""
        return {key: (value.copy() if isinstance(value, (list, dict)) else value) for key, value in vars(self).items()}

    def restore(self, state: object) -> None:
        vars(self).update(state)  # type: ignore[arg-type]

    def _chat(self, request: list[Message]) -> str:
        try:
            result = self._chat_client.generate(request)
        except LLMClientError as error:
            raise StrategyError(f"Не удалось получить ответ модели: {error}") from error
        return validate_reply(result, StrategyError)


def user_message(text: str) -> Message:
    """The customer's text as data, exactly as `ChatService` sends it."""
    return ChatService.build_user_message(text)


def assistant_message(text: str) -> Message:
    return {"role": "assistant", "content": text}
