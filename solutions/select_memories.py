"""Reference solution for exercises/select_memories.py (the statement lives in the stub)."""

PRIORITY = ("name", "order_number", "product", "problem", "phone", "email", "preference")


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _rank(fact: dict[str, str]) -> int:
    kind = fact["kind"]
    return PRIORITY.index(kind) if kind in PRIORITY else len(PRIORITY)


def select_memories(
    facts: list[dict[str, str]],
    token_costs: list[int],
    budget: int,
) -> list[dict[str, str]]:
    if len(facts) != len(token_costs):
        raise ValueError("у каждого факта должна быть своя стоимость")
    for cost in token_costs:
        if not _is_int(cost):
            raise TypeError("стоимость факта должна быть целым числом")
        if cost <= 0:
            raise ValueError("стоимость факта должна быть положительной")
    if not _is_int(budget):
        raise TypeError("budget должен быть целым числом")
    if budget < 0:
        raise ValueError("budget не может быть отрицательным")

    # sorted() is stable: facts of the same rank keep their order from `facts`.
    order = sorted(range(len(facts)), key=lambda i: _rank(facts[i]))
    chosen, used = [], 0
    for i in order:
        if used + token_costs[i] <= budget:
            chosen.append(facts[i])
            used += token_costs[i]
    return chosen
