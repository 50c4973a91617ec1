"""Упражнение «rolling_compress» (ноутбук 06): скользящее summary с K свежими сообщениями.

Старая часть диалога сжимается в одно summary, а последние keep сообщений остаются дословно:
модель не должна «забывать» только что сказанное. При следующем сжатии старое summary не
сжимается как обычная реплика (это было бы summary от summary, и факты терялись бы с каждым
разом), а передаётся суммаризатору отдельно и заменяется новым. В истории всегда не больше
одного summary, поэтому размер запроса ограничен: системный промпт + summary + keep сообщений.

Реализуйте rolling_compress(messages, summarize, keep).

Требования
• keep — целое число (int; bool не годится): TypeError для неверного типа, ValueError для
  отрицательного. 0 допустим: тогда в summary уходит весь диалог.
• Сообщение-summary — это словарь, у которого ключ "is_summary" равен True. Если таких сообщений
  больше одного, выбросьте ValueError. Порядок проверок: тип keep, значение keep, число summary.
• Системные промпты — сообщения с ролью "system", не являющиеся summary. Все остальные
  сообщения — диалог.
• Если сообщений диалога не больше keep, верните новый список с теми же сообщениями в том же
  порядке и не вызывайте summarize.
• Иначе старые сообщения диалога — все, кроме keep последних. Текст для summarize — их строки
  "<role>: <content>", соединённые через "\n". Если summary уже было, текст такой:
      "Предыдущее summary:\n" + <content старого summary> + "\n\nНовые сообщения:\n" + <строки>
• Вызовите summarize(текст) ровно один раз. Если результат не строка — TypeError; если после
  strip() он пуст — ValueError.
• Новое summary — {"role": "user", "content": <результат после strip()>, "is_summary": True}.
  Роль user, а не system: summary — это данные о прошлом разговоре, а не инструкция модели
  (в запросе его оборачивают в <conversation_summary>, как в ноутбуке 05).
• Результат: системные промпты в исходном порядке, затем новое summary, затем keep последних
  сообщений диалога. Старое summary и сжатые сообщения в результат не попадают.
• Список messages и его словари менять нельзя.

Пример (summarize возвращает свой аргумент без изменений)
    messages = [
        {"role": "system", "content": "Ты помощник."},
        {"role": "user", "content": "Заказ 8041."},
        {"role": "assistant", "content": "Что случилось?"},
        {"role": "user", "content": "Не включается."},
        {"role": "assistant", "content": "Проверьте кабель."},
    ]
    rolling_compress(messages, lambda text: text, 2)
    # [
    #     {"role": "system", "content": "Ты помощник."},
    #     {"role": "user", "content": "user: Заказ 8041.\nassistant: Что случилось?",
    #      "is_summary": True},
    #     {"role": "user", "content": "Не включается."},
    #     {"role": "assistant", "content": "Проверьте кабель."},
    # ]

Сторонние библиотеки не нужны. Проверка в ноутбуке: check("rolling_compress").
"""

from collections.abc import Callable


def rolling_compress(
    messages: list[dict],
    summarize: Callable[[str], str],
    keep: int,
) -> list[dict]:
    raise NotImplementedError("Реализуйте rolling_compress")
