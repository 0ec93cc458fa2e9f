"""Where synchunt keeps what it caches, decided without loading anything heavy (the command line asks before it
imports numpy: `synchunt.cli.prefetch`)."""

from __future__ import annotations

import os
from pathlib import Path


def default_cache_dir() -> Path:
    """``$SYNCHUNT_CACHE_DIR``, else ``$XDG_CACHE_HOME/synchunt/traces``, else ``~/.cache/synchunt/traces``."""
    explicit = os.environ.get("SYNCHUNT_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "synchunt" / "traces"


def digest_memo_dir(cache_dir: Path | None) -> Path:
    """The folder of remembered file digests (`synchunt.digests`), inside the trace cache's folder."""
    return (cache_dir if cache_dir is not None else default_cache_dir()) / "digests"
