"""The course's version of exercises/check_reply.py (notebook 01).

The one implementation of the reply check: `course_lib.chat_service.validate_reply` (every chat
service of the course) calls it, and `course_lib.steps.common.validate_reply` (notebooks 01-05)
calls the student's function through `your_code`, this version until that one passes.
"""


class ReplyError(ValueError):
    """The model's reply must not be shown or saved; the message is meant for the customer."""


class CutOffReply(ReplyError):
    """finish_reason == "length": the reply stopped at the output limit."""


class BlockedReply(ReplyError):
    """finish_reason == "content_filter": the provider's content filter stopped the reply."""


class EmptyReply(ReplyError):
    """The model finished but returned no text, or only whitespace."""


# The finish reasons that are refused by name; any other one except "stop" is a plain ReplyError.
REFUSED = {
    "length": (CutOffReply, "Ответ остановлен из-за ограничения длины."),
    "content_filter": (BlockedReply, "Ответ остановлен фильтром содержимого."),
}


def check_reply(text: str | None, finish_reason: str | None) -> str:
    for name, value in (("text", text), ("finish_reason", finish_reason)):
        if value is not None and not isinstance(value, str):
            raise TypeError(f"{name}: ожидалась строка или None, а не {type(value).__name__}")
    if finish_reason in REFUSED:
        error, message = REFUSED[finish_reason]
        raise error(message)
    if finish_reason != "stop":
        raise ReplyError(f"Модель не вернула готовый ответ. Причина завершения: {finish_reason}.")
    if text is None:
        raise EmptyReply("Модель не вернула текст ответа.")
    reply = text.strip()
    if reply == "":
        raise EmptyReply("Модель вернула пустой ответ.")
    return reply
