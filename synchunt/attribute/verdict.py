"""One-line verdicts shared by every renderer (terminal, HTML, gate)."""

from __future__ import annotations

from synchunt.attribute.analysis import Analysis


def verdict(analysis: Analysis) -> str:
    """``"sync-free"`` or e.g. ``"54 latent syncs on thread scheduler"``."""
    syncs = analysis.syncs
    if syncs.empty:
        return "sync-free"
    kinds = []
    confirmed = int(syncs["confirmed"].sum())
    latent = len(syncs) - confirmed
    if confirmed:
        kinds.append(f"{confirmed} confirmed")
    if latent:
        kinds.append(f"{latent} latent")
    noun = "sync" if len(syncs) == 1 else "syncs"
    threads = syncs["thread"].astype(str).value_counts()
    name = str(threads.index[0])
    where = (name if name.startswith("thread ") else f"thread {name}") if len(threads) == 1 else \
        f"{len(threads)} threads"
    return f"{' + '.join(kinds)} {noun} on {where}"


def format_us(value: float) -> str:
    """Microseconds in the unit a reader wants: 850 µs, 12.3 ms, 1.20 s."""
    if value >= 1e6:
        return f"{value / 1e6:.2f} s"
    if value >= 1e3:
        return f"{value / 1e3:.2f} ms"
    return f"{value:.1f} µs"


def compress_scopes(scopes: dict[str, int], limit: int = 6) -> list[str]:
    """``{"start_loading › layer_0": 2, …, "start_loading › layer_26": 2}`` → ``["start_loading › layer_0..26 ×2
    each (27 scopes)"]``: numbered scopes with the same count collapse into one range."""
    import re

    groups: dict[tuple[str, int], list[int]] = {}
    plain: list[tuple[str, int]] = []
    for scope, count in scopes.items():
        match = re.fullmatch(r"(.*?)(\d+)", scope or "")
        if match:
            groups.setdefault((match[1], count), []).append(int(match[2]))
        else:
            plain.append((scope or "(no scope)", count))
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
