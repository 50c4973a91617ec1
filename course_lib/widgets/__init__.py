"""Widgets for the course notebooks: click and look instead of reading.

- `ChatWidget`: the console chat (message box, "Отправить", "Новый диалог", Session ID, metrics).
- `ContextInspector`: what the last request held, against the token budget.
- `BudgetExplorer`: a budget slider that re-runs `prepare()` on the session without calling the model.
- `chat_panel(service)`: the three side by side, wired together.
- `Quiz`: a self-check question (single or multiple choice).

The logic lives in plain classes (`ChatController`, `BudgetController`, `QuizQuestion`,
`ContextView`); the widgets only draw them.
"""

from course_lib.widgets.budget import BudgetController, BudgetExplorer
from course_lib.widgets.chat import ChatController, ChatWidget
from course_lib.widgets.context import ContextEntry, ContextView
from course_lib.widgets.inspector import ContextInspector
from course_lib.widgets.panel import ChatPanel, chat_panel
from course_lib.widgets.quiz import Option, Quiz, QuizQuestion, QuizResult

__all__ = [
    "BudgetController",
    "BudgetExplorer",
    "ChatController",
    "ChatPanel",
    "ChatWidget",
    "ContextEntry",
    "ContextInspector",
    "ContextView",
    "Option",
    "Quiz",
    "QuizQuestion",
    "QuizResult",
    "chat_panel",
]
