"""The course's version of exercises/session_history.py (notebook 03)."""


def _key(session_id: object) -> str:
    if not isinstance(session_id, str):
        raise TypeError("session_id должен быть строкой")
    if not session_id.strip():
        raise ValueError("session_id не должен быть пустым")
    return session_id.strip()


class SessionHistory:
    def __init__(self) -> None:
        self._by_session: dict[str, list[dict[str, str]]] = {}

    def add_turn(self, session_id: str, user_text: str, assistant_text: str) -> None:
        key = _key(session_id)
        if not (isinstance(user_text, str) and isinstance(assistant_text, str)):
            raise TypeError("тексты хода должны быть строками")
        question, answer = user_text.strip(), assistant_text.strip()
        if not (question and answer):
            raise ValueError("тексты хода не должны быть пустыми")
        turn = [{"role": "user", "content": question}, {"role": "assistant", "content": answer}]
        # One extend(): a caller without a lock (notebook 03's race demo) cannot lose a turn.
        self._by_session.setdefault(key, []).extend(turn)

    def get_messages(self, session_id: str) -> list[dict[str, str]]:
        # Copies of the dicts too: a caller who edits what it got must not edit the store.
        return [message.copy() for message in self._by_session.get(_key(session_id), [])]

    def reset(self, session_id: str) -> None:
        self._by_session.pop(_key(session_id), None)
