"""Boolean masks: a modulo or range mask that is a slice, a masked read that only feeds a reduction, a masked
write that stays dense."""

from __future__ import annotations

import ast

from synchunt.fixes.model import CheckSpec, Feed
from synchunt.fixes.patterns import Site, pattern
from synchunt.fixes.patterns.common import expression_check, follows, mask_feeds, operand, path_feed, plain_value
from synchunt.fixes.source import dotted, is_pure, same

_FLIP = {ast.Lt: ast.Gt, ast.LtE: ast.GtE, ast.Gt: ast.Lt, ast.GtE: ast.LtE}


@pattern("modulo-mask-slice", "a strided slice `x[r::n]` instead of the mask `x[x % n == r]`", ast.Subscript)
def modulo_mask(site: Site) -> object:
    """`x[x % n == r]` (or `r == x % n`), `x` a name or attribute, `n` and `r` names or numbers. Equivalent when
    `x` is made of whole runs of `n` consecutive values, each run starting at a multiple of `n` (sorted contiguous
    pages, in any page order), and 0 ≤ `r` < `n`: the kept positions are then every `n`-th from `r`."""
    node, module = site.node, site.module
    if not isinstance(node, ast.Subscript) or not isinstance(node.ctx, ast.Load) or dotted(node.value) is None:
        return None
    test = node.slice
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)):
        return None
    pairs = ((test.left, test.comparators[0]), (test.comparators[0], test.left))
    sides = [(modulo, residue) for modulo, residue in pairs
             if isinstance(modulo, ast.BinOp) and isinstance(modulo.op, ast.Mod) and same(modulo.left, node.value)]
    if not sides:
        return None
    modulo, residue = sides[0]
    size = modulo.right  # type: ignore[attr-defined]
    if not (is_pure(size) and is_pure(residue)):
        return None
    x, n, r = module.segment(node.value), module.segment(size), module.segment(residue)
    start = "" if isinstance(residue, ast.Constant) and residue.value == 0 else r
    replacement = f"{x}[{start}::{n}]"
    condition = (f"`{x}` is whole runs of `{n}` consecutive values, each starting at a multiple of `{n}` (sorted "
                 f"contiguous pages), and 0 ≤ `{r}` < `{n}`")
    check = None
    if plain_value(size) and plain_value(residue):
        feeds = [*path_feed(size, Feed("modulus")), *path_feed(residue, Feed("residue", like=n)),
                 (dotted(node.value) or x, Feed("aligned_runs", like=n))]
        check = expression_check(module, module.segment(node), replacement, feeds,
                                 inputs="aligned runs of n values, pages shuffled or sorted")
    return site.proposal("modulo-mask-slice", node, replacement, condition=condition, check=check)


@pattern("range-mask-slice", "a slice `y[lo:hi]` instead of the range mask `y[(p >= lo) & (p < hi)]`",
         ast.Subscript)
def range_mask(site: Site) -> object:
    """`y[(p >= lo) & (p < hi)]` with any mix of `>`/`>=`, `<`/`<=` and operand order, `p` and `y` names or
    attributes. Equivalent when `p` holds the positions of `y` (`p[j] == j`, e.g. `torch.arange(len(y))`) and
    the bounds are non-negative Python ints."""
    node, module = site.node, site.module
    if not isinstance(node, ast.Subscript) or not isinstance(node.ctx, ast.Load) or dotted(node.value) is None:
        return None
    bounds = _range_bounds(node.slice)
    if bounds is None:
        return None
    positions, (lower, low_strict), (upper, high_inclusive) = bounds
    if dotted(positions) is None or not (is_pure(lower) and is_pure(upper)):
        return None
    lo = operand(module, lower) + (" + 1" if low_strict else "")
    hi = operand(module, upper) + (" + 1" if high_inclusive else "")
    y, p = module.segment(node.value), module.segment(positions)
    replacement = f"{y}[{lo}:{hi}]"
    held = f"`{p}` holds 0, 1, …, len − 1" if same(positions, node.value) else (
        f"`{p}` holds the positions of `{y}` (`{p}[j] == j`)")
    condition = f"{held}, and the bounds are non-negative Python ints"
    check = None
    if plain_value(lower) and plain_value(upper):
        feeds = []
        if not same(positions, node.value):
            feeds.append((dotted(node.value) or y, Feed("tensor")))
        feeds.append((dotted(positions) or p, Feed("positions", like=None if same(positions, node.value) else y)))
        feeds += [*path_feed(lower, Feed("bound", like=p)), *path_feed(upper, Feed("bound", like=p))]
        check = expression_check(module, module.segment(node), replacement, feeds,
                                 inputs="positions 0…len−1 and bounds inside and past them")
    return site.proposal("range-mask-slice", node, replacement, condition=condition, check=check)


