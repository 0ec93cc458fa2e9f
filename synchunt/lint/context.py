"""Where a finding runs: on the per-step path (``step``), once or rarely (``cold``), or ``unknown``.

A sync in a model's ``forward``, a scheduler loop, sampling, batch preparation or KV-cache management costs a
stall per step or request; the same sync in ``__init__``, weight loading, graph capture, a debug branch or a
test costs it once. The source says which by convention, and the lint reads it in this order:

1. the file: tests and benchmarks are ``cold``;
2. the statement: a `with torch.cuda.graph(...)` block (capture), an error path (an ``if`` whose body raises,
   its test included: a validation check; an ``except`` handler; an ``assert``), a debug branch
   (``if DEBUG:``, ``if self.debug_mode:``) are ``cold``;
3. the function, by its name (and a cache decorator: a lazy cache is filled once), then by the module's own
   calls to it (a helper called from ``forward`` is ``step``; one only ``__init__`` calls is ``cold``), then by
   the function it is defined in; code at module level (an import, or a script's loop) is ``unknown``.

Names are matched as glob patterns on the function's own name, lower-cased; ``[tool.synchunt]``'s
``step-functions`` and ``cold-functions`` are read before the defaults.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from pathlib import PurePath
from typing import TYPE_CHECKING

from synchunt.config import name_matches

if TYPE_CHECKING:
    from synchunt.lint.callsites import CallSite
    from synchunt.lint.scopes import Scope


class RunContext(str, Enum):
    STEP = "step"
    COLD = "cold"
    UNKNOWN = "unknown"


# Read first: step functions whose names contain a cold word (`init_forward_metadata` runs every step).
_STEP_FIRST = ("forward", "__call__", "*forward_metadata*", "*forward_batch*")
COLD_FUNCTIONS: tuple[str, ...] = (
    "__init__", "__post_init__", "__new__", "__del__", "__repr__", "__str__", "__hash__", "__init_subclass__",
    "init", "init_*", "_init_*", "*_init", "initialize*", "_initialize*", "setup*", "_setup*", "set_up*",
    "*load_weight*", "*weight_loader*", "*load_state_dict*", "load_model*", "_load_model*", "*from_pretrained*",
    "process_weights_after_loading", "*after_loading*", "create_weights", "_create_weights", "*_quantize_weight*",
    "*capture*", "*warmup*", "*warm_up*", "profile_run", "_dummy_run", "*dummy_run*", "*_dummy_*",
    "shutdown", "close", "cleanup", "*teardown*", "destroy*", "_destroy*", "release*", "__exit__",
    "*debug*", "dump*", "_dump*", "check_*", "_check_*", "validate*", "_validate*", "sanity_check*",
    "assert_*", "_assert_*", "*rebalance*", "rearrange*", "*reshuffle*", "*broadcast_weight*",
    "update_weights*", "*update_weights_from*", "*checkpoint*", "save*", "_save*", "test_*", "benchmark*",
    "bench_*", "_bench*", "*autotune*", "*calibrat*", "*_tune", "tune*", "main", "build_model*", "*register_*",
)
STEP_FUNCTIONS: tuple[str, ...] = (
    "forward_*", "_forward*", "*_forward", "*_forward_*", "step", "*_step", "step_*", "_step_*", "*sample*",
    "decode*", "_decode*", "*_decode", "prefill*", "_prefill*", "*_prefill", "*run_batch*", "execute_model*",
    "_execute*", "prepare_*", "_prepare_*", "schedule*", "_schedule*", "*event_loop*", "*process_batch_result*",
    "*next_batch*", "*_batch", "alloc*", "_alloc*", "free*", "_free*", "evict*", "_evict*", "match_prefix*",
    "cache_*_req*", "*lock_ref*", "compute_logits", "*logits_processor*", "apply", "apply_*", "propose*",
    "draft*", "verify", "*_verify", "generate*", "*get_next*", "update_state*", "*_update_state*",
)
_CACHE_DECORATORS = frozenset({"cache", "lru_cache", "cached_property", "cached"})
_DEBUG_WORDS = ("debug", "verbose", "sanity", "validate")
_TEST_FOLDERS = frozenset({"test", "tests", "testing", "benchmark", "benchmarks", "bench"})
DEFAULT_TEST_FILES: tuple[str, ...] = ("test", "tests", "testing", "benchmark", "benchmarks", "test_*.py",
                                       "*_test.py", "tests.py", "testing.py", "conftest.py", "benchmark_*.py",
                                       "bench_*.py", "*_benchmark.py")

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda


def is_test_path(path: str) -> bool:
    """Whether a file is a test or a benchmark by the common conventions (``tests/``, ``test_*.py``, …)."""
    parts = PurePath(path).parts
    name = parts[-1].lower() if parts else ""
    return any(part.lower() in _TEST_FOLDERS for part in parts[:-1]) or any(
        name_matches(name, pattern) for pattern in DEFAULT_TEST_FILES if pattern.endswith(".py"))


@dataclass(frozen=True)
class ContextRules:
    """The name patterns, the project's first (``[tool.synchunt]``), then the defaults."""

    step: tuple[str, ...] = ()
    cold: tuple[str, ...] = ()

    def by_name(self, name: str) -> RunContext | None:
        name = name.lower()
        for patterns, context in ((self.step, RunContext.STEP), (self.cold, RunContext.COLD),
                                  (_STEP_FIRST, RunContext.STEP), (COLD_FUNCTIONS, RunContext.COLD),
                                  (STEP_FUNCTIONS, RunContext.STEP)):
            if any(name_matches(name, pattern.lower()) for pattern in patterns):
                return context
        return None


