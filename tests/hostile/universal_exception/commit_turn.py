class Universal(TypeError, ValueError, KeyError, IndexError, RuntimeError, ZeroDivisionError):
    """A subclass of every exception a case might expect."""


def commit_turn(history, user_text, assistant_text):
    raise Universal("на всё один ответ")
