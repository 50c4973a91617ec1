"""`MemoryExtractor`: asks the model which lasting facts a turn revealed, and checks the answer."""

from __future__ import annotations

from collections.abc import Sequence

from course_lib.llm.client import LLMClient, LLMResult, Message, generate_with_model
from course_lib.llm.errors import LLMClientError
from course_lib.memory.facts import (
    ExtractedFact,
    MemoryExtractionError,
    ScreenedFacts,
    extraction_response_format,
    parse_extraction,
    screen_facts,
)
from course_lib.prompts.tags import unwrap_tag, wrap_in_tag
from course_lib.prompts.template import PromptTemplate
from course_lib.prompts.user_memory_extraction import USER_MEMORY_EXTRACTION_PROMPT


class MemoryExtractor:
    def __init__(
        self,
        llm_client: LLMClient,
        *,
        prompt: PromptTemplate = USER_MEMORY_EXTRACTION_PROMPT,
        model: str | None = None,
    ) -> None:
        self._llm_client = llm_client
        self.prompt = prompt
        self.model = model
        self._instruction = prompt.render()

    def extract(self, customer_texts: Sequence[str]) -> tuple[list[ExtractedFact], LLMResult]:
        """Facts in the customer's words (support's replies are not sources of facts about them).

        Only facts grounded in those words are returned (see `extract_screened` for the rest).
        """
        screened, result = self.extract_screened(customer_texts)
        return [*screened.stated, *screened.asked], result

    def extract_screened(self, customer_texts: Sequence[str]) -> tuple[ScreenedFacts, LLMResult]:
        """The model's facts sorted by the customer's words: stated, only asked about, rejected."""
        result, facts = self._extract(customer_texts)
        spoken = "\n".join(unwrap_tag("customer_message", text).strip() for text in customer_texts)
        return screen_facts(facts, spoken), result

    def _extract(self, customer_texts: Sequence[str]) -> tuple[LLMResult, list[ExtractedFact]]:
        if not customer_texts:
            raise MemoryExtractionError("Нет сообщений клиента для извлечения фактов.")
        request: list[Message] = [
            {"role": "developer", "content": self._instruction},
            {"role": "user", "content": build_memory_source(customer_texts)},
        ]
        try:
            result = generate_with_model(
                self._llm_client, request, self.model, response_format=extraction_response_format()
            )
        except LLMClientError as error:
            raise MemoryExtractionError(f"Не удалось извлечь факты: {error}") from error
        if result.finish_reason != "stop":
            raise MemoryExtractionError(
                f"Модель не закончила ответ с фактами (finish_reason={result.finish_reason})."
            )
        return result, parse_extraction(result.text)


def build_memory_source(customer_texts: Sequence[str]) -> str:
    """The extraction request's data: the customer's lines in one `<memory_source>` block."""
    lines = "\n".join(
        f"Клиент: {unwrap_tag('customer_message', text).strip()}" for text in customer_texts
    )
    return wrap_in_tag("memory_source", lines)
