"""The course's version of exercises/validate_history.py (notebook 02).

`SingleHistoryChatService.reply()` (`course_lib.steps.single_history`, notebook 02) checks the
stored history with the exercise before it builds a request: the student's function through
`your_code` once it passes its public cases, this version until then. The words follow the
course's other history checks (`course_lib.whole_history`): whole turns, user → assistant.
"""

# The history keeps only the dialogue; the instruction is added to every request, never stored.
DIALOGUE_ROLES = ("user", "assistant")
INSTRUCTION_ROLES = ("developer", "system")
MESSAGE_KEYS = ("role", "content")


def _check_keys(message: object, number: int) -> None:
    if not isinstance(message, dict):
        raise TypeError(f"Сообщение №{number}: ожидался словарь, а пришёл {type(message).__name__}.")
    missing = [key for key in MESSAGE_KEYS if key not in message]
    extra = [repr(key) for key in message if key not in MESSAGE_KEYS]
    if missing or extra:  # a ValueError, not a KeyError: the customer sees what is wrong
        problems = [f"нет ключа {key}" for key in missing] + [f"лишний ключ {key}" for key in extra]
        raise ValueError(f"Сообщение №{number}: нужны ровно ключи role и content ({', '.join(problems)}).")


def _check_content(content: object, number: int) -> None:
    if not isinstance(content, str):
        raise TypeError(f"Сообщение №{number}: content должен быть строкой, а не {type(content).__name__}.")
    if content.strip() == "":
        raise ValueError(f"Сообщение №{number}: пустой текст.")


def _check_role(role: object, number: int) -> None:
    if role in INSTRUCTION_ROLES:
        raise ValueError(f'Сообщение №{number}: роль "{role}" в истории не хранится — инструкция '
                         "добавляется в каждый запрос заново.")
    if role not in DIALOGUE_ROLES:
        raise ValueError(f"Сообщение №{number}: неизвестная роль {role!r}; "
                         "в истории бывают только user и assistant.")
    expected = DIALOGUE_ROLES[(number - 1) % 2]  # odd numbers are the customer's, even ones the replies
    if role != expected:
        raise ValueError(f'Сообщение №{number}: ожидалась роль "{expected}", а пришла "{role}".')


def validate_history(history: list[dict[str, str]]) -> int:
    if not isinstance(history, list):
        raise TypeError(f"История должна быть списком, а не {type(history).__name__}.")
    for number, message in enumerate(history, start=1):
        _check_keys(message, number)
        _check_content(message["content"], number)
        _check_role(message["role"], number)
    if len(history) % 2 == 1:  # the roles alternate, so an odd length ends with the customer's message
        raise ValueError(f"Сообщение №{len(history)}: ход сохранён наполовину — у сообщения клиента "
                         "нет ответа. История должна состоять из законченных ходов.")
    return len(history) // 2  # only reads: the caller's list and dicts are left as they were
