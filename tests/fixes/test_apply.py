"""Applying rewrites to text and files: minimal edits, which rewrites go together, the second lint, and never
writing over a file that changed since it was read."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from synchunt.findings import Edit, Finding, Rewrite
from synchunt.fixes.apply import apply_edits, choose, fix_file
from synchunt.lint import lint_source


def rewrite(edits: tuple[Edit, ...], *, safety: str = "safe", checked: bool = True) -> Rewrite:
    first = edits[-1]
    return Rewrite(rule="SH101", pattern="modulo-mask-slice", title="t", line=first.line, column=first.column,
                   end_line=first.end_line, end_column=first.end_column, original="o", replacement=first.text,
                   edits=edits, condition=None if safety == "safe" else "sorted", safety=safety,  # type: ignore[arg-type]
                   checked=checked)


def test_edits_replace_spans_insert_lines_and_keep_line_endings() -> None:
    text = "a = 1\r\nfor i in x:\r\n    y = t[i].item()\r\n"
    edits = [Edit(2, 1, 2, 1, "t_list = t.tolist()\r\n"), Edit(3, 9, 3, 20, "t_list[i]"),
             Edit(2, 1, 2, 1, "t_list = t.tolist()\r\n")]  # the same insertion twice counts once
    assert apply_edits(text, edits) == "a = 1\r\nt_list = t.tolist()\r\nfor i in x:\r\n    y = t_list[i]\r\n"


def test_a_multi_line_rewrite_keeps_the_file_line_endings() -> None:
    from synchunt.fixes import tailor

    source = ("import torch\r\n\r\ndef loss(out, mask, coef, fn, t):\r\n    out[mask] = fn(\r\n"
              "        coef[mask], t\r\n    )\r\n    return out\r\n")
    found = tailor("SH102", source, 4)
    assert found is not None
    fixed = apply_edits(source, list(found.edits))
    assert fixed.count("\r\n") == source.count("\r\n") and "\n" not in fixed.replace("\r\n", "")
    assert "out = torch.where(mask, fn(\r\n        coef, t\r\n    ), out)" in fixed


def test_characters_not_bytes_set_the_columns() -> None:
    text = "s = 'é'; y = x.cpu()\n"
    assert apply_edits(text, [Edit(1, 14, 1, 21, "x")]) == "s = 'é'; y = x\n"


def test_choose_puts_safe_first_and_says_why_others_are_left() -> None:
    safe = Finding("SH202", "m", "f.py", 1, 1, fix=rewrite((Edit(1, 1, 1, 5, "b"),)))
    overlapping = Finding("SH101", "m", "f.py", 1, 3, fix=rewrite((Edit(1, 3, 1, 8, "c"),)))
    conditional = Finding("SH101", "m", "f.py", 2, 1, fix=rewrite((Edit(2, 1, 2, 4, "d"),), safety="conditional"))
    unchecked = Finding("SH101", "m", "f.py", 3, 1, fix=rewrite((Edit(3, 1, 3, 4, "e"),), checked=False))
    chosen, left = choose([overlapping, conditional, unchecked, safe], unsafe=False)
    assert chosen == [safe]
    reasons = {finding.line: why for finding, why in left}
    assert reasons[1] == "overlaps another fix" and "--unsafe-fixes" in reasons[2] and "suggestion" in reasons[3]
    chosen, _ = choose([conditional, unchecked, safe], unsafe=True)
    assert chosen == [safe, conditional]


SOURCE = "import torch\n\ndef buf():\n    return torch.tensor([0], dtype=torch.int, device='cuda')\n"
FIXED = "import torch\n\ndef buf():\n    return torch.zeros(1, dtype=torch.int, device='cuda')\n"


def relint(text: str, path: str) -> list[Finding]:
    return lint_source(text, path)


def test_fix_file_writes_the_checked_rewrite_and_confirms_it(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    path = tmp_path / "buf.py"
    path.write_text(SOURCE)
    os.chmod(path, 0o640)
    result = fix_file(str(path), relint)
    assert result.written and result.error is None
    assert path.read_text() == FIXED
    assert [finding.code for finding in result.fixed] == ["SH202"] and not result.remaining
    assert (path.stat().st_mode & 0o777) == 0o640
    assert "-    return torch.tensor([0]" in result.diff() and "+    return torch.zeros(1" in result.diff()


def test_a_preview_writes_nothing(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    path = tmp_path / "buf.py"
    path.write_text(SOURCE)
    result = fix_file(str(path), relint, write=False)
    assert result.after == FIXED and not result.written and path.read_text() == SOURCE


def test_a_file_changed_between_read_and_write_is_left_alone(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    path = tmp_path / "buf.py"
    path.write_text(SOURCE)
    edited_meanwhile = SOURCE + "# the user's edit\n"

    def relint_while_the_user_edits(text: str, name: str) -> list[Finding]:
        if text != SOURCE:  # the second lint, after the rewrite: the user saves the file now
            path.write_text(edited_meanwhile)
        return lint_source(text, name)

    result = fix_file(str(path), relint_while_the_user_edits)
    assert not result.written and "changed since it was read" in (result.error or "")
    assert path.read_text() == edited_meanwhile
    assert not [item for item in tmp_path.iterdir() if item.name.startswith(".buf.py.")]  # no temporary left


def test_a_rewrite_the_second_lint_still_flags_is_not_applied(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    path = tmp_path / "buf.py"
    path.write_text(SOURCE)

    def stubborn(text: str, name: str) -> list[Finding]:
        found = lint_source(text, name)
        if text != SOURCE:  # pretend the rewritten call is flagged too
            found.append(Finding("SH202", "still", name, 4, 12))
        return found

    result = fix_file(str(path), stubborn)
    assert not result.changed and path.read_text() == SOURCE
    assert any("still flags" in why for _, why in result.left)


def test_a_rewrite_that_would_drop_a_comment_is_left(tmp_path: Path) -> None:
    """`torch.tensor(\\n [0, 0],  # two slots\\n device=dev)` rewritten to one `torch.zeros(...)` would lose the
    comment: it is left, saying why; the same call on one line is fixed."""
    pytest.importorskip("torch")
    path = tmp_path / "slots.py"
    path.write_text("import torch\n\n\ndef slots(dev):\n    return torch.tensor(\n        [0, 0],  # two slots\n"
                    "        device=dev,\n    )\n\n\ndef other(dev):\n    return torch.tensor([0, 0], device=dev)\n")
    result = fix_file(str(path), relint, unsafe=True)
    assert "# two slots" in path.read_text()
    assert [(finding.line, why) for finding, why in result.left] == [
        (5, "it would drop a comment inside the code it replaces")]
    assert [finding.line for finding in result.fixed] == [12]
