"""The chat widget streams a reply as it arrives and marks a broken-off one as not saved."""

from course_lib.app import build_chat_app
from course_lib.widgets.chat import STREAMING_NOTE, UNSAVED_NOTE, ChatController, ChatWidget

from helpers import COFFEE_DIALOGUE


def test_the_reply_appears_piece_by_piece_and_ends_as_the_saved_reply(offline_settings):
    service = build_chat_app(offline_settings).chat_service
    controller = ChatController(service, session_id="s")
    seen: list[str] = []
    controller.subscribe(lambda c: seen.append(c.pending[-1].text if c.pending else "<done>"))
    reply = controller.send(COFFEE_DIALOGUE[0])
    assert controller.streams and len(seen) > 2 and seen[-1] == "<done>"
    assert seen[-2].strip() == reply.text  # the last piece completes the reply…
    assert [len(text) for text in seen[:-1]] == sorted(len(text) for text in seen[:-1])  # …which only grew
    assert controller.pending == [] and controller.transcript[-1].text == reply.text
    assert any(line.startswith("Поправка токенов:") for line in controller.metrics)


def test_a_stream_that_breaks_off_stays_visible_marked_not_saved(offline_settings):
    app = build_chat_app(offline_settings)
    chat = ChatWidget(app.chat_service, session_id="s")
    chat.message_box.value = COFFEE_DIALOGUE[0]
    chat.send_button.click()
    before = app.chat_service.get_session("s")
    app.llm_client.offline_model.schedule_fault("stream_cut", chunks=4)
    chat.message_box.value = COFFEE_DIALOGUE[1]
    chat.send_button.click()
    assert app.chat_service.get_session("s") == before
    assert chat.message_box.value == COFFEE_DIALOGUE[1]  # kept, to send again
    assert UNSAVED_NOTE in chat.transcript_html.value and "course-msg-pending" in chat.transcript_html.value
    assert STREAMING_NOTE not in chat.transcript_html.value
    chat.send_button.click()
    assert UNSAVED_NOTE not in chat.transcript_html.value
    assert len(app.chat_service.get_session("s").messages) == 4
