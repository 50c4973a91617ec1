"""What a real model changes: streamed replies, a budget that holds on another tokenizer, cost, caching."""

from __future__ import annotations

import json
from importlib import resources

import pytest

from course_lib.chat_history import SlidingWindowHistory
from course_lib.chat_service import ChatService, ChatServiceError
from course_lib.conversation_summary_service import ConversationSummaryService
from course_lib.llm.client import LLMClient
from course_lib.llm.errors import LLMStreamInterruptedError
from course_lib.llm.offline import OfflineModel
from course_lib.llm.offline.model import PromptCache
from course_lib.pricing import DEFAULT_PRICES, Price, price_for
from course_lib.token_calibration import TokenCalibration, corrected
from course_lib.tokenizer import TokenCounter

from helpers import COFFEE_DIALOGUE

LONG_TEXTS = [turn["text"] for turn in json.loads(
    resources.files("course_lib").joinpath("data", "long_dialogue.json").read_text(encoding="utf-8")
)["turns"]]


def _service(settings, model: OfflineModel, budget: int = 6000, **options) -> ChatService:
    client = LLMClient(settings, offline_model=model)
    return ChatService(client, SlidingWindowHistory(TokenCounter(), budget), ConversationSummaryService(client), **options)


# --- streaming ----------------------------------------------------------------------------------


def test_a_streamed_reply_equals_the_plain_one_and_arrives_in_pieces(offline_settings):
    plain = _service(offline_settings, OfflineModel())
    streamed = _service(offline_settings, OfflineModel())
    for text in COFFEE_DIALOGUE:
        pieces: list[str] = []
        expected = plain.reply("s", text)
        got = streamed.reply("s", text, on_delta=pieces.append)
        assert got.text == expected.text == "".join(pieces).strip()
        assert len(pieces) > 1 and got.streamed and got.first_token_seconds is not None
        assert (got.prompt_tokens, got.completion_tokens) == (expected.prompt_tokens, expected.completion_tokens)
    assert streamed.get_session("s") == plain.get_session("s")


@pytest.mark.parametrize("chunks", [0, 1, 3, 6])
def test_a_stream_cut_after_n_chunks_leaves_the_session_unchanged(offline_settings, chunks):
    model = OfflineModel()
    service = _service(offline_settings, model)
    service.reply("s", COFFEE_DIALOGUE[0])
    before = service.get_session("s")
    model.schedule_fault("stream_cut", chunks=chunks)
    pieces: list[str] = []
    with pytest.raises(ChatServiceError, match="оборвался") as caught:
        service.reply("s", COFFEE_DIALOGUE[1], on_delta=pieces.append)
    assert isinstance(caught.value.__cause__, LLMStreamInterruptedError)
    assert len(pieces) == max(chunks - 1, 0)  # the first chunk only carries the role
    assert service.get_session("s") == before
    assert service.reply("s", COFFEE_DIALOGUE[1], on_delta=pieces.append).history_messages == 4


@pytest.mark.parametrize("fault", ["truncated", "empty"])
def test_a_length_or_empty_stream_is_not_saved(offline_settings, fault):
    model = OfflineModel()
    service = _service(offline_settings, model)
    model.schedule_fault(fault)
    with pytest.raises(ChatServiceError):
        service.reply("s", COFFEE_DIALOGUE[0], on_delta=lambda piece: None)
    assert service.session_ids() == ()


# --- a budget that holds in the provider's tokens ---------------------------------------------------


def test_with_a_tokenizer_counting_2_6x_no_request_exceeds_the_budget_after_one_reply(offline_settings):
    budget = 3000
    model = OfflineModel(usage_scale=2.6)
    service = _service(offline_settings, model, budget=budget)
    provider_counts = []
    for text in LONG_TEXTS:
        reply = service.reply("s", text)
        provider_counts.append(reply.prompt_tokens)
        assert corrected(reply.estimated_prompt_tokens, reply.token_factor) <= budget
    assert len(provider_counts) == len(LONG_TEXTS) == 200
    assert max(provider_counts[1:]) <= budget  # the first reply is the evidence
    evidence = service.calibration.evidence(service._model_name)
    assert evidence.factor >= 2.6 and not evidence.exact and "поправка ×" in evidence.describe()


