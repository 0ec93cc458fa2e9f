"""Static forms: one detector per ``lint_forms`` name of the rule catalogue.

A rule names its forms (``"mask-subscript"``, ``"method:item"``); this registry maps each form's name (the
part before ``:``) to a detector. Adding a rule whose forms already exist needs no code here.
A detector looks at one node and answers with a :class:`Hit` (what, how sure) or ``None``; where the node
sits (loop, stream block, suppression) is the engine's business.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from synchunt.findings import Confidence
from synchunt.lint.provenance import Classifier
from synchunt.lint.scopes import Scope
from synchunt.lint.where import Where
from synchunt.rules import Rule


@dataclass(frozen=True)
class Hit:
    """``line``: where the runtime reports it when that is not ``node``'s first line (a multi-line ``if``)."""

    node: ast.AST
    message: str
    confidence: Confidence
    line: int | None = None


class Context(Protocol):
    """What a detector may ask about the code around a node."""

    classifier: Classifier
    scope: Scope
    tested: set[int]  # `and`/`or`/`not` nodes an enclosing test has read (see forms.control)

    def where(self, node: ast.AST | None) -> Where: ...


Detector = Callable[[ast.AST, Context, Rule, "str | None"], "Hit | None"]


@dataclass(frozen=True)
class Form:
    name: str
    node_types: tuple[type[ast.AST], ...]
    detect: Detector
    takes_argument: bool  # `call:NAME`, `method:NAME`
    call_names: tuple[str, ...] = ()  # for calls: the callee names it looks at (none: the argument)
    call_suffix: str = ""  # for calls: also callee names ending with this (`device_synchronize`)

    def callees(self, argument: str | None) -> tuple[str, ...]:
        """The last names of the callees this form examines (``x.item()``, ``torch.where``): its own, or the
        catalogue's argument (``linalg-checked:linalg.inv`` → ``inv``)."""
        return self.call_names or ((argument.rsplit(".", 1)[-1],) if argument else ())


FORMS: dict[str, Form] = {}


def register(name: str, *node_types: type[ast.AST], takes_argument: bool = False,
             call_names: tuple[str, ...] = (), call_suffix: str = "") -> Callable[[Detector], Detector]:
    """Register a detector. For ``ast.Call`` nodes the engine only offers calls whose callee's last name is
    in ``call_names`` (or is the form's argument), which keeps the walk fast on large trees."""
    def decorate(detect: Detector) -> Detector:
        if name in FORMS:
            raise ValueError(f"lint form {name!r} registered twice")
        FORMS[name] = Form(name, node_types, detect, takes_argument, call_names, call_suffix)
        return detect

    return decorate


def resolve(spec: str) -> tuple[Form, str | None]:
    """The detector and its argument for a catalogue form spec such as ``"method:item"``."""
    name, _, argument = spec.partition(":")
    form = FORMS.get(name)
    if form is None:
        raise KeyError(f"no detector for lint form {spec!r}")
    if form.takes_argument != bool(argument):
        raise ValueError(f"lint form {spec!r}: {name!r} {'needs' if form.takes_argument else 'takes no'} argument")
    return form, argument or None


_READ_CONFIDENCE = {Where.DEVICE: Confidence.HIGH, Where.TENSOR: Confidence.MEDIUM, Where.CPU_NAMED: Confidence.LOW}


def read_confidence(where: Where, *, unknown: Confidence | None = Confidence.MEDIUM) -> Confidence | None:
    """How sure a device read of a value from ``where`` is a sync; ``None``: provably not one."""
    if where is Where.UNKNOWN:
        return unknown
    return _READ_CONFIDENCE.get(where)


def weakest(*confidences: Confidence | None) -> Confidence | None:
    if any(confidence is None for confidence in confidences):
        return None
    return min(confidences, key=lambda confidence: confidence.rank)  # type: ignore[union-attr]


def excerpt(node: ast.AST, limit: int = 72) -> str:
    text = " ".join(ast.unparse(node).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def method_call(node: ast.AST, name: str | None = None) -> tuple[ast.expr, ast.Call] | None:
    """``(receiver, call)`` for ``receiver.name(...)``."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and (
            name is None or node.func.attr == name):
        return node.func.value, node
    return None


from synchunt.lint.forms import calls, checks, control, copies, masks, scalars  # noqa: E402  (registers)

__all__ = ["FORMS", "Context", "Form", "Hit", "calls", "checks", "control", "copies", "masks", "read_confidence",
           "register", "resolve", "scalars", "weakest"]
