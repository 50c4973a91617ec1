"""Small builders shared by the service tests."""

from __future__ import annotations

from course_lib.app import ChatApp, build_chat_app
from course_lib.config import Settings
from course_lib.llm.offline import OfflineModel

COFFEE_DIALOGUE = [
    "Получил заказ 8041 с кофемашиной. Она не включается.",
    "Коробка была целой.",
    "Я уже проверил две розетки.",
    "На корпусе не горит ни один индикатор.",
    "Кабель подключен плотно. Что делать дальше?",
]

MONITOR_DIALOGUE = [
    "У меня заказ 7718 с монитором. Подставка пришла с трещиной.",
    "Коробка была целой, повреждена только подставка.",
    "Я впервые обращаюсь по этому вопросу.",
    "Фото повреждения уже сделал.",
    "На самом мониторе повреждений нет.",
    "Подскажите, что мне подготовить для обращения?",
]
MONITOR_RECALL = "Напомните номер заказа и что именно было повреждено."


def make_app(settings: Settings, *, budget: int | None = None, with_summary: bool = True, **model_options) -> ChatApp:
    if budget is not None:
        settings = settings.model_copy(update={"chat_input_token_budget": budget})
    return build_chat_app(settings, offline_model=OfflineModel(**model_options), with_summary=with_summary)


def state(app: ChatApp, session_id: str) -> tuple:
    snapshot = app.chat_service.get_session(session_id)
    return snapshot.messages, snapshot.summary
