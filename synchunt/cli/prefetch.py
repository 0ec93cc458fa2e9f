"""The traces `synchunt analyze` names, hashed for the cache while the command's modules load.

A trace's cache key is a hash of its every byte (`synchunt.digests`): about 35 ms for a 250 MB trace, about as long
as loading numpy. Before typer, numpy or the analysis is imported, the arguments that name trace files are handed
to `synchunt.digests.prefetch`, which hashes them in a background thread; the cache then takes each digest instead
of hashing the file again. Only where the digests will be asked for in this process: the cache on and no worker
processes (a pool is not forked while another thread runs: `synchunt.executor`). The arguments are read before
the command line is parsed, so a file that is some option's value may be hashed for nothing (``--output``'s is
skipped): a wasted read, never a wrong key.
"""

from __future__ import annotations

from pathlib import Path

from synchunt.cache_folder import digest_memo_dir
from synchunt.digests import prefetch

# The suffixes of trace files (synchunt.trace.load's, not imported here: that module loads numpy).
TRACE_SUFFIXES = (".json", ".json.gz")
_VALUE_OPTIONS = frozenset({"--output", "-o"})
_CACHE_DIR = "--cache-dir"
# Options after which no digest is wanted here: no cache, or the traces loaded by other processes.
_ELSEWHERE = frozenset({"--no-cache", "--workers", "--executor", "--scheduler"})


def prefetch_trace_digests(arguments: list[str]) -> None:
    """Start hashing the trace files among an `analyze` command's ``arguments`` (those after the command), but
    for those whose digests the cache's memo remembers."""
    if any(argument.split("=", 1)[0] in _ELSEWHERE for argument in arguments):
        return
    named = [argument for before, argument in zip(["", *arguments], arguments, strict=False)
             if not argument.startswith("-") and before not in _VALUE_OPTIONS and argument.endswith(TRACE_SUFFIXES)]
    if named:
        prefetch(named, digest_memo_dir(_cache_dir(arguments)))


def _cache_dir(arguments: list[str]) -> Path | None:
    """The value of the last ``--cache-dir`` among ``arguments`` (None: the default folder)."""
    found = None
    for before, argument in zip(["", *arguments], arguments, strict=False):
        if before == _CACHE_DIR:
            found = argument
        elif argument.startswith(_CACHE_DIR + "="):
            found = argument.split("=", 1)[1]
    return Path(found) if found else None
