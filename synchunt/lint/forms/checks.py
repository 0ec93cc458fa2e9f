"""Ops that check their inputs or results on the host: ``multinomial``, ``normal`` with a tensor std, and
``torch.linalg`` calls that raise on bad input."""

from __future__ import annotations

import ast

from synchunt.findings import Confidence
from synchunt.lint.forms import Context, Hit, excerpt, method_call, read_confidence, register
from synchunt.lint.provenance import is_true, keyword
from synchunt.rules import Rule


def _receiver_or_first(node: ast.Call, context: Context, method: str) -> ast.expr | None:
    """The tensor an op works on: ``torch.f(x, ...)`` → ``x``; ``x.f(...)`` → ``x``."""
    if context.classifier.torch_function_name(node.func) == method:
        return node.args[0] if node.args else keyword(node, "input")
    found = method_call(node, method)
    if found is not None and not context.classifier.torch_root(found[0]) and not context.classifier.numpy_root(
            found[0]):
        return found[0]
    return None


@register("multinomial-checked", ast.Call, call_names=("multinomial",))
def detect_multinomial(node: ast.AST, context: Context, rule: Rule, argument: str | None) -> Hit | None:
    """``torch.multinomial(p, n)`` without replacement or with one sample validated ``p`` on the host before
    torch 2.5: always low confidence."""
    assert isinstance(node, ast.Call)
    probabilities = _receiver_or_first(node, context, "multinomial")
    if probabilities is None:
        return None
    offset = 1 if context.classifier.torch_function_name(node.func) == "multinomial" else 0
    positional = node.args[offset:]
    samples = keyword(node, "num_samples") or (positional[0] if positional else None)
    replacement = keyword(node, "replacement") or (positional[1] if len(positional) > 1 else None)
    one_sample = isinstance(samples, ast.Constant) and samples.value == 1
    if is_true(replacement) and not one_sample:
        return None
    if read_confidence(context.where(probabilities)) is None:
        return None
    # Only torch before 2.5 checks on the host (pytorch#134818 made the checks device-side asserts); the
    # source does not say which torch runs it, so this is a note.
    return Hit(node, f"`{excerpt(node)}` checks the probabilities on the host before sampling on torch < 2.5 "
               "(no replacement or one sample): each check's result is read back from the device", Confidence.LOW)


@register("normal-tensor-std", ast.Call, call_names=("normal",))
def detect_normal_tensor_std(node: ast.AST, context: Context, rule: Rule, argument: str | None) -> Hit | None:
    """``torch.normal(mean, std)`` with a tensor ``std`` checks ``std >= 0`` on the host."""
    assert isinstance(node, ast.Call)
    if context.classifier.torch_function_name(node.func) != "normal":
        return None
    std = keyword(node, "std") or (node.args[1] if len(node.args) > 1 else None)
    if std is None:
        return None
    where = context.where(std)
    if not where.is_tensor:
        return None
    confidence = read_confidence(where)
    if confidence is None:
        return None
    return Hit(node, f"`{excerpt(node)}` has a tensor `std`: `std >= 0` is checked on the host, which reads "
               "it back from the device", confidence)


def _linalg_confidence(node: ast.Call, context: Context, argument: str | None) -> Confidence | None:
    if context.classifier.torch_function_name(node.func) != argument:
        return None  # the catalogue names each checked function by its torch path (`linalg.inv`, `inverse`)
    data = node.args[0] if node.args else keyword(node, "A") or keyword(node, "input")
    return read_confidence(context.where(data), unknown=Confidence.MEDIUM)


def _linalg_hit(node: ast.Call, confidence: Confidence | None) -> Hit | None:
    if confidence is None:
        return None
    return Hit(node, f"`{excerpt(node)}` checks its result for errors on the host: the error flag is read back "
               "from the device after the factorization", confidence)


@register("linalg-checked", ast.Call, takes_argument=True)
def detect_linalg_checked(node: ast.AST, context: Context, rule: Rule, argument: str | None) -> Hit | None:
    """``torch.linalg.inv(a)`` and its kin (the catalogue's list) raise on bad input, so they read their error
    flag on the host."""
    assert isinstance(node, ast.Call)
    return _linalg_hit(node, _linalg_confidence(node, context, argument))


@register("linalg-checked-if-asked", ast.Call, takes_argument=True)
def detect_linalg_checked_if_asked(node: ast.AST, context: Context, rule: Rule, argument: str | None) -> Hit | None:
    """An ``_ex`` variant checks (and reads its ``info``) only with ``check_errors=True``."""
    assert isinstance(node, ast.Call)
    if not is_true(keyword(node, "check_errors")):
        return None
    return _linalg_hit(node, _linalg_confidence(node, context, argument))
