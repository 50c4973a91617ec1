"""course_lib.fill_in: a fill-in cell's function is used once it gives every example's answer."""

from course_lib.fill_in import try_fill_in


def course_version(history, user_text):
    return [*history, {"role": "user", "content": user_text}]


EXAMPLES = [(([], "Привет"), [{"role": "user", "content": "Привет"}]), ((None, "x"), TypeError)]


def test_an_unfilled_cell_uses_the_course_version():
    def build(history, user_text):
        raise NotImplementedError("Заполните")

    lines = []
    assert try_fill_in(build, examples=EXAMPLES, reference=course_version, announce=lines.append) is course_version
    assert lines[0].startswith("↪ build: ячейка ещё не заполнена")


def test_a_wrong_answer_names_the_call_and_both_values():
    def build(history, user_text):
        return [{"role": "user", "content": user_text}, *history]

    lines = []
    assert try_fill_in(build, examples=[(([{"role": "assistant", "content": "A"}], "B"),
                                         [{"role": "assistant", "content": "A"}, {"role": "user", "content": "B"}])],
                       reference=course_version, announce=lines.append) is course_version
    assert "вернула" in lines[0] and "ожидалось" in lines[0]


def test_a_missing_exception_is_a_mistake():
    def build(history, user_text):
        return [*(history or []), {"role": "user", "content": user_text}]

    lines = []
    assert try_fill_in(build, examples=EXAMPLES, reference=course_version, announce=lines.append) is course_version
    assert "должна выбросить TypeError" in lines[0]


def test_a_filled_cell_is_used_and_its_inputs_are_copies():
    seen = []

    def build(history, user_text):
        seen.append(history)
        history.append({"role": "user", "content": user_text})  # careless, but the example is a copy
        return history

    lines = []
    examples = [(([], "Привет"), [{"role": "user", "content": "Привет"}])]
    assert try_fill_in(build, examples=examples, reference=course_version, announce=lines.append) is build
    assert examples[0][0][0] == [] and lines[0].startswith("✔ build")
