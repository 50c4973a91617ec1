"""What the grader does with a frame: linear decoding, no overflow, escaped logs, nonce checked."""

from __future__ import annotations

import logging
import time
from pathlib import Path

import pytest

from course_lib.checking import runner, sandbox
from course_lib.checking.cases import load_cases
from course_lib.checking.catalog import BY_NAME, CourseLayout
from course_lib.checking.compare import Pairs, ProtocolViolation, decode
from course_lib.checking.judge import judge
from course_lib.checking.sandbox import Limits

ROOT = Path(__file__).resolve().parents[1]
LAYOUT = CourseLayout(ROOT)
EXERCISE = BY_NAME["count_message_tokens"]
CASE = load_cases(LAYOUT.public_cases_file(EXERCISE), EXERCISE, "public")[0]


def _frame(value):
    return {"type": "case", "i": 0, "outcome": {"kind": "return", "value": value},
            "args_after": [None, None], "result_is_arg": None}  # fmt: skip


def test_a_400_digit_integer_tagged_float_is_a_protocol_error_not_an_overflow():
    with pytest.raises(ProtocolViolation):
        decode(["f", 10**400])
    result = judge(CASE, EXERCISE, _frame(["f", 10**400]))
    assert result.category == "protocol" and not result.passed


def test_hash_flooding_dict_keys_decode_in_linear_time():
    # 20,000 int keys that all collide (multiples of 2**61 - 1): about a 4 MB JSON frame.
    node = ["d", [[["i", k * (2**61 - 1)], ["n"]] for k in range(1, 20_001)]]
    started = time.perf_counter()
    value = decode(node)
    assert time.perf_counter() - started < 1.0
    assert isinstance(value, Pairs)  # non-str keys are never hashed here
    assert judge(CASE, EXERCISE, _frame(node)).category == "wrong_type"


def test_decoding_is_bounded_in_size_and_time():
    with pytest.raises(ProtocolViolation):
        decode(["l", [["n"]] * 400_000])
    with pytest.raises(ProtocolViolation):
        decode(["l", [["l", [["n"]] * 1000]] * 100], seconds=0.0)


def test_a_sandbox_error_message_is_escaped_before_it_reaches_the_log(monkeypatch, caplog):
    forged = "\x1b[2J\x1b[31mFAKE\nERROR всё проверено\u202e"

    class FakeSession:
        starved_total = 0.0  # no run-queue delay to give back to the budget

        def __init__(self, *args, **kwargs):
            pass

        def new_account(self):
            pass

        def send(self, frame, timeout=10.0):
            pass

        def recv(self, timeout):
            return {"type": "sandbox_error", "message": forged}

        def kill(self):
            pass

        def close(self):
            pass

    monkeypatch.setattr(runner, "ChildSession", FakeSession)
    with caplog.at_level(logging.WARNING, logger="grader"):
        result = runner.run_exercise(EXERCISE, "x = 1\n", [[CASE]], Limits())
    assert result.cases[0].category == "sandbox"
    (record,) = caplog.records
    text = record.getMessage()
    assert "\x1b" not in text and "\n" not in text and "\u202e" not in text
    assert "\\x1b[2J" in text and "\\x0a" in text


def test_frames_without_the_childs_nonce_are_rejected():
    spec = {"kind": "function", "module": "commit_turn", "entry": "commit_turn",
            "custom_exceptions": [], "source": "def commit_turn(*a):\n    return 1\n"}  # fmt: skip
    with sandbox.ChildSession({"kind": "exercises", "exercises": [spec]}, Limits()) as session:
        session.send({"type": "import", "module": "commit_turn"})
        assert session.recv(10) == {"type": "ready"}  # stamped by the harness, stamp removed
        session._buffer += len(b'{"type":"ready"}').to_bytes(4, "big") + b'{"type":"ready"}'
        with pytest.raises(sandbox.ChildGone) as gone:
            session.recv(1)
        assert gone.value.reason == "protocol"