def _range_bounds(mask: ast.AST) -> tuple[ast.expr, tuple[ast.expr, bool], tuple[ast.expr, bool]] | None:
    """``(p, (lower, strict), (upper, inclusive))`` for a two-sided range mask on ``p``."""
    if isinstance(mask, ast.BinOp) and isinstance(mask.op, ast.BitAnd):
        parts = [mask.left, mask.right]
    elif (isinstance(mask, ast.Call) and isinstance(mask.func, ast.Attribute) and mask.func.attr == "logical_and"
          and len(mask.args) == 2 and not mask.keywords):
        parts = list(mask.args)
    else:
        return None
    oriented = []
    for part in parts:
        if not (isinstance(part, ast.Compare) and len(part.ops) == 1 and type(part.ops[0]) in _FLIP):
            return None
        subject, kind, bound = part.left, type(part.ops[0]), part.comparators[0]
        oriented.append((subject, kind, bound))
    first, second = oriented
    for flip_first in (False, True):
        for flip_second in (False, True):
            subject_1, kind_1, bound_1 = _flip(first) if flip_first else first
            subject_2, kind_2, bound_2 = _flip(second) if flip_second else second
            if dotted(subject_1) is None or not same(subject_1, subject_2):
                continue
            lower = [(bound, kind is ast.Gt) for kind, bound in ((kind_1, bound_1), (kind_2, bound_2))
                     if kind in (ast.Gt, ast.GtE)]
            upper = [(bound, kind is ast.LtE) for kind, bound in ((kind_1, bound_1), (kind_2, bound_2))
                     if kind in (ast.Lt, ast.LtE)]
            if len(lower) == 1 and len(upper) == 1:
                return subject_1, lower[0], upper[0]
    return None


def _flip(part: tuple[ast.expr, type, ast.expr]) -> tuple[ast.expr, type, ast.expr]:
    subject, kind, bound = part
    return bound, _FLIP[kind], subject


_REDUCTIONS = {"sum": "0", "prod": "1", "any": "False", "all": "True", "count_nonzero": "0"}


@pattern("masked-reduction", "a dense masked reduction `torch.where(m, x, 0).sum()` instead of `x[m].sum()`",
         ast.Subscript)
def masked_reduction(site: Site) -> object:
    """`x[m].sum()` (also `.prod()`, `.any()`, `.all()`, `.count_nonzero()`, `.mean()`, `.numel()`) with no
    arguments: the selection only feeds a reduction, so fill the unselected elements with the reduction's
    identity instead of gathering. Equivalent when `m` has `x`'s shape (always, when `m` is computed elementwise
    from `x` and constants); float sums can differ in the last bits (the additions are ordered differently)."""
    node, module, torch = site.node, site.module, site.torch
    if torch is None or not isinstance(node, ast.Subscript) or not isinstance(node.ctx, ast.Load):
        return None
    attribute, call = module.parent(node), None
    if isinstance(attribute, ast.Attribute) and attribute.value is node:
        call = module.parent(attribute)
    if not (isinstance(call, ast.Call) and call.func is attribute and not call.args and not call.keywords):
        return None
    name = attribute.attr  # type: ignore[union-attr]
    if name not in (*_REDUCTIONS, "mean", "numel") or not (is_pure(node.value) and _mask_like(node.slice)):
        return None
    x, m = operand(module, node.value), module.segment(node.slice)
    if name == "numel":
        replacement, compare = f"{operand(module, node.slice)}.sum()", "number"
    elif name == "mean":
        replacement, compare = f"{torch}.where({m}, {x}, 0).sum() / {operand(module, node.slice)}.sum()", "close"
    else:
        replacement = f"{torch}.where({m}, {x}, {_REDUCTIONS[name]}).{name}()"
        compare = "close" if name in ("sum", "prod") else "exact"
    conditions = [] if follows(node.slice, node.value, torch) else [f"`{m}` has `{module.segment(node.value)}`'s shape"]
    if name in ("sum", "prod", "mean"):
        conditions.append("a float result may differ in its last bits (the same values, added in another order)")
    if name == "mean":
        conditions.append(f"`{module.segment(node.value)}` is floating-point")
    if name == "numel":
        conditions.append("the count stays a 0-dim device tensor")
    feeds = [*path_feed(node.value, Feed("tensor", dtype="float" if name == "mean" else None)),
             *mask_feeds(node.slice, module.segment(node.value))]
    check = expression_check(module, module.segment(call), replacement, feeds, compare=compare,  # type: ignore[arg-type]
                             inputs="random tensors and masks of their shape, empty ones included")
    return site.proposal("masked-reduction", call, replacement,  # type: ignore[arg-type]
                         condition="; ".join(conditions) or None, check=check)


