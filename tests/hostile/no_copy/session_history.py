class SessionHistory:
    def __init__(self):
        self._histories = {}

    @staticmethod
    def _key(session_id):
        if not isinstance(session_id, str):
            raise TypeError
        key = session_id.strip()
        if not key:
            raise ValueError
        return key

    def add_turn(self, session_id, user_text, assistant_text):
        key = self._key(session_id)
        if not isinstance(user_text, str) or not isinstance(assistant_text, str):
            raise TypeError
        user_text, assistant_text = user_text.strip(), assistant_text.strip()
        if not user_text or not assistant_text:
            raise ValueError
        self._histories.setdefault(key, []).extend(
            [{"role": "user", "content": user_text}, {"role": "assistant", "content": assistant_text}]
        )

    def get_messages(self, session_id):
        return self._histories.setdefault(self._key(session_id), [])

    def reset(self, session_id):
        key = self._key(session_id)
        if key in self._histories:
            self._histories[key] = []
