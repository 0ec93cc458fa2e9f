"""Figures with units (standard library only): every stage that words a figure for people uses these."""

from __future__ import annotations


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


