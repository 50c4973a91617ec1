"""Reference solution for exercises/check_reply.py (the statement lives in the stub)."""


class ReplyError(ValueError):
    """The model's reply must not be shown or saved; the message is meant for the customer."""


class CutOffReply(ReplyError):
    """finish_reason == "length": the reply stopped at the output limit."""


class BlockedReply(ReplyError):
    """finish_reason == "content_filter": the provider's content filter stopped the reply."""


class EmptyReply(ReplyError):
    """The model finished but returned no text, or only whitespace."""


def check_reply(text: str | None, finish_reason: str | None) -> str:
    if text is not None and not isinstance(text, str):
        raise TypeError("text должен быть строкой или None")
    if finish_reason is not None and not isinstance(finish_reason, str):
        raise TypeError("finish_reason должен быть строкой или None")
    if finish_reason == "length":
        raise CutOffReply("Ответ остановлен из-за ограничения длины.")
    if finish_reason == "content_filter":
        raise BlockedReply("Ответ остановлен фильтром содержимого.")
    if finish_reason != "stop":
        raise ReplyError(f"Модель не вернула готовый ответ. Причина завершения: {finish_reason}.")
    if text is None:
        raise EmptyReply("Модель не вернула текст ответа.")
    cleaned = text.strip()
    if not cleaned:
        raise EmptyReply("Модель вернула пустой ответ.")
    return cleaned
