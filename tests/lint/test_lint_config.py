"""Suppressions, rule selection, file discovery and parse problems."""

from __future__ import annotations

from pathlib import Path

import pytest

from synchunt.errors import UsageError
from synchunt.findings import Confidence
from synchunt.lint import PARSE_ERROR, lint_paths, lint_source, select_rules
from synchunt.lint.suppress import parse_comment

SOURCE = """import torch
def f(x: torch.Tensor):
    a = x.item()  # synchunt: ignore[SH109] -- read once per step, by design
    b = x.item()  # synchunt: ignore
    c = x.item()  # synchunt: ignore[SH2]: only copies
    d = x.item()  # synchunt: ignore[SH1]
    e = torch.unique(
        x
    )  # synchunt: ignore[SH105]
    text = "# synchunt: ignore"; g = x.item()
    return x.tolist()
"""


def test_suppressions_by_code_prefix_bare_and_multiline():
    findings = lint_source(SOURCE, "s.py")
    assert [(finding.code, finding.line) for finding in findings] == [("SH109", 5), ("SH109", 10),
                                                                     ("SH201", 11)]


def test_suppression_comment_parsing():
    parsed = parse_comment("# synchunt: ignore[SH101, sh2] -- CPU tensor", 3)
    assert parsed is not None
    assert parsed.codes == ("SH101", "SH2") and parsed.reason == "CPU tensor"
    assert parsed.covers("SH201") and not parsed.covers("SH109")
    bare = parse_comment("#synchunt: ignore: slow path", 1)
    assert bare is not None and bare.codes == () and bare.reason == "slow path" and bare.covers("SH303")
    assert parse_comment("# noqa: E501", 1) is None


def test_select_and_ignore_by_code_and_prefix():
    assert {rule.code for rule in select_rules(["SH3"])} == {"SH301", "SH302", "SH303"}
    assert "SH109" not in {rule.code for rule in select_rules(ignore=["SH109"])}
    assert {rule.code for rule in select_rules(["SH1"], ["SH10"])} == {"SH110", "SH111", "SH112", "SH113", "SH114"}
    # rules without a static form are never selected
    assert all(rule.lint_forms for rule in select_rules())
    with pytest.raises(UsageError, match="SH999"):
        select_rules(["SH999"])


def test_select_applies_to_findings():
    assert {finding.code for finding in lint_source(SOURCE, "s.py", select=["SH2"])} == {"SH201"}
    assert {finding.code for finding in lint_source(SOURCE, "s.py", ignore=["SH201"])} == {"SH109"}


def test_min_confidence_filters():
    source = "import torch\ndef f(x: torch.Tensor, y_cpu):\n    return x.item(), y_cpu.item()\n"
    assert len(lint_source(source, "c.py")) == 2
    kept = lint_source(source, "c.py", min_confidence=Confidence.MEDIUM)
    assert [finding.column for finding in kept] == [12]


def test_syntax_error_is_a_problem_not_a_traceback(tmp_path):
    (tmp_path / "good.py").write_text("import torch\ndef f(x: torch.Tensor):\n    return x.item()\n")
    (tmp_path / "broken.py").write_text("def (:\n")
    (tmp_path / "notes.txt").write_text("not python at all {")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "nul.py").write_bytes(b"x = 1\x00\n")
    (tmp_path / "sub" / "latin.py").write_bytes(b"s = '\xff'\n")
    findings = lint_paths([tmp_path, tmp_path / "notes.txt"])
    problems = sorted((finding.path.rsplit("/", 1)[-1], finding.code) for finding in findings if finding.is_problem)
    assert problems == [("broken.py", PARSE_ERROR), ("latin.py", PARSE_ERROR), ("notes.txt", PARSE_ERROR),
                        ("nul.py", PARSE_ERROR)]
    assert [finding.code for finding in findings if not finding.is_problem] == ["SH109"]


def test_a_file_that_cannot_be_linted_is_not_a_rule_anything_can_silence(tmp_path):
    """Its code names no rule: ``--ignore`` refuses it and an ``SH`` prefix in per-file-ignores does not hide it."""
    from synchunt.rules import RULES_BY_CODE

    assert PARSE_ERROR not in RULES_BY_CODE and not PARSE_ERROR.startswith("SH")
    with pytest.raises(UsageError):
        select_rules(ignore=[PARSE_ERROR])
    (tmp_path / "pyproject.toml").write_text('[tool.synchunt.lint.per-file-ignores]\n"broken.py" = ["SH"]\n')
    (tmp_path / "broken.py").write_text("def (:\n")
    assert [finding.code for finding in lint_paths([tmp_path])] == [PARSE_ERROR]


def test_devices_and_fifos_are_refused_unread(tmp_path):
    """``/dev/zero`` would never end and a FIFO would block: named, each is unusable input; met in a folder
    walk, it is not a source file and is passed over; nothing is read either way."""
    import os

    os.mkfifo(tmp_path / "pipe.py")
    os.symlink("/dev/zero", tmp_path / "zero.py")
    for path in (Path("/dev/zero"), Path("/dev/null"), tmp_path / "pipe.py", tmp_path / "zero.py"):
        with pytest.raises(UsageError, match="not a regular file"):
            lint_paths([path])
    (tmp_path / "good.py").write_text("x = 1\n")
    assert lint_paths([tmp_path]) == []


def test_missing_path_is_a_usage_error(tmp_path):
    with pytest.raises(UsageError, match="no such file"):
        lint_paths([tmp_path / "absent.py"])


def test_directories_skip_virtualenvs_and_hidden_folders(tmp_path):
    for folder in (".venv", ".git", "__pycache__", "pkg"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "m.py").write_text("import torch\ndef f(x: torch.Tensor):\n    return x.item()\n")
    assert [finding.path for finding in lint_paths([tmp_path])] == [str(tmp_path / "pkg" / "m.py")]


def test_non_ascii_columns_are_characters():
    source = "import torch\ndef f(x: torch.Tensor):\n    ü = 'é'; y = x.item()\n"
    (finding,) = lint_source(source, "u.py")
    assert finding.column == source.splitlines()[2].index("x.item") + 1


def test_name_patterns_match_as_fnmatch_does():
    import fnmatch
    import itertools

    from synchunt.config import name_matches

    pieces = ["", "a", "ab", "b", "*", "**", "?", "[ab]", "[!a]", "forward", "_", "."]
    patterns = {"".join(parts) for size in (1, 2, 3) for parts in itertools.product(pieces, repeat=size)}
    names = ["", "a", "b", "ab", "ba", "aab", "abab", "forward", "forward_step", "my_forward", "x.y", "a*b", "a?b",
             "[ab]", "_a_b_"]
    wrong = [(name, pattern) for pattern in sorted(patterns) for name in names
             if name_matches(name, pattern) != fnmatch.fnmatchcase(name, pattern)]
    assert not wrong, wrong[:10]


def test_only_a_source_that_holds_a_suppression_is_tokenized(monkeypatch):
    import tokenize

    from synchunt.lint import suppress

    tokenized = []
    real = tokenize.generate_tokens
    monkeypatch.setattr(tokenize, "generate_tokens", lambda readline: tokenized.append(1) or real(readline))
    assert suppress.find_suppressions("import synchunt\nx = synchunt.watch()  # synchunt watches\n") == {}
    assert not tokenized
    text = "s = '# synchunt: ignore'\nx.item()  # synchunt: ignore[SH109] -- once\n"
    assert suppress.find_suppressions(text) == {2: suppress.Suppression(2, ("SH109",), "once")}
    assert tokenized  # the string that looks like one is told from the comment by the tokenizer
