"""The classes and helpers the student builds in the notebooks, one home each.

A notebook shows the code of what it teaches in its cells; the same code lives in a module here so
that later notebooks import it instead of retyping it. `tests/test_steps_match_notebooks.py` checks
that each notebook cell and its module hold the same source.

- `course_lib.steps.common`: `ChatServiceError`, `ChatReply`, `validate_reply`, `requests_table` (01)
- `course_lib.steps.stateless`: `build_messages`, `StatelessChatService` (01)
- `course_lib.steps.single_history`: `SingleHistoryChatService` (02)
- `course_lib.steps.sessions`: `SessionChatService` (03)
- `course_lib.steps.window`: `WindowReply`, `WindowChatService` (04)

Import the module you need (`from course_lib.steps.common import ChatReply`); this package imports
nothing itself.
"""
