"""Project configuration: the ``[tool.synchunt]`` table of the nearest ``pyproject.toml``.

```toml
[tool.synchunt]
select = ["SH1", "SH2"]           # rule codes or prefixes (default: every rule)
ignore = ["SH201"]
min-confidence = "medium"         # high | medium | low
exclude = ["vendor", "tests/fixtures/*"]
per-file-ignores = { "scripts/*" = ["SH301"], "bench.py" = ["SH3"] }
exclude-tests = true              # skip test and benchmark files (default), counted in the summary
test-files = ["tests", "test_*.py"]  # what counts as one (default: synchunt.lint.context.DEFAULT_TEST_FILES)
step-functions = ["run_iteration", "handle_*"]  # per-step entry points, on top of the defaults
cold-functions = ["rebuild_*"]    # run once or rarely, on top of the defaults
```

Patterns are matched against paths relative to the directory of the ``pyproject.toml``; a pattern without a
``/`` also matches any single path component (``vendor`` excludes every folder named ``vendor``). A problem in
the table is a :class:`UsageError` that names the file and the key.
"""

from __future__ import annotations

import fnmatch
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from synchunt.errors import UsageError
from synchunt.findings import Confidence

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

_KEYS = ("select", "ignore", "min-confidence", "exclude", "per-file-ignores", "exclude-tests", "test-files",
         "step-functions", "cold-functions")
_CODE = re.compile(r"SH\d{0,3}")


_STAR_ONLY: dict[str, tuple[str, ...] | None] = {}  # pattern → its pieces between `*`s; None: it needs fnmatch


def name_matches(name: str, pattern: str) -> bool:
    """``fnmatch.fnmatchcase(name, pattern)``, without compiling a regular expression for a pattern whose only
    wildcard is ``*`` (almost every one: the lint matches each function's name against about eighty such patterns,
    and compiling them was a tenth of a one-file lint's time)."""
    pieces = _STAR_ONLY.get(pattern, ())
    if pieces == ():
        pieces = _STAR_ONLY[pattern] = None if "?" in pattern or "[" in pattern else tuple(pattern.split("*"))
    if pieces is None:
        return fnmatch.fnmatchcase(name, pattern)
    if len(pieces) == 1:
        return name == pattern
    first, last = pieces[0], pieces[-1]
    end = len(name) - len(last)
    if end < len(first) or not name.startswith(first) or not name.endswith(last):
        return False
    position = len(first)
    for piece in pieces[1:-1]:  # each in turn, leftmost first: a `*` between them takes what lies between
        found = name.find(piece, position, end)
        if found < 0:
            return False
        position = found + len(piece)
    return True


@dataclass(frozen=True)
class SynchuntConfig:
    """What ``[tool.synchunt]`` says; ``path`` is ``None`` when no ``pyproject.toml`` has the table."""

    path: Path | None = None
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    min_confidence: Confidence | None = None
    exclude: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    exclude_tests: bool = True
    test_files: tuple[str, ...] | None = None  # None: the defaults
    step_functions: tuple[str, ...] = ()
    cold_functions: tuple[str, ...] = ()

    @property
    def root(self) -> Path:
        """The folder patterns are relative to: the ``pyproject.toml``'s, else the current one."""
        return self.path.parent if self.path is not None else Path.cwd()

    def is_excluded(self, path: Path) -> bool:
        return matches_any(path, self.exclude, self.root)

    def check_codes(self, known: tuple[str, ...]) -> None:
        """Raise :class:`UsageError`, naming the file and key, for a code or prefix no rule in ``known`` has."""
        tables = [("select", self.select), ("ignore", self.ignore),
                  *((f"per-file-ignores: {pattern}", codes) for pattern, codes in self.per_file_ignores)]
        for key, codes in tables:
            for code in codes:
                if not any(rule.startswith(code) for rule in known):
                    raise UsageError(f"{self.path}: [tool.synchunt]: {key}: unknown rule code or prefix {code!r}")

    def ignored_codes(self, path: Path) -> tuple[str, ...]:
        """The codes (prefixes) that ``per-file-ignores`` silences in ``path``."""
        return tuple(code for pattern, codes in self.per_file_ignores
                     if matches_any(path, (pattern,), self.root) for code in codes)


