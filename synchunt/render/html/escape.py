"""The only two ways trace text reaches the page: a JSON data island and plotly's label mini-markup.

Trace text (event, thread, file and function names) is untrusted. The page never builds HTML from it: the data
travels as JSON inside ``<script type="application/json">`` and the page's script puts it into the DOM with
``textContent``. Plotly renders labels through its own pseudo-HTML (``<b>``, ``<br>``, entities), so text bound
for a figure is entity-escaped first and shows up literally.
"""

from __future__ import annotations

import html
import json
from typing import Any

from synchunt.render.text import shorten

# Inside a <script> element only "</script" and "<!--" can end or confuse it; escaping every <, > and & (and the
# two line separators older JavaScript parsers choke on) rules out both without looking for them.
_SCRIPT_UNSAFE = str.maketrans({"<": "\\u003c", ">": "\\u003e", "&": "\\u0026",
                                "\u2028": "\\u2028", "\u2029": "\\u2029"})


MAX_TEXT = 2000  # characters of one string in the page; the JSON output keeps every name whole


def script_json(value: Any) -> str:
    """``value`` as JSON that is safe verbatim inside a ``<script type="application/json">`` element; strings
    longer than :data:`MAX_TEXT` are shortened (a 1 MB name repeated in every figure would make the page
    unopenable)."""
    text = json.dumps(_bounded(value), ensure_ascii=False, separators=(",", ":"), allow_nan=False, default=_plain)
    return text.translate(_SCRIPT_UNSAFE)


def plotly_text(value: object) -> str:
    """Text for a plotly label or hover line: shown literally, never read as plotly's tags or entities."""
    # Plotly decodes &lt; &gt; &amp; (and numeric entities) but shows &quot; literally; quotes are harmless here
    # since no tag can form once "<" is escaped.
    return html.escape(shorten(value, MAX_TEXT), quote=False)


def _bounded(value: Any) -> Any:
    if isinstance(value, str):
        return shorten(value, MAX_TEXT)
    if isinstance(value, dict):
        return {_bounded(key): _bounded(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_bounded(item) for item in value]
    return value


def _plain(value: Any) -> Any:
    if hasattr(value, "item"):  # numpy scalars
        return value.item()
    if hasattr(value, "tolist"):  # numpy arrays
        return value.tolist()
    raise TypeError(f"cannot embed {type(value).__name__} in the report")
