"""Functions nothing in the program calls: a sync there never runs when the package runs as shipped.

Serving code bases ship code no path reaches: helpers kept for tests that live elsewhere, vendored kernels'
reference functions, an allocator method nothing calls since a refactor, a debug API. A reviewer reading a
finding there calls it false ("no caller in the package"), and it was the largest kind of false finding in the
fourth fresh sample. The program index knows every resolved call; from what may be called from outside it, the
calls are followed, and what they never reach is **unreached**.

What may be called from outside (the roots): every function of a module no other module of the program imports
(a script, an entry point, or library code the files linted do not use: linting a library alone finds nothing
unreached); a function or class imported by name where the name is not used (a package's ``__init__``
re-exporting its API); a function that is not *closed* (its name is used somewhere other than a resolved call:
handed on as a callback, looked up by name, called through an object of unknown class);
a decorated function (a registry, a property, a route; not one a decorator only wraps, as ``lru_cache`` and
``no_grad`` do); a special method (``__call__``, ``__getitem__``: called
by the language); a method of a class deriving from a class outside the program (a framework may call it:
``nn.Module``, ``autograd.Function``); a method that overrides one of a base class of the program (called
through the base); and every call made at import (module or class level). Everything a root's calls reach,
transitively, is reached.
"""

from __future__ import annotations

from collections import deque

from synchunt.lint.program.index import ProgramIndex

FunctionKey = tuple[str, str]  # (module, qualname)


def unreached(index: ProgramIndex) -> frozenset[FunctionKey]:
    """The program functions no root's calls reach."""
    callees: dict[FunctionKey, list[FunctionKey]] = {}
    live: set[FunctionKey] = set()
    for target, sites in index.sites.items():
        for site in sites:
            caller = (site.module, site.caller) if site.caller is not None else None
            if caller is None or caller[1] not in index.modules[site.module].functions:
                live.add(target)  # a call at import, or in code the index does not name: it may run
            else:
                callees.setdefault(caller, []).append(target)
    live |= _roots(index)
    queue = deque(live)
    while queue:
        for callee in callees.get(queue.popleft(), ()):
            if callee not in live:
                live.add(callee)
                queue.append(callee)
    every = {(module, qualname) for module, summary in index.modules.items() for qualname in summary.functions}
    return frozenset(every - live)


def _roots(index: ProgramIndex) -> set[FunctionKey]:
    roots: set[FunctionKey] = set()
    for module, summary in index.modules.items():
        entry = module not in index.imported  # a script, or a module only code outside the program imports
        framework_classes, inherited = _class_facts(index, module)
        for qualname, function in summary.functions.items():
            owner, _, name = qualname.rpartition(".")
            if (entry or function.decorated or (name.startswith("__") and name.endswith("__"))
                    or not index.closed(module, qualname) or owner in framework_classes
                    or name in inherited.get(owner, ()) or (module, owner or qualname) in index.exported):
                roots.add((module, qualname))
    return roots


def _class_facts(index: ProgramIndex, module: str) -> tuple[set[str], dict[str, set[str]]]:
    """The module's classes with a base outside the program, and per class the method names its program
    ancestors define (what a method of that name overrides)."""
    framework: set[str] = set()
    inherited: dict[str, set[str]] = {}
    for name in index.modules[module].classes:
        names: set[str] = set()
        seen: set[tuple[str, str]] = set()
        pending = [(module, name)]
        while pending:
            owner, klass = pending.pop()
            for base in index.modules[owner].classes[klass].bases:
                if base == ("object",):
                    continue
                found = index.entity(owner, base) if base else None
                if found is None or found[0] != "class":
                    framework.add(name)
                    continue
                key = (found[1], found[2])
                if key not in seen:
                    seen.add(key)
                    names |= index.modules[key[0]].classes[key[1]].methods
                    pending.append(key)
        inherited[name] = names
    return framework, inherited
