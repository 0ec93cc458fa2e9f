"""Tailored fixes on real sync fixes: how often the rewrite synchunt proposes is what the upstream author wrote,
and how often it is checked equivalent.

For each entry of the real-fix manifest (benchmarks/data/real_fixes.toml) the script reads the syncing file at
the parent commit from a git mirror, lints it, and tailors a rewrite for the finding on the syncing line (or, with
no finding there, for the line alone, as `synchunt analyze` does with a runtime line). Then:

- tailored: a pattern fits the line;
- equivalent: the rewrite was checked — the original and the rewrite gave equal results on generated inputs that
  satisfy its stated condition, and the rewrite made no sync under the runtime guard (needs torch);
- matches upstream: the user's statement with the rewrite applied is, up to names, a statement the upstream
  commit wrote at the fixed lines, or the replacement or the rewritten statement's value (when it calls or
  computes something: a bare name or `x[0]` matches too much) is an expression there. "Up to names": variables
  are renamed in order of appearance on both sides; attributes, keywords and constants are kept; keyword order
  and list-or-tuple literals do not matter.

Counts, not timings: the machine's load cannot change them, so the quiet-machine check does not apply to them.
``--lint-cost TREE`` instead times what tailoring adds to a plain `synchunt lint` of a source tree (the lint,
then the tailoring of its findings, interleaved over repeats; medians of thread time), and that timing asks the
quiet-machine check before it reports.

    python benchmarks/fix_rewrites.py [--mirrors DIR] [--no-check] [--verbose]
    python benchmarks/fix_rewrites.py --lint-cost TREE [--repeats 7]
"""

from __future__ import annotations

import argparse
import ast
import copy
import sys
from collections import defaultdict
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCHMARKS))
sys.path.insert(0, str(BENCHMARKS.parent))

from lint_real_fixes import default_mirrors, git_dir, load_manifest, show  # noqa: E402
from machine import Quietness, add_quiet_options  # noqa: E402


def normalized(node: ast.AST) -> str:
    """The node's dump with variables renamed in order of appearance, keywords sorted, lists as tuples."""
    names: dict[str, str] = {}

    class Rename(ast.NodeTransformer):
        def visit_Name(self, item: ast.Name) -> ast.AST:
            return ast.Name(names.setdefault(item.id, f"v{len(names)}"), ast.Load())

        def visit_List(self, item: ast.List) -> ast.AST:
            self.generic_visit(item)
            return ast.Tuple(item.elts, ast.Load())

        def visit_Call(self, item: ast.Call) -> ast.AST:
            self.generic_visit(item)
            item.keywords.sort(key=lambda keyword: keyword.arg or "")
            return item

    return ast.dump(Rename().visit(copy.deepcopy(node)), annotate_fields=False, include_attributes=False)


