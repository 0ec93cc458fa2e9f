"""What one hostile case is, and what its run must show (the contract of issue 12, checked from outside).

A case writes its inputs into an empty folder, runs one ``synchunt`` command there and is judged on the exit
status, the two streams, the files it must not touch and, where the events survive the mutation, the verdict.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# Failure kinds, in the order a case is judged (the first that applies is reported).
HANG = "hang"
MEMORY = "memory"
TRACEBACK = "traceback"
WRONG_EXIT = "wrong exit"
DATA_LOSS = "data loss"
BAD_OUTPUT = "bad output"
WRONG_VERDICT = "wrong verdict"
PASS = "pass"
KINDS = (PASS, TRACEBACK, HANG, WRONG_EXIT, WRONG_VERDICT, MEMORY, DATA_LOSS, BAD_OUTPUT)

ANY_EXIT = frozenset({0, 1, 2})
REFUSED = frozenset({2})

Builder = Callable[[Path], None]


@dataclass(frozen=True)
class Expect:
    """What the run must show besides the universal rules (no traceback, no hang, bounded memory, clean text).

    ``exits``: the allowed exit statuses. ``stdout_json``: stdout is one strict JSON document (no NaN/Infinity)
    when the command succeeded (exit 0 or 1). ``verdict``: the keys of the verdict (see :func:`verdict_of`) the
    JSON must have when the command succeeded (exit 0 or 1).
    ``unchanged``: files (relative to the case folder) whose bytes must survive. ``salvage``: the number of syncs
    a truncated trace must still give (and the result must be marked partial); ``partial``: a successful JSON
    analysis must be marked partial. ``error_mentions``: a word the ``error:`` line must contain when the
    command exits 2 (``error_line``: exit 2 means exactly one ``error:`` line on stderr; lint reports a file it
    cannot parse in its own output instead). ``max_file_bytes``: size bound of every file the command creates
    (HTML pages). ``forbid_line``: text no output line may start with (annotation injection).
    ``findings``: how many lint findings the JSON must list. ``replaced``: files a successful command must have
    rewritten (``--force``).
    """

    exits: frozenset[int] = ANY_EXIT
    stdout_json: bool = False
    stdout_xml: bool = False
    check_stdout_text: bool = True
    verdict: dict[str, Any] | None = None
    unchanged: tuple[str, ...] = ()
    salvage: int | None = None
    partial: bool = False
    error_mentions: str | None = None
    error_line: bool = True
    max_file_bytes: int = 32 << 20
    forbid_line: str | None = None
    no_nan_text: bool = False
    findings: int | None = None
    replaced: tuple[str, ...] = ()


@dataclass(frozen=True)
class Case:
    """One command on one prepared folder. ``argv`` is synchunt's arguments (paths relative to the folder;
    ``{dir}`` stands for the folder's absolute path).

    ``isolation``: ``fork`` runs ``synchunt.cli.main`` in a forked child of a warm interpreter (fast);
    ``process`` runs ``python -m synchunt`` as a fresh process (the real exit-status and stream contract), or
    ``python *program`` when ``program`` is set (the harness's own self-tests).
    ``heavy`` cases (big files, profiling) stay out of the default-suite sample.
    """

    id: str
    family: str
    argv: tuple[str, ...]
    build: Builder
    expect: Expect = field(default_factory=Expect)
    timeout_s: float = 10.0
    isolation: str = "fork"
    heavy: bool = False
    file_size_limit: int | None = None  # RLIMIT_FSIZE in the child: a write that fails midway
    program: tuple[str, ...] = ("-m", "synchunt")
    note: str = ""

    def reproduce(self, seed: int) -> str:
        return f"python scripts/hostile_corpus.py --seed {seed} --case '{self.id}' --keep"


def files(contents: dict[str, bytes | str]) -> Builder:
    """A builder writing these files (folders created as needed)."""
    def build(folder: Path) -> None:
        for name, data in contents.items():
            path = folder / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
    return build


def symlink(name: str, target: str) -> Builder:
    """A builder making ``name`` a symbolic link to ``target`` (folders created as needed)."""
    def build(folder: Path) -> None:
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        os.symlink(target, folder / name)
    return build


def fifo(name: str) -> Builder:
    """A builder making ``name`` a FIFO (folders created as needed): reading it blocks until a writer comes."""
    def build(folder: Path) -> None:
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        os.mkfifo(folder / name)
    return build


def chain(*builders: Builder) -> Builder:
    def build(folder: Path) -> None:
        for builder in builders:
            builder(folder)
    return build


def digest(path: Path) -> str | None:
    """sha256 of a file's bytes, or None when it does not exist (or cannot be read)."""
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else None
    except OSError:
        return None
