"""Упражнение «split_into_turns» (ноутбук 04): история из законченных ходов.

Скользящее окно добавляет историю только целыми ходами: сообщение клиента и следующий за ним
ответ ассистента. Прежде чем резать историю, её нужно разбить на такие пары и убедиться,
что она не испорчена.

Реализуйте split_into_turns(history).

Требования
• Если в history нечётное число сообщений, выбросьте ChatHistoryError.
• Разбейте history на последовательные пары: сообщения 0 и 1, 2 и 3 и так далее.
• Роли в каждой паре должны быть ровно ["user", "assistant"]. При любом другом порядке или
  другой роли выбросьте ChatHistoryError.
• Верните новый список пар; каждая пара — список из двух словарей-сообщений.
• Для пустой истории верните пустой список.
• Список history и его словари менять нельзя.

Класс ChatHistoryError уже объявлен ниже и наследует ValueError. Не удаляйте и не
переименовывайте его: проверка ждёт именно это исключение.

Пример
    split_into_turns([
        {"role": "user", "content": "Вопрос 1"},
        {"role": "assistant", "content": "Ответ 1"},
        {"role": "user", "content": "Вопрос 2"},
        {"role": "assistant", "content": "Ответ 2"},
    ])
    # [
    #     [{"role": "user", "content": "Вопрос 1"}, {"role": "assistant", "content": "Ответ 1"}],
    #     [{"role": "user", "content": "Вопрос 2"}, {"role": "assistant", "content": "Ответ 2"}],
    # ]

Сторонние библиотеки не нужны. Проверка в ноутбуке: check("split_into_turns").
"""


class ChatHistoryError(ValueError):
    """The history is not a sequence of complete user/assistant turns."""


def split_into_turns(
    history: list[dict[str, str]],
) -> list[list[dict[str, str]]]:
    raise NotImplementedError("Реализуйте split_into_turns")
