"""The course's version of `MyStrategy` (notebook 10): the token window of notebook 04, nothing more.

It is what the benchmark runs as «Ваша стратегия» until `exercises/my_strategy.py` keeps its contract:
a baseline to beat, not a model answer to the challenge.
"""


class MyStrategy:
    def __init__(self, budget, count_tokens, summarize):
        self.budget = budget
        self.count_tokens = count_tokens
        self.turns = []

    def build_request(self, instruction, user_message):
        kept = []
        for user, assistant in reversed(self.turns):
            candidate = [instruction, user, assistant, *kept, user_message]
            if self.count_tokens(candidate) > self.budget:
                break  # whole turns, newest first: stop at the first that does not fit
            kept = [user, assistant, *kept]
        return [dict(instruction), *(dict(m) for m in kept), dict(user_message)]

    def commit(self, user_message, assistant_message):
        self.turns.append(({"role": "user", "content": user_message["content"]},
                           {"role": "assistant", "content": assistant_message["content"]}))

    def new_session(self):
        pass  # one thread across sessions, like the history strategies of notebook 06

    def forget(self):
        self.turns = []
