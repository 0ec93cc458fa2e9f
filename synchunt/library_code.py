"""Which top-level packages are library code rather than the user's, when picking a sync's call site.

Shared by trace attribution (frames named by file) and the runtime guard (frames named by module); standard
library and site-packages code is recognised by location on top of this list.
"""

from __future__ import annotations

LIBRARY_PACKAGES: tuple[str, ...] = ("torch", "functorch", "triton", "synchunt", "typer", "click", "rich",
                                     "pandas", "numpy", "pluggy", "_pytest", "pytest")
