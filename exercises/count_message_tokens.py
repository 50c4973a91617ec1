"""Упражнение «count_message_tokens» (ноутбук 04): токены запроса по правилу 3 + 3.

Бюджет окна считается в токенах, а не в символах. Кроме текста, каждое сообщение чата несёт
служебную разметку (роль, разделители), а ответ модели начинается со служебного «затравочного»
фрагмента. Курс оценивает это так же, как TokenCounter из course_lib:
    3 токена на каждое сообщение + токены его role + токены его content,
    и ещё 3 токена на весь запрос (затравка ответа).

Реализуйте count_message_tokens(messages, count_text).

Требования
• count_text — функция, которая возвращает число токенов в одной строке (в ноутбуке это
  TokenCounter().count_text, в проверке — детерминированная замена). Вызывайте её только
  для строк role и content.
• Каждое сообщение должно быть словарём (dict), в котором есть ключи "role" и "content" и оба
  значения — строки. Иначе выбросьте TypeError (отсутствующий ключ — тоже TypeError, не KeyError).
• Остальные ключи сообщения (например, "name" или "is_summary") не считаются.
• Результат: 3 + сумма по сообщениям (3 + count_text(role) + count_text(content)).
  Для пустого списка — 3.
• Список messages и его словари менять нельзя.

Пример (count_text = len, то есть «токен» — это символ)
    count_message_tokens(
        [
            {"role": "developer", "content": "Будь краток."},
            {"role": "user", "content": "Привет"},
        ],
        len,
    )
    # 3 + (3 + 9 + 12) + (3 + 4 + 6) = 40

Сторонние библиотеки не нужны. Проверка в ноутбуке: check("count_message_tokens").
"""

from collections.abc import Callable


def count_message_tokens(
    messages: list[dict[str, str]],
    count_text: Callable[[str], int],
) -> int:
    raise NotImplementedError("Реализуйте count_message_tokens")
