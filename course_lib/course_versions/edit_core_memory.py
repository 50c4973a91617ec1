"""The course's version of exercises/edit_core_memory.py (notebook 09)."""


class CoreMemoryError(ValueError):
    """The edit cannot be made; the blocks stay as they were."""


def edit_core_memory(blocks: dict[str, str], limits: dict[str, int], command: dict[str, str]) -> dict[str, str]:
    if not isinstance(command, dict):
        raise TypeError("command должен быть словарём")
    label = command.get("label")
    if label not in limits:
        raise CoreMemoryError(f"нет блока {label!r}; есть: {', '.join(limits)}")
    current = blocks.get(label, "")
    action = command.get("action")
    if action == "append":
        text = (command.get("text") or "").strip()
        if not text:
            raise CoreMemoryError("нечего дописать: text пуст")
        updated = f"{current}\n{text}" if current else text
    elif action == "replace":
        old, new = command.get("old") or "", (command.get("new") or "").strip()
        if not old:
            raise CoreMemoryError("old пуст: укажите, какой текст заменить")
        found = current.count(old)
        if found != 1:
            where = "не найден" if found == 0 else f"встречается не один раз ({found}) — уточните"
            raise CoreMemoryError(f"текст {old!r} в блоке «{label}» {where}")
        updated = "\n".join(line for line in current.replace(old, new).splitlines() if line.strip())
    else:
        raise CoreMemoryError(f"неизвестное действие {action!r}: бывает append или replace")
    limit = limits[label]
    if len(updated) > limit:
        raise CoreMemoryError(
            f"блок «{label}» переполнится: длина в символах станет {len(updated)}, предел — {limit}, "
            f"свободно — {max(limit - len(current), 0)}; замените устаревшее через replace"
        )
    return {**blocks, label: updated}
