"""The course's version of exercises/select_memories.py (notebook 08)."""

PRIORITY = ("name", "order_number", "product", "problem", "phone", "email", "preference")


def _check_whole(value: object, what: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{what} должен быть целым числом")


def select_memories(facts: list[dict[str, str]], token_costs: list[int], budget: int) -> list[dict[str, str]]:
    if len(facts) != len(token_costs):
        raise ValueError("у каждого факта должна быть своя стоимость")
    for cost in token_costs:
        _check_whole(cost, "стоимость факта")
        if cost <= 0:
            raise ValueError("стоимость факта должна быть положительной")
    _check_whole(budget, "budget")
    if budget < 0:
        raise ValueError("budget не может быть отрицательным")
    rank = {kind: place for place, kind in enumerate(PRIORITY)}
    by_importance = sorted(zip(facts, token_costs), key=lambda pair: rank.get(pair[0]["kind"], len(PRIORITY)))
    chosen = []
    for fact, cost in by_importance:
        if cost <= budget:  # facts are independent: a long one skipped, a shorter one may still fit
            chosen.append(fact)
            budget -= cost
    return chosen
