"""Reference solution for exercises/session_history.py (the statement lives in the stub)."""


class SessionHistory:
    def __init__(self) -> None:
        self._histories: dict[str, list[dict[str, str]]] = {}

    @staticmethod
    def _session_key(session_id: str) -> str:
        if not isinstance(session_id, str):
            raise TypeError("session_id должен быть строкой")
        key = session_id.strip()
        if not key:
            raise ValueError("session_id не должен быть пустым")
        return key

    def add_turn(self, session_id: str, user_text: str, assistant_text: str) -> None:
        key = self._session_key(session_id)
        if not isinstance(user_text, str) or not isinstance(assistant_text, str):
            raise TypeError("тексты хода должны быть строками")
        user_text = user_text.strip()
        assistant_text = assistant_text.strip()
        if not user_text or not assistant_text:
            raise ValueError("тексты хода не должны быть пустыми")
        self._histories.setdefault(key, []).extend(
            [
                {"role": "user", "content": user_text},
                {"role": "assistant", "content": assistant_text},
            ]
        )

    def get_messages(self, session_id: str) -> list[dict[str, str]]:
        key = self._session_key(session_id)
        return [dict(message) for message in self._histories.get(key, [])]

    def reset(self, session_id: str) -> None:
        key = self._session_key(session_id)
        self._histories.pop(key, None)