class ContextFinder:
    """Function contexts of one module (memoized); ``call_sites`` are the module's calls to its functions."""

    def __init__(self, path: str, rules: ContextRules, call_sites: dict[int, list[CallSite]]) -> None:
        self.test_file = is_test_path(path)
        self.rules = rules
        self.call_sites = call_sites
        self.memo: dict[int, RunContext] = {}
        self.active: set[int] = set()

    def of_scope(self, scope: Scope) -> RunContext:
        """The context of code running in ``scope`` (its innermost function)."""
        if self.test_file:
            return RunContext.COLD
        while scope is not None and scope.node is None and scope.parent is not None:
            scope = scope.parent  # a class body: the module's
        if scope is None or scope.node is None:
            return RunContext.UNKNOWN  # module level: an import, or a script's own loop
        return self._function(scope)

    def _function(self, scope: Scope) -> RunContext:
        key = id(scope.node)
        if key in self.memo:
            return self.memo[key]
        if key in self.active:
            return RunContext.UNKNOWN  # recursion: the other callers decide
        self.active.add(key)
        try:
            found = self._decide(scope)
        finally:
            self.active.discard(key)
        self.memo[key] = found
        return found

    def _decide(self, scope: Scope) -> RunContext:
        node = scope.node
        if not isinstance(node, ast.Lambda):
            named = self.rules.by_name(node.name)  # type: ignore[union-attr]
            if named is not None:
                return named
            if any(called_name(item) in _CACHE_DECORATORS for item in node.decorator_list):  # type: ignore[union-attr]
                return RunContext.COLD
        callers = [self._caller(site_scope) for _, site_scope, _ in self.call_sites.get(id(node), ())]
        if RunContext.STEP in callers:
            return RunContext.STEP
        if callers and all(caller is RunContext.COLD for caller in callers):
            return RunContext.COLD
        parent = scope.parent
        while parent is not None and parent.node is None and parent.parent is not None:
            parent = parent.parent
        if parent is not None and parent.node is not None:
            return self._function(parent)  # a closure runs where its maker runs
        return RunContext.UNKNOWN

    def _caller(self, scope: Scope) -> RunContext:
        while scope is not None and scope.node is None and scope.parent is not None:
            scope = scope.parent
        if scope is None or scope.node is None:
            return RunContext.UNKNOWN
        return self._function(scope)


def statement_is_cold(node: ast.stmt) -> bool:
    """Whether a compound statement's body (and, for an error check, its test) runs off the step path:
    graph capture, a debug branch, an error path."""
    if isinstance(node, ast.If):
        return _raises(node.body) or _mentions_debug(node.test)
    if isinstance(node, (ast.With, ast.AsyncWith)):
        return any(called_name(item.context_expr) == "graph" for item in node.items)
    return isinstance(node, (ast.Assert, ast.Raise))


def _raises(body: Sequence[ast.stmt]) -> bool:
    return bool(body) and isinstance(body[-1], ast.Raise)


def _mentions_debug(test: ast.expr) -> bool:
    for part in ast.walk(test):
        name = part.id if isinstance(part, ast.Name) else part.attr if isinstance(part, ast.Attribute) else ""
        if name and any(word in name.lower() for word in _DEBUG_WORDS):
            return True
    return False


def called_name(node: ast.expr) -> str:
    """The last name of what ``node`` calls or names (``torch.cuda.graph()`` → ``graph``; ``a.b`` → ``b``)."""
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else ""
