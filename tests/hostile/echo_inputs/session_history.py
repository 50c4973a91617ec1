class SessionHistory:
    def __init__(self):
        self.seen = []

    def add_turn(self, session_id, user_text, assistant_text):
        self.seen.append([session_id, user_text, assistant_text])
        print("вход:", self.seen)
        raise KeyError(repr(self.seen))

    def get_messages(self, session_id):
        return [{"role": "user", "content": repr(self.seen)}]

    def reset(self, session_id):
        return repr(self.seen)
