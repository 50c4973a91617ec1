"""The scripted long dialogue: customer messages, control facts planted at known turns, recall
questions at known later turns. Loaded from `course_lib/data/long_dialogue.json`.

A control fact carries `evidence` patterns (regular expressions, case-insensitive) that find it in a
request or a reply whatever words surround it: "4817" for the order number, "трещин" for the damage.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from course_lib.messages import Message

DATA_FILE = "long_dialogue.json"
INSTRUCTION_ROLES = frozenset({"system", "developer"})


class DialogueScriptError(ValueError):
    """The dialogue file is malformed or inconsistent."""


@dataclass(frozen=True)
class ControlFact:
    id: str
    label: str
    value: str
    turn: int
    """The turn at which the customer states it."""
    evidence: tuple[re.Pattern[str], ...]

    def found_in(self, text: str) -> bool:
        return any(pattern.search(text) for pattern in self.evidence)

    def present_in(self, messages: tuple[Message, ...] | list[Message]) -> bool:
        """Whether any non-instruction message of a request states this fact."""
        return any(
            self.found_in(message["content"])
            for message in messages
            if message["role"] not in INSTRUCTION_ROLES
        )


@dataclass(frozen=True)
class ScriptedTurn:
    turn: int
    text: str
    plants: tuple[str, ...] = ()
    """Ids of the control facts this message states."""
    asks: tuple[str, ...] = ()
    """Ids of the control facts this message asks to be reminded of."""


@dataclass(frozen=True)
class ScriptedDialogue:
    title: str
    description: str
    facts: tuple[ControlFact, ...]
    turns: tuple[ScriptedTurn, ...]

    def fact(self, fact_id: str) -> ControlFact:
        for fact in self.facts:
            if fact.id == fact_id:
                return fact
        raise KeyError(fact_id)

    @property
    def recall_turns(self) -> tuple[ScriptedTurn, ...]:
        return tuple(turn for turn in self.turns if turn.asks)

    def recall_checks(self, turns: int | None = None) -> int:
        """How many (recall question, fact) pairs the first `turns` turns contain."""
        limit = len(self.turns) if turns is None else turns
        return sum(len(turn.asks) for turn in self.recall_turns if turn.turn <= limit)


def load_long_dialogue(path: str | Path | None = None) -> ScriptedDialogue:
    """The course's scripted dialogue (or another file in the same format), validated."""
    if path is None:
        raw = resources.files("course_lib").joinpath("data", DATA_FILE).read_text(encoding="utf-8")
    else:
        raw = Path(path).read_text(encoding="utf-8")
    try:
        data = json.loads(raw)
        facts = tuple(
            ControlFact(
                id=item["id"],
                label=item["label"],
                value=item["value"],
                turn=int(item["turn"]),
                evidence=tuple(re.compile(p, re.IGNORECASE) for p in item["evidence"]),
            )
            for item in data["facts"]
        )
        turns = tuple(
            ScriptedTurn(
                turn=int(item["turn"]),
                text=item["text"],
                plants=tuple(item.get("plants", ())),
                asks=tuple(item.get("asks", ())),
            )
            for item in data["turns"]
        )
        dialogue = ScriptedDialogue(data["title"], data["description"], facts, turns)
    except (KeyError, TypeError, ValueError, re.error) as error:
        raise DialogueScriptError(f"Файл диалога повреждён: {error!r}") from error
    _validate(dialogue)
    return dialogue


def _validate(dialogue: ScriptedDialogue) -> None:
    ids = [fact.id for fact in dialogue.facts]
    if len(set(ids)) != len(ids):
        raise DialogueScriptError("Идентификаторы контрольных фактов повторяются.")
    for index, turn in enumerate(dialogue.turns, start=1):
        if turn.turn != index:
            raise DialogueScriptError(f"Ходы должны идти подряд с 1: на месте {index} стоит ход {turn.turn}.")
        if not turn.text.strip():
            raise DialogueScriptError(f"Ход {index}: пустое сообщение.")
        for fact_id in (*turn.plants, *turn.asks):
            if fact_id not in ids:
                raise DialogueScriptError(f"Ход {index}: неизвестный факт {fact_id!r}.")
    for fact in dialogue.facts:
        planted = [turn.turn for turn in dialogue.turns if fact.id in turn.plants]
        if planted != [fact.turn]:
            raise DialogueScriptError(f"Факт {fact.id!r} должен быть назван ровно в ходе {fact.turn}.")
        asked_early = [turn.turn for turn in dialogue.turns if fact.id in turn.asks and turn.turn <= fact.turn]
        if asked_early:
            raise DialogueScriptError(f"Факт {fact.id!r} спрашивается раньше, чем назван: ходы {asked_early}.")
