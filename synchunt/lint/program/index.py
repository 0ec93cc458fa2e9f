"""The files linted together as one program: who calls each function, from which module, and whether those
are all its callers.

Built after the files are linted, from the summaries their lint made of the same trees
(:mod:`synchunt.lint.program.summary`). A call is resolved through the calling module's imports (relative ones,
re-exports of a package's ``__init__``, ``import ... as`` renames, and a vendored package imported by its own
name: ``vllm/third_party/triton_kernels`` as ``triton_kernels``), so ``ops.step(batch)`` in ``api.py`` is a
call site of ``step`` in ``ops.py``. A function is **closed** when every reference to its name in these files is
a call the index resolved (to it or to another function of that name) or a call of a name imported from outside
the program: nothing else hands it on, looks it up by name or calls it through an object of unknown class, so
its call sites here are all it has when the package runs as shipped (reading it as an object, ``f.cache``, is
no call). A class's constructor is closed the same
way, through the class's name, when no class of these files derives from it. The index answers what needs the
whole program: which functions nothing in it calls (:mod:`synchunt.lint.program.reach`).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from synchunt.lint.program.summary import ModuleSummary

_REEXPORT_HOPS = 6


@dataclass(frozen=True)
class Target:
    """A function or method of the program: ``qualname`` ``f``, ``C.m`` or ``C.__init__`` (a constructor)."""

    module: str
    qualname: str


@dataclass(frozen=True)
class Site:
    """A call of a program function: in ``module``, inside ``caller`` (a function's qualname; ``None`` at module
    or class level)."""

    module: str
    caller: str | None


class ProgramIndex:
    def __init__(self, summaries: Iterable[ModuleSummary]) -> None:
        seen: Counter[str] = Counter()
        listed = list(summaries)
        for summary in listed:
            seen[summary.name] += 1
        # two files claiming one module name (scripts outside packages): neither is resolved to
        self.modules: dict[str, ModuleSummary] = {summary.name: summary for summary in listed
                                                  if seen[summary.name] == 1}
        self.by_path = {summary.path: summary for summary in listed}
        # every name a module may be imported by (its own, and with namespace packages above it) → its own
        spelled: dict[str, set[str]] = {}
        for summary in self.modules.values():
            for alias in (summary.name, *summary.aliases):
                spelled.setdefault(alias, set()).add(summary.name)
        self.names = {alias: next(iter(found)) for alias, found in spelled.items() if len(found) == 1}
        self.names.update({name: name for name in self.modules})
        # vendored packages imported by their own name (`vllm/third_party/triton_kernels` as `triton_kernels`,
        # put on sys.path or in sys.modules): a dotted tail of a module's name, when no other module has it
        tails: dict[str, set[str]] = {}
        for name, summary in self.modules.items():
            parts = name.split(".")
            # a package's own name too (`triton_kernels`); a plain module's alone says too little (`utils`)
            for start in range(1, len(parts) - (0 if summary.is_package else 1)):
                tails.setdefault(".".join(parts[start:]), set()).add(name)
        self.names.update({tail: next(iter(found)) for tail, found in tails.items()
                           if len(found) == 1 and tail not in spelled})
        # ... and every package above one (`a`, `a.b` for `a.b.c`): what `import a` can name
        self.packages = {".".join(name.split(".")[:end]) for name in self.names
                         for end in range(1, name.count(".") + 2)}
        self.references: Counter[str] = Counter()
        self.owners: Counter[str] = Counter()  # names used as an attribute's object (see ModuleSummary.owners)
        patterns: set[str] = set()
        for summary in listed:
            self.references.update(summary.references)
            self.owners.update(summary.owners)
            patterns |= summary.dynamic_names
        self.dynamic = re.compile("|".join(f"(?:{pattern})" for pattern in sorted(patterns))) if patterns else None
        self.sites: dict[tuple[str, str], list[Site]] = {}
        self.resolved: Counter[str] = Counter()  # references accounted for by resolved calls, per name
        self.subclassed: set[tuple[str, str]] = set()
        self.imported: set[str] = set()  # modules another module of the program imports
        # functions and classes imported by name where that name is not used, not even as a type outside a
        # package's `__init__` (which re-exports its API; or an import kept for others): callers outside the
        # program may use them
        self.exported: set[tuple[str, str]] = set()
        for summary in self.modules.values():
            self._index_module(summary)
            self._index_imports(summary)

    def _index_module(self, summary: ModuleSummary) -> None:
        for chain, klass, caller in summary.calls:  # see CallSummary
            target = self.resolve(summary.name, chain, klass)
            if target is None:
                if self._external(summary, chain):
                    self.resolved[chain[-1]] += 1  # another program's function: not a caller of ours
                continue
            self.sites.setdefault((target.module, target.qualname), []).append(
                Site(summary.name, caller))
            # The names the call is written with are the references it accounts for (an import may rename:
            # `from .ops import fwd as control_fwd`), the class's too in `Class.method(...)`.
            self.resolved[chain[-1]] += 1
            if len(chain) >= 2 and target.qualname.startswith(f"{chain[-2]}."):
                self.resolved[chain[-2]] += 1
        for klass in summary.classes.values():
            for base in klass.bases:
                found = self.entity(summary.name, base) if base else None
                if found is not None and found[0] == "class":
                    self.subclassed.add((found[1], found[2]))

    def _index_imports(self, summary: ModuleSummary) -> None:
        for loaded in summary.loads:  # `from a.b import x`, whatever `x` is (`x = torch.ops.lib.x`)
            origin = self.names.get(loaded)
            if origin is not None and origin != summary.name:
                self.imported.add(origin)
        for local in summary.imports:
            found = self._name(summary.name, local, 0)
            if found is None:
                continue
            kind, owner, name = found
            module = self.names.get(owner, owner)
            if module != summary.name:
                self.imported.add(module)
            # An import only type positions use (`x: Optional[Coordinator]`, `isinstance(x, Coordinator)`, a base)
            # is the module's own use, not a re-export; a package's `__init__` re-exports what it imports anyway.
            used = summary.references[local] + summary.owners[local]
            if not summary.is_package:
                used += summary.typed_uses[local]
            if kind != "module" and used == 0:
                self.exported.add((module, name))

    # -- resolution ----------------------------------------------------------------------------------
    def resolve(self, module: str, chain: tuple[str, ...], klass: str | None = None) -> Target | None:
        """The function a call written ``chain`` in ``module`` calls (``klass``: the class of the method it is
        in, what ``self``/``cls`` are), or None when it is not one of the program's."""
        summary = self.modules.get(module)
        if summary is None or not chain:
            return None
        if chain[0] in ("self", "cls"):
            if klass is None or len(chain) != 2:
                return None
            qualname = f"{klass}.{chain[1]}"
            # not the class's own: inherited, or set on the object elsewhere
            return Target(module, qualname) if qualname in summary.functions else None
        found = self.entity(module, chain)
        if found is None:
            return None
        kind, owner, name = found
        if kind == "function":
            return Target(owner, name)
        if kind == "class" and f"{name}.__init__" in self.modules[owner].functions:
            return Target(owner, f"{name}.__init__")
        return None

    def _external(self, summary: ModuleSummary, chain: tuple[str, ...]) -> bool:
        """The call is of a name imported from outside the program (``from transformers import f``): whatever
        it calls, it is not a function of these files."""
        imported = summary.imports.get(chain[0])
        return imported is not None and chain[0] not in summary.functions and chain[0] not in summary.classes \
            and imported.module not in self.packages

    def entity(self, module: str, chain: tuple[str, ...]) -> tuple[str, str, str] | None:
        """What ``chain`` names from ``module``: ``("module", name, "")``, ``("class", module, C)`` or
        ``("function", module, qualname)``."""
        found = self._name(module, chain[0], 0, local=True)
        for part in chain[1:]:
            if found is None:
                return None
            kind, owner, name = found
            if kind == "module":
                found = ("module", f"{owner}.{part}", "") if f"{owner}.{part}" in self.packages \
                    else self._name(owner, part, 0)
            elif kind == "class":
                qualname = f"{name}.{part}"
                found = ("function", owner, qualname) if qualname in self.modules[owner].functions else None
            else:
                return None
        return found

    def _name(self, module: str, name: str, hops: int, local: bool = False) -> tuple[str, str, str] | None:
        module = self.names.get(module, module)
        summary = self.modules.get(module)
        if summary is None or hops > _REEXPORT_HOPS:
            return None
        if name in summary.functions:
            return "function", module, name
        if name in summary.classes:
            return "class", module, name
        imported = summary.imports.get(name)
        if imported is not None:
            if imported.attr is None:  # `import a.b.c` binds `a`: a package of the program, or outside it
                return ("module", imported.module, "") if imported.module in self.packages else None
            dotted = f"{imported.module}.{imported.attr}"
            if dotted in self.names:
                return "module", dotted, ""
            return self._name(imported.module, imported.attr, hops + 1)  # a re-export: followed
        if not local and f"{module}.{name}" in self.names:
            return "module", f"{module}.{name}", ""
        return None

    # -- callers --------------------------------------------------------------------------------------
    def closed(self, module: str, qualname: str) -> bool:
        """Every reference to the function's name in the program is a resolved call (there may be none): the
        sites the index found are all the calls it has."""
        summary = self.modules.get(module)
        function = summary.functions.get(qualname) if summary is not None else None
        if function is None:
            return False
        owner, _, name = qualname.rpartition(".")
        if name == "__init__":
            return (module, owner) not in self.subclassed and (
                self.references[owner] + self.owners[owner] == self.resolved[owner])
        if name.startswith("__") and name.endswith("__"):
            return False  # called by the language, not by name
        if self.dynamic is not None and self.dynamic.fullmatch(name):
            return False  # perhaps looked up by a name built at run time
        return self.references[name] == self.resolved[name]

    def sites_of(self, module: str, qualname: str) -> list[Site]:
        return self.sites.get((module, qualname), [])
