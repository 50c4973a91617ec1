"""Memory strategies for an LLM chat, side by side (notebook 06).

Six ways to keep a conversation inside its budget, each a small class with the same interface
(`MemoryStrategy`: `reply(user_text) -> TurnRecord`, `stored_messages()`):

| name | class | what goes into a request |
|---|---|---|
| `full` | `FullHistoryStrategy` | everything (lesson 02) |
| `count` | `MessageCountStrategy` | the instruction + the last N messages (the simplest baseline) |
| `window` | `TokenWindowStrategy` | the newest whole turns that fit the token budget (lesson 04) |
| `rolling` | `RollingSummaryStrategy` | one marked summary + the K newest messages (the retrospective) |
| `window_summary` | `WindowSummaryStrategy` | course_lib's `ChatService`: window, summary on overflow (lesson 05), K = 0 |
| `window_summary_k` | `WindowSummaryStrategy` | the same with `keep_recent_turns=K`: K newest turns stay verbatim |

`compare_strategies()` runs them through the scripted dialogue (`load_long_dialogue()`); `report`
turns the result into the Russian tables of `python -m course_lib bench strategies`.
"""

from course_lib.strategies.base import MemoryStrategy, StrategyBase, StrategyError, TurnRecord
from course_lib.strategies.catalog import (
    STRATEGY_NAMES,
    StrategySettings,
    build_strategies,
    build_strategy,
)
from course_lib.strategies.full_history import FullHistoryStrategy
from course_lib.strategies.message_count import MessageCountStrategy, trim_by_message_count
from course_lib.strategies.metering import CallMeter, ModelCall
from course_lib.strategies.offline_client import OfflineDirectClient
from course_lib.strategies.rolling_summary import SUMMARY_FLAG, RollingSummaryStrategy
from course_lib.strategies.runner import (
    TARGET_SHARE,
    Comparison,
    RecallCheck,
    StrategyRun,
    compare_strategies,
    run_strategy,
)
from course_lib.strategies.script import (
    ControlFact,
    DialogueScriptError,
    ScriptedDialogue,
    ScriptedTurn,
    load_long_dialogue,
)
from course_lib.strategies.token_window import TokenWindowStrategy
from course_lib.strategies.window_summary import WindowSummaryStrategy

__all__ = [
    "STRATEGY_NAMES",
    "SUMMARY_FLAG",
    "TARGET_SHARE",
    "CallMeter",
    "Comparison",
    "ControlFact",
    "DialogueScriptError",
    "FullHistoryStrategy",
    "MemoryStrategy",
    "MessageCountStrategy",
    "ModelCall",
    "OfflineDirectClient",
    "RecallCheck",
    "RollingSummaryStrategy",
    "ScriptedDialogue",
    "ScriptedTurn",
    "StrategyBase",
    "StrategyError",
    "StrategyRun",
    "StrategySettings",
    "TokenWindowStrategy",
    "TurnRecord",
    "WindowSummaryStrategy",
    "build_strategies",
    "build_strategy",
    "compare_strategies",
    "load_long_dialogue",
    "run_strategy",
    "trim_by_message_count",
]
