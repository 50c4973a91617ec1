"""Упражнение «check_reply» (ноутбук 01): проверка ответа модели до того, как его увидит клиент.

Провайдер может вернуть формально успешный ответ, который нельзя ни показать клиенту, ни сохранить
в историю: модель упёрлась в предел длины и оборвалась на полуслове, ответ остановил фильтр
содержимого, генерация закончилась по другой причине или текста нет вовсе. Поэтому ответ сначала
проверяют кодом, а уже потом показывают и сохраняют. В ноутбуке 01 validate_reply берёт из
результата модели (LLMResult) два поля — text и finish_reason — и передаёт их вашей функции, а
исключение ReplyError или его подкласса чат показывает клиенту как ошибку чата, с тем же текстом.

Реализуйте check_reply(text, finish_reason).

Требования
Проверки идут ровно в этом порядке; первая нарушенная выбрасывает исключение, остальные не
выполняются.
1. text — строка (str) или None; иначе TypeError.
2. finish_reason — строка (str) или None; иначе TypeError.
   Обе проверки типов — раньше любой проверки значений: check_reply(5, "length") — TypeError.
3. finish_reason == "length" — ответ оборван пределом длины: CutOffReply с текстом
   «Ответ остановлен из-за ограничения длины.»
4. finish_reason == "content_filter" — ответ остановил фильтр содержимого: BlockedReply с текстом
   «Ответ остановлен фильтром содержимого.»
5. Любая другая причина, кроме "stop" (в том числе None, "tool_calls" и "STOP" — сравнение точное,
   с учётом регистра): ReplyError с текстом
   «Модель не вернула готовый ответ. Причина завершения: <finish_reason>.»
6. text is None — EmptyReply с текстом «Модель не вернула текст ответа.»
7. text после strip() пуст (пустая строка, одни пробелы, переводы строк, табуляция) — EmptyReply
   с текстом «Модель вернула пустой ответ.»
8. Иначе верните text после strip(): без пробельных символов по краям, внутри — без изменений.

Причина завершения проверяется раньше текста: оборванный ответ с пустым текстом — это CutOffReply,
а не EmptyReply (клиенту важнее знать, что ответ оборван). Проверка оценивает класс исключения;
тексты сообщений выше — то, что увидит клиент, пишите их так же.

Классы ReplyError (наследует ValueError), CutOffReply, BlockedReply и EmptyReply (наследуют
ReplyError) уже объявлены ниже. Не удаляйте и не переименовывайте их: проверка ждёт именно эти
исключения — выбрасывайте ровно тот класс, который назван в пункте.

Пример
    check_reply("  Понял: кофемашина не включается. Уточните номер заказа.\\n", "stop")
    # 'Понял: кофемашина не включается. Уточните номер заказа.'
    check_reply("Понял: коф", "length")
    # CutOffReply: Ответ остановлен из-за ограничения длины.
    check_reply("   ", "stop")
    # EmptyReply: Модель вернула пустой ответ.

Сторонние библиотеки не нужны. Проверка в ноутбуке: check("check_reply").
"""


class ReplyError(ValueError):
    """The model's reply must not be shown or saved; the message is meant for the customer."""


class CutOffReply(ReplyError):
    """finish_reason == "length": the reply stopped at the output limit."""


class BlockedReply(ReplyError):
    """finish_reason == "content_filter": the provider's content filter stopped the reply."""


class EmptyReply(ReplyError):
    """The model finished but returned no text, or only whitespace."""


def check_reply(text: str | None, finish_reason: str | None) -> str:
    raise NotImplementedError("Реализуйте check_reply")
