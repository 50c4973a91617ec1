class Bad(Exception):
    pass


Bad.__qualname__ = "Плохой\ud800"  # a type name no UTF-8 file can hold


class ChatHistoryError(ValueError):
    pass


def split_into_turns(history):
    print("\ud800 \udfff \x1b[31mКРАСНЫЙ\x1b[0m \r\u202eотражено")  # shown: a public case fails
    raise Bad("сообщение \udcff с суррогатом")
