"""Упражнение «session_history» (ноутбук 03): изолированное хранилище историй.

Один сервис ведёт много диалогов сразу. История каждой сессии хранится отдельно, и вызывающий код
не может испортить её через список, который получил от хранилища.

Реализуйте класс SessionHistory с методами add_turn(), get_messages() и reset().

Требования
• SessionHistory() создаётся без аргументов, с пустым хранилищем (например, словарём
  session_id -> список сообщений).
• Во всех трёх методах session_id должен быть строкой: для другого типа выбросьте TypeError,
  для пустой строки после strip() — ValueError. session_id сравнивается после strip():
  " session-a " и "session-a" — одна и та же сессия.
• add_turn(session_id, user_text, assistant_text) -> None. Сначала проверьте session_id, потом
  тексты: для нестрокового текста — TypeError (типы обоих текстов проверяются раньше пустоты),
  для пустого после strip() — ValueError. Затем добавьте в историю этой сессии сообщение
  {"role": "user", "content": <текст после strip()>} и за ним сообщение assistant.
  При ошибке хранилище не меняется.
• get_messages(session_id) -> list[dict[str, str]] возвращает новый список с копиями словарей
  в порядке добавления. Изменения этого списка и его словарей не должны влиять на хранилище.
  Для неизвестной сессии верните пустой список.
• reset(session_id) -> None очищает историю только этой сессии; для неизвестной сессии ничего
  не делает.
• Данные разных session_id никогда не смешиваются.

Пример
    store = SessionHistory()
    store.add_turn("session-a", "Заказ 8041.", "Уточните проблему.")
    store.add_turn("session-b", "Заказ 991.", "Уточните проблему.")
    store.get_messages("session-a")
    # [
    #     {"role": "user", "content": "Заказ 8041."},
    #     {"role": "assistant", "content": "Уточните проблему."},
    # ]
    store.reset("session-a")
    store.get_messages("session-a")
    # []
    len(store.get_messages("session-b"))
    # 2

Сторонние библиотеки не нужны. Проверка в ноутбуке: check("session_history").
"""


class SessionHistory:
    def __init__(self) -> None:
        raise NotImplementedError("Реализуйте SessionHistory")

    def add_turn(self, session_id: str, user_text: str, assistant_text: str) -> None:
        raise NotImplementedError("Реализуйте SessionHistory.add_turn")

    def get_messages(self, session_id: str) -> list[dict[str, str]]:
        raise NotImplementedError("Реализуйте SessionHistory.get_messages")

    def reset(self, session_id: str) -> None:
        raise NotImplementedError("Реализуйте SessionHistory.reset")
