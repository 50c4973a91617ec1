"""Reference solution for exercises/edit_core_memory.py (the statement lives in the stub)."""


class CoreMemoryError(ValueError):
    """The edit cannot be made; the blocks stay as they were."""


def _appended(text: str, command: dict) -> str:
    line = str(command.get("text") or "").strip()
    if not line:
        raise CoreMemoryError("text пуст")
    return text + "\n" + line if text else line


def _replaced(text: str, command: dict) -> str:
    old = command.get("old") or ""
    if not old:
        raise CoreMemoryError("old пуст")
    count = text.count(old)
    if count == 0:
        raise CoreMemoryError(f"{old!r} не найден")
    if count > 1:
        raise CoreMemoryError(f"{old!r} встречается не один раз")
    new = str(command.get("new") or "").strip()
    lines = text.replace(old, new).split("\n")
    return "\n".join(line for line in lines if line.strip() != "")


def edit_core_memory(blocks: dict[str, str], limits: dict[str, int], command: dict[str, str]) -> dict[str, str]:
    if not isinstance(command, dict):
        raise TypeError("command должен быть словарём")
    label = command.get("label")
    if label not in limits:
        raise CoreMemoryError(f"нет блока {label!r}; есть: {', '.join(limits)}")
    edits = {"append": _appended, "replace": _replaced}
    if command.get("action") not in edits:
        raise CoreMemoryError("action — append или replace")
    text = edits[command["action"]](blocks.get(label, ""), command)
    if len(text) > limits[label]:
        raise CoreMemoryError(f"блок {label} переполнится: {len(text)} > {limits[label]}")
    result = dict(blocks)
    result[label] = text
    return result
