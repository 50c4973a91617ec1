"""Text that came from a child (or a submission's file names), made safe to show.

Everything a child sends is the student's choice: lone surrogates (which no UTF-8 file can hold),
terminal escapes, carriage returns that overwrite a line, bidi overrides that reorder it. `shown`
keeps newlines and tabs (printed output, multi-line details); `one_line` escapes them too (logs,
stderr); `csv_cell` also defuses spreadsheet formulas.
"""

from __future__ import annotations

import re

_CONTROL = "\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff"
_UNSAFE = re.compile(f"[{_CONTROL}]")
_UNSAFE_LINE = re.compile(f"[{_CONTROL}\t\n]")
FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def shown(text: str) -> str:
    """Control characters (but newline and tab), bidi controls and lone surrogates as escapes."""
    return _UNSAFE.sub(_escape, text)


def one_line(text: str) -> str:
    return _UNSAFE_LINE.sub(_escape, text)


def csv_cell(text: str) -> str:
    """One line, and never read as a formula by a spreadsheet (OWASP: prefix with a quote)."""
    text = one_line(text)
    return "'" + text if text.startswith(FORMULA_PREFIXES) else text


def deep_shown(value):
    """`shown` applied to every string (keys included) of a JSON-like value."""
    if isinstance(value, str):
        return shown(value)
    if isinstance(value, list):
        return [deep_shown(item) for item in value]
    if isinstance(value, dict):
        return {deep_shown(key): deep_shown(item) for key, item in value.items()}
    return value