def load_config(start: Path) -> SynchuntConfig:
    """The configuration of the nearest ``pyproject.toml`` with a ``[tool.synchunt]`` table, looking in
    ``start`` (a folder, or a file's folder) and its parents; an empty configuration when there is none."""
    folder = start.resolve()
    if not folder.is_dir():
        folder = folder.parent
    for candidate in (folder, *folder.parents):
        path = candidate / "pyproject.toml"
        if path.is_file():
            table = _read_table(path)
            if table is not None:
                return parse_table(table, path)
    return SynchuntConfig()


def _read_table(path: Path) -> dict | None:
    try:
        with path.open("rb") as handle:
            document = tomllib.load(handle)
    except (OSError, tomllib.TOMLDecodeError) as error:
        raise UsageError(f"{path}: cannot read: {error}") from None
    tool = document.get("tool")
    table = tool.get("synchunt") if isinstance(tool, dict) else None
    if table is not None and not isinstance(table, dict):
        raise UsageError(f"{path}: [tool.synchunt] must be a table")
    return table


def parse_table(table: dict, path: Path) -> SynchuntConfig:
    """Validate a ``[tool.synchunt]`` table read from ``path``."""
    where = f"{path}: [tool.synchunt]"
    unknown = sorted(set(table) - set(_KEYS))
    if unknown:
        hint = {key.replace("_", "-") for key in unknown} & set(_KEYS)
        suffix = f" (did you mean {', '.join(sorted(hint))}?)" if hint else f"; known keys: {', '.join(_KEYS)}"
        raise UsageError(f"{where}: unknown key {', '.join(map(repr, unknown))}{suffix}")
    confidence = table.get("min-confidence")
    if confidence is not None and confidence not in {level.value for level in Confidence}:
        raise UsageError(f"{where}: min-confidence must be one of high, medium, low, not {confidence!r}")
    exclude_tests = table.get("exclude-tests", True)
    if not isinstance(exclude_tests, bool):
        raise UsageError(f"{where}: exclude-tests must be true or false, not {exclude_tests!r}")
    per_file = table.get("per-file-ignores", {})
    if not isinstance(per_file, dict):
        raise UsageError(f"{where}: per-file-ignores must be a table of pattern = [codes]")
    return SynchuntConfig(
        path=path,
        select=_codes(table, "select", where),
        ignore=_codes(table, "ignore", where),
        min_confidence=Confidence(confidence) if confidence is not None else None,
        exclude=_strings(table.get("exclude", []), f"{where}: exclude"),
        per_file_ignores=tuple((pattern, _codes(per_file, pattern, f"{where}: per-file-ignores"))
                               for pattern in per_file),
        exclude_tests=exclude_tests,
        test_files=_strings(table["test-files"], f"{where}: test-files") if "test-files" in table else None,
        step_functions=_strings(table.get("step-functions", []), f"{where}: step-functions"),
        cold_functions=_strings(table.get("cold-functions", []), f"{where}: cold-functions"),
    )


def _strings(value: object, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(item, str) and item.strip() for item in value):
        raise UsageError(f"{where} must be a list of non-empty strings")
    return tuple(item.strip() for item in value)


def _codes(table: dict, key: str, where: str) -> tuple[str, ...]:
    codes = tuple(code.upper() for code in _strings(table.get(key, []), f"{where}: {key}"))
    for code in codes:
        if not _CODE.fullmatch(code):
            raise UsageError(f"{where}: {key}: {code!r} is not a rule code or prefix (SH101, SH1)")
    return codes


def matches_any(path: Path, patterns: tuple[str, ...], root: Path) -> bool:
    """Whether ``path`` (or a folder above it, up to ``root``) matches one of the glob ``patterns``."""
    if not patterns:
        return False
    absolute, base = Path(os.path.abspath(path)), Path(os.path.abspath(root))  # links are not followed
    try:
        relative = PurePosixPath(absolute.relative_to(base).as_posix())
    except ValueError:
        relative = PurePosixPath(path.as_posix())
    candidates = [str(relative), *(str(parent) for parent in relative.parents if str(parent) != ".")]
    for pattern in patterns:
        pattern = pattern.rstrip("/")
        if "/" in pattern:
            if any(name_matches(candidate, pattern) for candidate in candidates):
                return True
        elif any(name_matches(part, pattern) for part in relative.parts):
            return True
    return False


__all__ = ["SynchuntConfig", "load_config", "matches_any", "name_matches", "parse_table"]