def test_without_the_correction_the_same_dialogue_overflows(offline_settings):
    budget = 3000
    service = _service(offline_settings, OfflineModel(usage_scale=2.6), budget=budget,
                       calibration=TokenCalibration(window=1))
    service.calibration.observe = lambda *args: None  # a counter that never learns
    counts = [service.reply("s", text).prompt_tokens for text in LONG_TEXTS[:40]]
    assert max(counts) > budget


def test_an_exact_provider_gets_no_correction(offline_settings):
    service = _service(offline_settings, OfflineModel())
    reply = service.reply("s", COFFEE_DIALOGUE[0])
    assert reply.token_factor == 1.0 and reply.calibration.exact
    assert service.reply("s", COFFEE_DIALOGUE[1]).token_factor == 1.0


def test_calibration_ignores_missing_usage_and_validates_its_settings():
    calibration = TokenCalibration()
    calibration.observe("m", 100, None)
    calibration.observe("m", 0, 10)
    assert calibration.evidence("m").samples == 0 and calibration.factor("m") == 1.0
    calibration.observe("m", 100, 260)
    calibration.observe("m", 100, 200)
    assert calibration.factor("m") == pytest.approx(2.73)  # worst ratio 2.6 × margin 1.05, rounded up
    with pytest.raises(ValueError):
        TokenCalibration(margin=0.9)


# --- cost and prompt caching ----------------------------------------------------------------------


def test_prices_by_model_family_and_the_cached_discount():
    assert price_for("gpt-4.1", DEFAULT_PRICES) == Price(2.00, 0.50, 8.00)
    assert price_for("gpt-4.1-2025-04-14", DEFAULT_PRICES) == Price(2.00, 0.50, 8.00)
    assert price_for("gpt-4.1-mini-2025-04-14", DEFAULT_PRICES) == Price(0.40, 0.10, 1.60)
    assert price_for("gpt-4.1-turbo", DEFAULT_PRICES) is None
    assert price_for("qwen2.5:7b", DEFAULT_PRICES) is None
    price = Price(2.00, 0.50, 8.00)
    assert price.cost(1_000_000, 0) == pytest.approx(2.00)
    assert price.cost(1_000_000, 1_000_000, cached_tokens=1_000_000) == pytest.approx(8.50)


def test_a_reply_reports_its_cost_summary_included(make_settings):
    settings = make_settings(chat_input_token_budget=300)
    service = _service(settings, OfflineModel(), budget=300)
    replies = [service.reply("s", text) for text in [*COFFEE_DIALOGUE, "Коробку я выбросил.", "Гарантия есть?"]]
    for reply in replies:
        expected = DEFAULT_PRICES["gpt-4.1"].cost(reply.prompt_tokens, reply.completion_tokens, reply.cached_tokens)
        if reply.summary_updated:
            assert reply.cost_usd > expected
        else:
            assert reply.cost_usd == pytest.approx(expected)
    assert any(reply.summary_updated for reply in replies)
    unpriced = ChatService(service._llm_client, service.history_policy, prices={})
    assert unpriced.reply("x", "Привет").cost_usd is None


def test_prompt_cache_follows_the_provider_rule():
    cache = PromptCache()
    block = tuple(range(700))
    assert cache.lookup_and_remember([block, (1, 2, 3)]) == 0  # nothing seen yet
    assert cache.lookup_and_remember([block, (1, 2, 4)]) == 0  # 702 shared tokens: under 1,024
    long = [block, tuple(range(1000, 1900))]
    cache.lookup_and_remember(long)
    hit = cache.lookup_and_remember([block, tuple(range(1000, 1900)), (7,)])
    assert hit == 1536  # 1,600 shared tokens, counted in steps of 128
    assert hit % 128 == 0 and hit >= 1024


def test_a_stable_prefix_is_cached_and_a_sliding_window_is_not(offline_settings):
    def cached_share(service: ChatService) -> float:
        replies = [service.reply("s", text) for text in LONG_TEXTS[:80]][30:]
        return sum(r.cached_tokens for r in replies) / sum(r.prompt_tokens for r in replies)

    full = ChatService(LLMClient(offline_settings, offline_model=OfflineModel()),
                       SlidingWindowHistory(TokenCounter(), 100_000))
    window = ChatService(LLMClient(offline_settings, offline_model=OfflineModel()),
                         SlidingWindowHistory(TokenCounter(), 1500))
    # Full history: each request extends the previous one, so nearly all of it is a cached prefix.
    # A full window drops its oldest turn: the prefix changes right after the instruction.
    assert cached_share(full) > 0.8
    assert cached_share(window) < 0.3
