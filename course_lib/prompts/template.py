"""`PromptTemplate`: a prompt's text with its id, version and the variables it needs."""

from __future__ import annotations

import string
from dataclasses import dataclass


class PromptTemplateError(ValueError):
    """A prompt cannot be rendered or found."""


@dataclass(frozen=True)
class PromptTemplate:
    prompt_id: str
    version: str
    body: str
    required_variables: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        placeholders = _placeholders(self.body)
        if placeholders != set(self.required_variables):
            raise PromptTemplateError(
                f"Промпт {self.prompt_id}@{self.version}: переменные в тексте {sorted(placeholders)} "
                f"не совпадают с required_variables {sorted(self.required_variables)}."
            )

    @property
    def label(self) -> str:
        """`prompt_id@version`, the form logs and the console show."""
        return f"{self.prompt_id}@{self.version}"

    def render(self, **variables: object) -> str:
        """Substitute `{name}` placeholders; missing or unexpected variables are an error."""
        given = set(variables)
        missing = sorted(set(self.required_variables) - given)
        unexpected = sorted(given - set(self.required_variables))
        if missing:
            raise PromptTemplateError(f"Промпт {self.label}: не хватает переменных {missing}.")
        if unexpected:
            raise PromptTemplateError(f"Промпт {self.label}: лишние переменные {unexpected}.")
        if not self.required_variables:
            return self.body  # no placeholders: braces in the text stay as written
        return self.body.format(**variables)


def _placeholders(body: str) -> set[str]:
    """`{name}` fields of the body. Braces around anything else (a JSON example) are literal text."""
    try:
        fields = [field for _, field, _, _ in string.Formatter().parse(body) if field]
    except ValueError:  # unbalanced braces: no placeholders can be meant
        return set()
    return {field for field in fields if field.isidentifier()}


def select_version(
    prompts: dict[str, PromptTemplate], active: str, version: str | None, prompt_id: str
) -> PromptTemplate:
    """Shared registry lookup: the active version by default, a clear error for an unknown one."""
    selected = active if version is None else version.strip()
    try:
        return prompts[selected]
    except KeyError:
        available = ", ".join(prompts)
        raise PromptTemplateError(
            f"Неизвестная версия {prompt_id}: {selected}. Доступны: {available}."
        ) from None