def statements_at(text: str, lines: list[int]) -> list[ast.AST]:
    """The innermost statement holding each line (a compound statement without its body: its header)."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return []
    found = []
    for line in lines:
        holding = [node for node in ast.walk(tree) if isinstance(node, ast.stmt)
                   and node.lineno <= line <= (node.end_lineno or node.lineno)]
        if not holding:
            continue
        inner = min(holding, key=lambda node: (node.end_lineno or node.lineno) - node.lineno)
        if hasattr(inner, "body"):
            inner = copy.copy(inner)
            for field in ("body", "orelse", "finalbody", "handlers"):
                if hasattr(inner, field):
                    setattr(inner, field, [ast.Pass()] if field == "body" else [])
        found.append(inner)
    return found


def expressions(nodes: list[ast.AST]) -> set[str]:
    return {normalized(item) for node in nodes for item in ast.walk(node) if isinstance(item, ast.expr)}


def matches_upstream(before: str, rewrite, after_upstream: str, fixed_lines: list[int]) -> bool:  # type: ignore[no-untyped-def]
    from synchunt.fixes.apply import apply_edits

    if not fixed_lines:
        return False
    upstream = statements_at(after_upstream, fixed_lines)
    rewritten_text = apply_edits(before, list(rewrite.edits))
    ours = statements_at(rewritten_text, [rewrite.line + _lines_inserted_before(rewrite)])
    if {normalized(node) for node in ours} & {normalized(node) for node in upstream}:
        return True
    try:
        replacement = ast.parse(" ".join(rewrite.replacement.split()), mode="eval").body
    except SyntaxError:
        replacement = None
    values = [node.value for node in ours if isinstance(getattr(node, "value", None), ast.expr)]
    candidates = [item for item in (replacement, *values) if item is not None and _computes(item)]
    return bool({normalized(item) for item in candidates} & expressions(upstream))


def _computes(node: ast.AST) -> bool:
    """A call or an operation: an expression specific enough that equal up to names means the same code
    (a bare name, attribute or `x[0]` matches too much once names are free)."""
    return any(isinstance(item, ast.Call | ast.BinOp | ast.UnaryOp | ast.Compare) for item in ast.walk(node))


def _lines_inserted_before(rewrite) -> int:  # type: ignore[no-untyped-def]
    return sum(edit.text.count("\n") for edit in rewrite.edits
               if (edit.line, edit.column) == (edit.end_line, edit.end_column) and edit.line <= rewrite.line)


def main(argv: list[str] | None = None) -> int:
    from synchunt.findings import Confidence
    from synchunt.fixes import propose
    from synchunt.fixes.check import run_check, torch_available
    from synchunt.fixes.source import Module
    from synchunt.lint import lint_source

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mirrors", type=Path, default=default_mirrors())
    parser.add_argument("--no-check", action="store_true", help="tailor only: do not import torch to check")
    parser.add_argument("--verbose", action="store_true", help="print every entry's rewrite and verdicts")
    parser.add_argument("--lint-cost", type=Path, metavar="TREE", help="time tailoring against the lint of TREE")
    parser.add_argument("--repeats", type=int, default=7)
    add_quiet_options(parser)
    args = parser.parse_args(argv)
    if args.lint_cost is not None:
        return lint_cost(args)
    fixes = load_manifest()
    repos = sorted({fix.repo for fix in fixes})
    missing = [repo for repo in repos if args.mirrors is None or not git_dir(args.mirrors, repo).is_dir()]
    if missing:
        print(f"mirrors absent for {len(missing)} of {len(repos)} repositories ({', '.join(missing)}): "
              "no figures. Pass --mirrors DIR or set SYNCHUNT_MIRRORS.")
        return 0
    check = not args.no_check and torch_available()
    rows: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0, 0])  # entries, tailored, equivalent, match, failed
    for fix in fixes:
        git = git_dir(args.mirrors, fix.repo)
        before, after = show(git, fix.parent, fix.file), show(git, fix.commit, fix.file)
        if before is None or after is None:
            print(f"error: {fix.repo}: cannot read {fix.file} at {fix.parent[:10]} or {fix.commit[:10]}")
            return 2
        module = Module.parse(before)
        proposal = None
        if module is not None:
            covering = [finding for finding in lint_source(before, fix.file, min_confidence=Confidence.LOW)
                        if finding.line <= fix.sync_line <= (finding.end_line or finding.line)
                        and (finding.code == fix.rule or fix.rule.endswith("x"))]
            for finding in covering:
                proposal = propose(finding.code, module, finding.line, finding.column)
                if proposal is not None:
                    break
            if proposal is None and not fix.rule.endswith("x"):
                proposal = propose(fix.rule, module, fix.sync_line)
        status = "none"
        if proposal is not None:
            status = run_check(proposal.check).status if check and proposal.check is not None else "unchecked"
        rewrite = proposal.rewrite() if proposal is not None else None
        matched = rewrite is not None and matches_upstream(before, rewrite, after, list(fix.fixed_lines))
        for key in (fix.rule, f"[{fix.split}]", "overall", *([f"<{proposal.pattern}>"] if proposal else [])):
            row = rows[key]
            row[0] += 1
            row[1] += proposal is not None
            row[2] += status == "passed"
            row[3] += matched
            row[4] += status == "failed"
        if args.verbose:
            what = f"{proposal.pattern}: {' '.join(proposal.replacement.split())[:90]}" if proposal else "-"
            print(f"  {fix.rule:5} {status:9} {'MATCH' if matched else '     '} {fix.repo.split('/')[1][:12]:12} "
                  f"{fix.file.split('/')[-1][:24]:24}:{fix.sync_line:<5} {what}")
    print(f"tailored fixes on {len(fixes)} real sync fixes from {len(repos)} repositories"
          + ("" if check else " (not checked: torch absent or --no-check)"))
    print(f"{'':32} {'entries':>8} {'tailored':>9} {'equivalent':>11} {'matches upstream':>17} {'check failed':>13}")
    order = {"<": 1, "[": 2}  # rules, then patterns (<name>), then splits ([name]), then all
    for key in sorted(rows, key=lambda name: (name == "overall", order.get(name[0], 0), name)):
        entries, tailored, equivalent, matched, failed = rows[key]
        print(f"{key:32} {entries:>8} {tailored:>9} {equivalent:>11} {matched:>17} {failed:>13}")
    return 0


def lint_cost(args: argparse.Namespace) -> int:
    """Median thread time of the lint of a tree and of tailoring its findings, and their ratio."""
    import statistics
    import time

    from synchunt.findings import Confidence
    from synchunt.fixes import tailor_findings
    from synchunt.lint import FileFilter, iter_python_files, lint_paths
    from synchunt.lint.files import read_source

    quiet = Quietness.before(args)
    files = list(iter_python_files([args.lint_cost], FileFilter((), (), args.lint_cost)))
    lint_s, tailor_s, ratios = [], [], []
    for _ in range(args.repeats):
        start = time.thread_time()
        findings = lint_paths(files, min_confidence=Confidence.MEDIUM)
        middle = time.thread_time()
        tailored = tailor_findings(findings, lambda path: read_source(Path(path)))
        end = time.thread_time()
        lint_s.append(middle - start)
        tailor_s.append(end - middle)
        ratios.append((end - middle) / (middle - start))
    quartiles = statistics.quantiles(ratios, n=4) if len(ratios) > 1 else [ratios[0]] * 3
    with_fix = sum(finding.fix is not None for finding in tailored)
    print(f"{len(files)} files, {len(findings)} findings in {len({f.path for f in findings})} files, "
          f"{with_fix} with a tailored rewrite")
    print(f"lint {statistics.median(lint_s):.2f} s, tailoring {statistics.median(tailor_s):.3f} s: "
          f"+{100 * statistics.median(ratios):.0f} % (IQR {100 * quartiles[0]:.0f}–{100 * quartiles[2]:.0f} %)")
    verdict = quiet.after()
    print(verdict.line)
    return verdict.exit_code


if __name__ == "__main__":
    raise SystemExit(main())
