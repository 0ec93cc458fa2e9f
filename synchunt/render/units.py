"""Figures with units, and compact summaries shared by every text renderer."""

from __future__ import annotations

import re

from synchunt.sites import NO_SCOPE


def format_us(value: float) -> str:
    """Microseconds in the unit a reader wants: 850.0 µs, 12.30 ms, 1.20 s."""
    if value >= 1e6:
        return f"{value / 1e6:.2f} s"
    if value >= 1e3:
        return f"{value / 1e3:.2f} ms"
    return f"{value:.1f} µs"


def signed_us(value: float) -> str:
    """``+1.41 ms`` / ``−897.7 µs``: a time delta."""
    return f"{'−' if value < 0 else '+'}{format_us(abs(value))}"


def plural(count: int, noun: str, many: str | None = None) -> str:
    return f"{count} {noun if count == 1 else (many or noun + 's')}"


def compress_scopes(scopes: dict[str, int], limit: int = 6) -> list[str]:
    """``{"start_loading › layer_0": 2, …, "start_loading › layer_26": 2}`` → ``["start_loading › layer_0..26 ×2
    each (27 scopes)"]``: numbered scopes with the same count collapse into one range."""
    groups: dict[tuple[str, int], list[int]] = {}
    plain: list[tuple[str, int]] = []
    for scope, count in scopes.items():
        match = re.fullmatch(r"(.*?)(\d{1,18})", scope or "")  # a number int() reads whatever its length
        if match:
            groups.setdefault((match[1], count), []).append(int(match[2]))
        else:
            plain.append((scope or NO_SCOPE, count))
    lines = []
    for (prefix, count), numbers in groups.items():
        numbers.sort()
        if len(numbers) > 2 and numbers == list(range(numbers[0], numbers[-1] + 1)):
            lines.append((count * len(numbers), f"{prefix}{numbers[0]}..{numbers[-1]} ×{count} each "
                                                f"({len(numbers)} scopes)"))
        else:
            lines.extend((count, f"{prefix}{n} ×{count}") for n in numbers)
    lines.extend((count, f"{scope} ×{count}") for scope, count in plain)
    lines.sort(key=lambda item: -item[0])
    shown = [text for _, text in lines[:limit]]
    if len(lines) > limit:
        shown.append(f"… {len(lines) - limit} more")
    return shown
