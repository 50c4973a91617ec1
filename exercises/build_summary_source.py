"""Упражнение «build_summary_source» (ноутбук 05): данные для обновления сводки.

Сервис суммаризации получает предыдущую сводку и новый фрагмент разговора. Эти данные передаются
модели как данные в явных блоках, отдельно от developer-инструкции.

Реализуйте build_summary_source(previous_summary, messages).

Требования
• previous_summary — строка или None; для другого типа выбросьте TypeError. Это проверяется
  первым, раньше, чем messages.
• Если messages пуст, выбросьте ValueError.
• Сообщения обрабатываются по порядку. Допустимы только роли "user" и "assistant": для другой
  роли выбросьте ValueError. Содержимое очистите через strip(); если оно стало пустым,
  выбросьте ValueError.
• Строка фрагмента: "Клиент: <текст>" для user и "Поддержка: <текст>" для assistant.
• Если previous_summary равно None или состоит только из пробельных символов, вместо него пишется
  "Отсутствует."; иначе — previous_summary после strip().
• Результат — ровно такая строка (без пробелов и перевода строки в конце):
      <previous_summary>
      {summary}
      </previous_summary>
      (пустая строка)
      <conversation_fragment>
      {строки фрагмента через \n}
      </conversation_fragment>
• Список messages и его словари менять нельзя.

Пример
    build_summary_source(
        None,
        [
            {"role": "user", "content": "Заказ 8041 не работает."},
            {"role": "assistant", "content": "Что именно не работает?"},
        ],
    )
    # "<previous_summary>\nОтсутствует.\n</previous_summary>\n\n"
    # "<conversation_fragment>\nКлиент: Заказ 8041 не работает.\n"
    # "Поддержка: Что именно не работает?\n</conversation_fragment>"

Сторонние библиотеки не нужны. Проверка в ноутбуке: check("build_summary_source").
"""


def build_summary_source(
    previous_summary: str | None,
    messages: list[dict[str, str]],
) -> str:
    raise NotImplementedError("Реализуйте build_summary_source")
