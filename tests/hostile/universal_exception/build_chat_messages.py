class Universal(TypeError, ValueError, KeyError, IndexError, RuntimeError, ZeroDivisionError):
    """A subclass of every exception a case might expect."""


def build_chat_messages(instruction, history, user_text):
    raise Universal("на всё один ответ")