@pattern("mask-assign-where", "a dense `torch.where(m, v, x)` instead of the masked write `x[m] = v`",
         ast.Assign, ast.Subscript)
def mask_assign(site: Site) -> object:
    """`x[m] = v` where `v` is one value for every selected position (a 0-dim tensor, a row that broadcasts) or
    an elementwise function of selections `z[m]` by the same mask (`f(z[m])` becomes `f(z)`). A name `x` is
    rebound (`x = torch.where(m, v, x)`); an attribute or element is written in place (`.copy_`)."""
    node, module, torch = site.node, site.module, site.torch
    if isinstance(node, ast.Subscript):  # the write's target, or a selection `z[m]` in its value
        statement = module.statement(node)
        if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1
                and isinstance(statement.targets[0], ast.Subscript)
                and (statement.targets[0] is node or same(statement.targets[0].slice, node.slice))):
            return None
        node = statement  # type: ignore[assignment]
    if torch is None or not isinstance(node, ast.Assign) or len(node.targets) != 1:
        return None
    target = node.targets[0]
    if not isinstance(target, ast.Subscript) or dotted(target.value) is None or not _mask_like(target.slice):
        return None
    x, m, value = module.segment(target.value), module.segment(target.slice), node.value
    selections = [item for item in ast.walk(value)
                  if isinstance(item, ast.Subscript) and same(item.slice, target.slice)]
    dense = _drop_selections(module, value, selections)
    where = f"{torch}.where({m}, {dense}, {x})"
    replacement = f"{x} = {where}" if isinstance(target.value, ast.Name) else f"{x}.copy_({where})"
    conditions = [] if follows(target.slice, target.value, torch) else [f"`{m}` has `{x}`'s shape"]
    if selections:
        functions = sorted({module.segment(item.func) for item in ast.walk(value) if isinstance(item, ast.Call)})
        if functions:
            conditions.append(", ".join(f"`{name}`" for name in functions) + " elementwise")
        conditions.append(", ".join(f"`{module.segment(item.value)}`" for item in selections) + f" of `{x}`'s shape")
    else:
        conditions.append(f"`{module.segment(value)}` is one value for every selected position (it broadcasts)")
    if isinstance(target.value, ast.Name):
        conditions.append(f"no other name holds `{x}` (it is rebound, not written in place)")
    feeds = [(dotted(target.value) or x, Feed("tensor", dtype="float")), *mask_feeds(target.slice, x)]
    for item in selections:
        feeds += path_feed(item.value, Feed("tensor", like=x, dtype="float"))
    for item in ast.walk(value):
        if isinstance(item, ast.Call):
            feeds += path_feed(item.func, Feed("elementwise"))
    if not selections:
        feeds += path_feed(value, Feed("scalar_tensor", dtype="float"))
    check = CheckSpec(original=f"{module.segment(node)}\nresult = {x}", rewritten=f"{replacement}\nresult = {x}",
                      feeds=tuple(feeds), compare="close", torch_name=torch,
                      inputs="random tensors, masks of their shape and elementwise functions")
    return site.proposal("mask-assign-where", node, replacement, condition="; ".join(conditions), check=check)


def _mask_like(index: ast.AST) -> bool:
    """One index expression that can be a mask: not a tuple of indices, a slice or a constant, and nothing
    that acts when evaluated (an assignment expression, an await, a lambda)."""
    if isinstance(index, ast.Tuple | ast.Slice | ast.Constant | ast.Starred):
        return False
    return not any(isinstance(item, ast.NamedExpr | ast.Await | ast.Yield | ast.YieldFrom | ast.Lambda)
                   for item in ast.walk(index))


def _drop_selections(module, value: ast.expr, selections: list[ast.Subscript]) -> str:  # type: ignore[no-untyped-def]
    """``value``'s text with every ``z[m]`` written as ``z`` (the user's line breaks kept)."""
    text = module.segment(value)
    if not selections:
        return text
    base_line, base_column = module.span(value)[:2]
    lines = text.split("\n")
    edits = []
    for item in selections:
        line, column, end_line, end_column = module.span(item)
        edits.append((line - base_line, column - (base_column if line == base_line else 1),
                      end_line - base_line, end_column - (base_column if end_line == base_line else 1),
                      module.segment(item.value)))
    for line, column, end_line, end_column, replacement in sorted(edits, reverse=True):
        head = lines[line][:column]
        tail = lines[end_line][end_column:]
        lines[line:end_line + 1] = (head + replacement + tail).split("\n")
    return "\n".join(lines)
