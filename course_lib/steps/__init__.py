"""The classes and helpers the student builds in the notebooks, one home each.

A notebook shows the code of what it teaches in its cells; the same code lives in a module here so
that later notebooks import it instead of retyping it. `tests/test_steps_match_notebooks.py` checks
that each notebook cell and its module hold the same source.

- `course_lib.steps.common`: `ChatServiceError`, `ChatReply`, `validate_reply`, `requests_table` (01)
- `course_lib.steps.stateless`: `build_messages` (01's fill-in), `StatelessChatService` (01)
- `course_lib.steps.single_history`: `save_validated_turn` (02's fill-in), `SingleHistoryChatService` (02)
- `course_lib.steps.sessions`: `get_or_create_session` (03's fill-in), `SessionChatService` (03)
- `course_lib.steps.window`: `ExerciseWindow` (the window from the student's `count_message_tokens`,
  `split_into_turns`, `select_recent_turns`), `turns_that_fit` (04's fill-in), `WindowReply`,
  `WindowChatService`, `demo_budget`, `window_gaps` (04)
- `course_lib.steps.summary`: `HistorySummarizer` (fed by the student's `build_summary_source`),
  `plan_request`, `commit_state` (05's fill-in), `SummaryChatService` (05)
- `course_lib.steps.comparing`: the strategy comparison with the student's `trim_by_message_count`
  and `rolling_compress` (06)
- `course_lib.steps.persistence`: `ExerciseSessionStore` (commits by the student's `commit_session`),
  `crash_holding_lease`, `sessions_to_expire` (07's fill-in; its home is `course_lib.session_store`) (07)
- `course_lib.steps.long_term`: long-term memory on the student's `merge_facts`, `select_memories`,
  `build_memory_message` (08)

Import the module you need (`from course_lib.steps.common import ChatReply`); this package imports
nothing itself.
"""
