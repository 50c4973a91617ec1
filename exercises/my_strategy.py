"""Задание «my_strategy» (ноутбук 10): своя стратегия памяти. Без баллов — место на фронте Парето.

Бенчмарк ноутбука 10 проигрывает разговоры клиентов через стратегии курса и задаёт вопросы о прошлом.
Придумайте свою стратегию: такую, что хотя бы одну стратегию курса она обгоняет на фронте Парето —
отвечает верно чаще при том же числе входных токенов на вопрос или так же верно, но дешевле.

Реализуйте класс MyStrategy. Бенчмарк создаёт его для каждого клиента и вызывает методы так:

    strategy = MyStrategy(budget, count_tokens, summarize)
    request = strategy.build_request(instruction, user_message)   # что отправить модели сейчас
    strategy.commit(user_message, assistant_message)              # ход закончился: ответ проверен
    strategy.new_session()                                        # клиент пришёл в другой день
    strategy.forget()                                             # клиент попросил стереть его данные

• budget — бюджет входа в токенах (int > 0); count_tokens(messages) — токены списка сообщений по
  правилу ноутбука 04 («3 + 3»); summarize(previous_summary, messages) — сводка курса (ноутбук 05):
  строка; каждый вызов — платный вызов модели, бенчмарк его считает.
• instruction — developer-инструкция {"role": "developer", "content": …}; user_message и
  assistant_message — сообщения {"role": …, "content": …}; текст клиента уже внутри тегов
  <customer_message>.

Договорённость (её проверяет check("my_strategy"), пункт за пунктом)
• build_request возвращает новый список: первой — instruction, последним — user_message, между ними —
  только сообщения с ролями "user" и "assistant" и ровно двумя ключами, role и content (сводку
  передавайте как данные, в сообщении "user", например в тегах <conversation_summary>);
• count_tokens(запрос) не больше budget, если инструкция и новое сообщение вообще помещаются;
• аргументы не меняются: храните копии сообщений;
• после forget() ничего из сказанного раньше не попадает ни в запрос, ни в summarize;
• после new_session() стратегия продолжает работать (что переносить в новую сессию — решаете вы);
• copy.deepcopy(strategy) — независимая копия: бенчмарк задаёт каждый вопрос на копии.

Идеи: окно плюс строки с номерами, телефонами и адресами, которые клиент называл (их легко найти
регулярным выражением); сводка только при переполнении и K свежих ходов; в новой сессии — лишь сводка
прошлых. Сравнивайте, а не гадайте: `python -m course_lib bench memory-eval --your-code --strategy mine`.

Пока класс не выполняет договорённость, в бенчмарке вместо него работает версия курса (окно по токенам).
"""


class MyStrategy:
    def __init__(self, budget, count_tokens, summarize):
        raise NotImplementedError("Реализуйте MyStrategy")

    def build_request(self, instruction, user_message):
        raise NotImplementedError("Реализуйте build_request")

    def commit(self, user_message, assistant_message):
        raise NotImplementedError("Реализуйте commit")

    def new_session(self):
        raise NotImplementedError("Реализуйте new_session")

    def forget(self):
        raise NotImplementedError("Реализуйте forget")
