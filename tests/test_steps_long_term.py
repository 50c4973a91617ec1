"""Notebook 08's memory with the student's functions: with the course's versions of the three
exercises it stores and sends what the library does; a wrong function shows in the results."""

from __future__ import annotations

from course_lib.course_versions.build_memory_message import build_memory_message
from course_lib.course_versions.merge_facts import merge_facts
from course_lib.course_versions.select_memories import select_memories
from course_lib.memory import LongTermMemory, MemoryExtractor, MemoryStore
from course_lib.memory.facts import ExtractedFact
from course_lib.steps.long_term import MemoryWithYourFunctions, MergedStore
from course_lib.tokenizer import TokenCounter


class NoModel:
    def generate(self, *args, **kwargs):  # extraction is not used in these tests
        raise AssertionError("no model call expected")


def facts(*pairs):
    return [ExtractedFact(kind=kind, value=value) for kind, value in pairs]


def memories(tmp_path, **options):
    counter = TokenCounter()
    library = LongTermMemory(MemoryStore(tmp_path / "a.sqlite3"), MemoryExtractor(NoModel()), counter, **options)
    yours = MemoryWithYourFunctions(
        MergedStore(MemoryStore(tmp_path / "b.sqlite3"), merge_facts), MemoryExtractor(NoModel()), counter,
        select_memories=select_memories, build_memory_message=build_memory_message, **options,
    )
    return library, yours


def remember_both(library, yours, pairs, turn):
    results = []
    for memory in (library, yours):
        results.append(memory.store.remember("anna", facts(*pairs), session_id="s1", turn=turn, now=float(turn)))
    return results


def test_merging_through_merge_facts_stores_what_the_library_stores(tmp_path):
    library, yours = memories(tmp_path)
    remember_both(library, yours, [("name", "Анна"), ("phone", "+79123456789")], 1)
    ours, theirs = remember_both(library, yours, [("name", "анна"), ("phone", "+79991112233")], 2)
    assert theirs.added == ours.added == ()
    assert [(old.value, new.value) for old, new in theirs.replaced] == [("+79123456789", "+79991112233")]
    history = [(f.kind, f.value, f.active) for f in yours.store.fact_history("anna")]
    assert history == [(f.kind, f.value, f.active) for f in library.store.fact_history("anna")]


def test_the_memory_block_matches_the_librarys(tmp_path):
    library, yours = memories(tmp_path)
    remember_both(library, yours, [("preference", "отвечать по почте"), ("name", "Анна"), ("order_number", "7718")], 1)
    ours, theirs = (memory.context_for("anna", "s2", "Как меня зовут?") for memory in (library, yours))
    assert theirs.messages == ours.messages and theirs.facts == ours.facts and theirs.tokens == ours.tokens


def test_a_tight_budget_is_kept_and_a_long_fact_is_skipped(tmp_path):
    library, yours = memories(tmp_path, memory_token_budget=40)
    long_problem = "на подставке трещина длиной около пяти сантиметров, коробка при этом была целой"
    remember_both(library, yours, [("name", "Анна"), ("problem", long_problem), ("phone", "+79991112233")], 1)
    context = yours.context_for("anna", "s2", "Привет")
    assert [fact.kind for fact in context.facts] == ["name", "phone"]
    assert 0 < context.tokens <= 40


def test_a_merge_that_forgets_letter_case_shows_as_a_replaced_value(tmp_path):
    def case_sensitive(current, new):
        merged = [dict(fact) for fact in current]
        for fact in new:
            active = [m for m in merged if m["kind"] == fact["kind"] and m["active"]]
            if active and active[-1]["value"] == fact["value"]:
                continue
            for m in active:
                m["active"] = False
            merged.append({**fact, "active": True})
        return merged

    store = MergedStore(MemoryStore(tmp_path / "c.sqlite3"), case_sensitive)
    store.remember("anna", facts(("name", "Анна")), session_id="s1", turn=1, now=1.0)
    update = store.remember("anna", facts(("name", "анна")), session_id="s1", turn=2, now=2.0)
    # The store's own rule still treats the value as unchanged: nothing is replaced, but the
    # student's function proposed it (the library's merge would not have).
    assert update.unchanged and not update.replaced
    store.close()


# --- issue 29: the search over archived turns runs on the student's fts_query -----------------------------

QUESTIONS = ["Что я уже проверил?", "Когда придёт курьер за коробкой?", 'Заказ 123456 "NOT (опять)*', "Что? Уже.",
             "Здравствуйте! Напомните статус возврата кофемашины", ""]


def test_the_course_version_of_fts_query_builds_the_librarys_query():
    from course_lib.course_versions.fts_query import fts_query
    from course_lib.memory.store import fts_query as library
    from course_lib.steps.long_term import search_query

    make_query = search_query(fts_query)
    assert [make_query(text) for text in QUESTIONS] == [library(text) for text in QUESTIONS]


def test_the_store_searches_and_forgets_with_the_query_it_was_given(tmp_path):
    from course_lib.steps.long_term import search_query

    asked = []

    def fts_query(text, stop_words):  # a student's function: the word in quotes, nothing else
        asked.append((text, "что" in stop_words))
        return '"розет"*'

    store = MemoryStore(tmp_path / "m.sqlite3", make_query=search_query(fts_query))
    store.archive_turn("oleg", "s1", 1, "Я уже проверил розетку.", "Спасибо.", now=1.0)
    store.archive_turn("oleg", "s1", 2, "Коробка была целой.", "Учёл.", now=2.0)
    found = store.search_turns("oleg", "о чём угодно")
    assert [turn.user_text for turn in found] == ["Я уже проверил розетку."]
    assert store.forget_matching("oleg", "что угодно") == 1
    assert asked == [("о чём угодно", True), ("что угодно", True)]
    store.close()
