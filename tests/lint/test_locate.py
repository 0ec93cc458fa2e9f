"""`locate`: exact lines for trace findings that point at a function's first line."""

from __future__ import annotations

from pathlib import Path

from synchunt.lint import Located, locate

REPO_ROOT = Path(__file__).resolve().parents[2]
TRANSLATE = REPO_ROOT / "workloads" / "hicache_dcp" / "translate.py"

SOURCE = '''import functools
import torch


def reads(lens: torch.Tensor, mask):
    total = lens.sum().item()
    kept = lens[mask]
    return total, kept


@functools.lru_cache
def cached(lens: torch.Tensor):
    return lens.tolist()


def two_items(a: torch.Tensor, b: torch.Tensor):
    first = a.item()
    return first + b.item()


def strongest(a: torch.Tensor, b_cpu):
    first = torch.ones(3, device="cuda").sum().item()
    second = b_cpu.item()
    return first, second


def nested(a: torch.Tensor):
    helper = lambda: a.item()  # noqa: E731
    def inner():
        return a.item()
    return helper, inner, a.tolist()


def suppressed(a: torch.Tensor):
    return a.item()  # synchunt: ignore[SH109] -- a trace saw it anyway
'''


def line_of(text: str, source: str = SOURCE) -> int:
    return next(number for number, line in enumerate(source.splitlines(), start=1) if text in line)


def test_hicache_mask_line_for_sh101():
    source = TRANSLATE.read_text()
    def_line = line_of("def dcp_kernel_indices_masked", source)
    located = locate(source, str(TRANSLATE), def_line, "dcp_kernel_indices_masked", ["SH101"])
    assert located == Located((line_of("local = indices[indices % dcp_size == dcp_rank]", source),), "exact")


def test_hicache_fix_has_no_line_to_point_at():
    source = TRANSLATE.read_text()
    def_line = line_of("def dcp_kernel_indices_sliced", source)
    assert locate(source, "translate.py", def_line, "dcp_kernel_indices_sliced", ["SH101"]) == Located(
        (def_line,), "def")


def test_one_line_per_rule_and_several_rules():
    def_line = line_of("def reads")
    assert locate(SOURCE, "m.py", def_line, "reads", ["SH109"]).lines == (line_of("total = "),)
    assert locate(SOURCE, "m.py", def_line, "reads", ["SH101", "SH109"]) == Located(
        (line_of("total = "), line_of("kept = ")), "exact")


def test_decorated_function_found_by_its_first_decorator_line():
    assert locate(SOURCE, "m.py", line_of("@functools.lru_cache"), "cached", ["SH201"]) == Located(
        (line_of("return lens.tolist()"),), "exact")
    assert locate(SOURCE, "m.py", line_of("def cached"), "Module.cached", ["SH201"]).line_source == "exact"


def test_ambiguous_lines_fall_back_to_the_def_line():
    def_line = line_of("def two_items")
    assert locate(SOURCE, "m.py", def_line, "two_items", ["SH109"]) == Located((def_line,), "def")
    one_line = "import torch\ndef f(a: torch.Tensor, b: torch.Tensor):\n    return a.item() + b.item()\n"
    assert locate(one_line, "m.py", 2, "f", ["SH109"]) == Located((3,), "exact")  # one line, however many reads


def test_the_strongest_candidate_is_not_ambiguous():
    located = locate(SOURCE, "m.py", line_of("def strongest"), "strongest", ["SH109"])
    assert located == Located((line_of("first = torch.ones"),), "exact")


def test_nested_functions_and_lambdas_are_frames_of_their_own():
    def_line = line_of("def nested")
    assert locate(SOURCE, "m.py", def_line, "nested", ["SH109"]) == Located((def_line,), "def")
    assert locate(SOURCE, "m.py", def_line, "nested", ["SH201"]).lines == (line_of("return helper, inner"),)
    inner = locate(SOURCE, "m.py", line_of("def inner"), "inner", ["SH109"])
    assert inner.lines == (line_of("        return a.item()"),)


def test_suppressions_do_not_hide_what_a_trace_saw():
    located = locate(SOURCE, "m.py", line_of("def suppressed"), "suppressed", ["SH109"])
    assert located.lines == (line_of("# synchunt: ignore[SH109]"),) and located.line_source == "exact"


def test_fallbacks():
    def_line = line_of("def reads")
    fallback = Located((def_line,), "def")
    assert locate("def (:\n", "bad.py", 1, "f", ["SH109"]) == Located((1,), "def")
    assert locate(SOURCE, "m.py", def_line + 1, "reads", ["SH109"]) == Located((def_line + 1,), "def")
    assert locate(SOURCE, "m.py", def_line, "other", ["SH109"]) == fallback
    assert locate(SOURCE, "m.py", def_line, "reads", ["SH203"]) == fallback  # no static form
    assert locate(SOURCE, "m.py", def_line, "reads", []) == fallback
    deep = "def f(x):\n    return " + "-" * 20_000 + "x\n"
    assert locate(deep, "deep.py", 1, "f", ["SH109"]) == Located((1,), "def")
