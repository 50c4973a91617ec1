"""Упражнение «build_chat_messages» (ноутбук 02): запрос к модели с историей диалога.

Модель ничего не помнит между вызовами: на каждое новое сообщение приложение заново собирает список
сообщений — постоянную инструкцию, сохранённую историю и новое сообщение клиента.

Реализуйте build_chat_messages(instruction, history, user_text).

Требования
• instruction и user_text должны быть строками (str). Если хотя бы один из них другого типа,
  выбросьте TypeError. Типы проверяются раньше, чем пустота: build_chat_messages("", [], 5) —
  это TypeError, а не ValueError.
• Если instruction или user_text после strip() пусты, выбросьте ValueError.
• Первым сообщением результата идёт {"role": "developer", "content": <instruction после strip()>}.
• За ним — все сообщения history в исходном порядке, без изменений.
• Последним идёт {"role": "user", "content": ...}, где content — очищенный user_text внутри тегов
  <customer_message>, каждый тег на своей строке:
      "<customer_message>\n8041\n</customer_message>"
• Верните новый список. Список history и его словари менять нельзя.

Пример
    history = [
        {"role": "user", "content": "Кофемашина не включается."},
        {"role": "assistant", "content": "Укажите номер заказа."},
    ]
    build_chat_messages("  Правила чата ", history, " 8041 ")
    # [
    #     {"role": "developer", "content": "Правила чата"},
    #     {"role": "user", "content": "Кофемашина не включается."},
    #     {"role": "assistant", "content": "Укажите номер заказа."},
    #     {"role": "user", "content": "<customer_message>\n8041\n</customer_message>"},
    # ]

Сторонние библиотеки не нужны. Проверка в ноутбуке: check("build_chat_messages").
"""


def build_chat_messages(
    instruction: str,
    history: list[dict[str, str]],
    user_text: str,
) -> list[dict[str, str]]:
    raise NotImplementedError("Реализуйте build_chat_messages")
