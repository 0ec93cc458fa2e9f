"""Facts read across the files linted together: keep_on_cpu fields declared in another module."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from synchunt.cli import app
from synchunt.findings import Confidence
from synchunt.lint import index_package, lint_files, lint_paths, lint_source

PROCESSOR = '''
class Processor:
    def _get_mm_fields_config(self, hf_inputs, hf_processor_mm_kwargs):
        return dict(
            pixel_values=MultiModalFieldConfig.batched("image"),
            image_num_pooled_patches=MultiModalFieldConfig.batched("image", keep_on_cpu=True),
            **{"image_token_id": MultiModalFieldConfig.shared("image", 1, keep_on_cpu=True)},
        )
'''

MODEL = '''
import torch


class Model(torch.nn.Module):
    def embed(self, **kwargs):
        counts = kwargs["image_num_pooled_patches"].tolist()
        token = kwargs.pop("image_token_id").item()
        pixels = kwargs["pixel_values"].tolist()
        return counts, token, pixels

    def split(self, x: torch.Tensor, image_num_pooled_patches: torch.Tensor):
        return x.split(image_num_pooled_patches.tolist())

    def moved(self, image_num_pooled_patches):
        on_device = image_num_pooled_patches.cuda()
        return on_device.tolist()

    def computed(self, mask: torch.Tensor):
        image_num_pooled_patches = mask.sum(-1)
        return image_num_pooled_patches.tolist()

    def configured(self, device):
        return torch.tensor(self.config.image_token_id, device=device)
'''


def _package(tmp_path: Path) -> tuple[Path, Path]:
    (tmp_path / "processor.py").write_text(PROCESSOR)
    (tmp_path / "model.py").write_text(MODEL)
    return tmp_path / "processor.py", tmp_path / "model.py"


def _lines(findings, code: str = "SH") -> set[int]:
    return {finding.line for finding in findings if finding.code.startswith(code) and finding.path.endswith("model.py")}


def test_alone_the_model_file_reads_its_fields_as_device_tensors(tmp_path):
    _, model = _package(tmp_path)
    assert {7, 8, 9, 13, 17} <= _lines(lint_paths([model], select=["SH1", "SH201"]))


def test_a_field_another_file_keeps_on_the_host_is_a_host_tensor(tmp_path):
    _package(tmp_path)
    lines = _lines(lint_paths([tmp_path], select=["SH1", "SH201"]))
    assert 7 not in lines and 8 not in lines and 13 not in lines  # subscript, `.pop(...)`, a parameter
    assert 9 in lines  # `pixel_values` is not declared kept on the host
    assert 17 in lines  # device evidence wins: `.cuda()` moved it
    assert 21 in lines  # a local value computed here under that name is that value, not the field
    uploads = lint_paths([tmp_path], select=["SH202"], min_confidence=Confidence.MEDIUM)
    assert 24 not in _lines(uploads, "SH202")  # `self.config.image_token_id`: a configuration's number


def test_the_files_given_one_by_one_or_together_are_what_counts(tmp_path):
    processor, model = _package(tmp_path)
    together = _lines(lint_paths([model, processor], select=["SH1", "SH201"]))
    assert together == _lines(lint_paths([processor, model], select=["SH1", "SH201"]))  # never the order
    assert 7 not in together


def test_index_reads_only_files_that_declare_and_survives_bad_ones():
    facts = index_package([("a.py", PROCESSOR), ("b.py", "def broken(:\n  keep_on_cpu=True"), ("c.py", MODEL)])
    assert facts.host_fields == {"image_num_pooled_patches", "image_token_id"}


def test_a_name_another_file_moves_to_the_device_is_no_evidence():
    other = ('fields = dict(image_token_id=MultiModalFieldConfig.shared("image", 1),\n'
             '              x=MultiModalFieldConfig.batched("a"))')
    facts = index_package([("a.py", PROCESSOR), ("other.py", other)])
    assert facts.host_fields == {"image_num_pooled_patches"}


def test_lint_source_takes_the_facts(tmp_path):
    facts = index_package([("processor.py", PROCESSOR)])
    assert 7 in _lines(lint_source(MODEL, "model.py", select=["SH201"]))
    assert 7 not in _lines(lint_source(MODEL, "model.py", select=["SH201"], package=facts))


def test_one_file_has_no_package_facts(tmp_path):
    _, model = _package(tmp_path)
    assert lint_files([model]).package is None
    assert lint_files([tmp_path]).package.host_fields == {"image_num_pooled_patches", "image_token_id"}


def test_the_command_line_uses_them_with_baseline_and_diff(tmp_path, monkeypatch):
    _package(tmp_path)
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    alone = runner.invoke(app, ["lint", "model.py", "--select", "SH201"])
    together = runner.invoke(app, ["lint", ".", "--select", "SH201"])
    assert "model.py:7:" in alone.output and "model.py:7:" not in together.output
    assert "model.py:9:" in together.output
    baseline = tmp_path / "baseline.json"
    assert runner.invoke(app, ["lint", ".", "--select", "SH201", "--write-baseline", str(baseline)]).exit_code == 0
    again = runner.invoke(app, ["lint", ".", "--select", "SH201", "--baseline", str(baseline)])
    assert again.exit_code == 0 and "model.py:9:" not in again.output


BATCH = '''
import numpy as np
import numpy.typing as npt
import torch


class InputBatch:
    """positions: np.ndarray of the batch's token positions (a docstring, not a declaration)"""

    num_scheduled_tokens: np.ndarray
    query_start_loc: "npt.NDArray[np.int32]"
    seq_lens: np.ndarray
    block_table: np.ndarray | torch.Tensor
    num_drafts: np.ndarray | None

    def __init__(self):
        self.positions: torch.Tensor = torch.zeros(8)
'''

RUNNER = '''
import torch


class Runner:
    seq_lens: torch.Tensor

    def step(self, input_batch, t: torch.Tensor):
        longest = input_batch.num_scheduled_tokens.max().item()
        offsets = input_batch.query_start_loc[1:].tolist()
        lens = input_batch.seq_lens.max().item()
        where = input_batch.positions.max().item()
        moved = input_batch.num_scheduled_tokens.cuda().tolist()
        return longest, offsets, lens, where, moved, t.item()
'''


def test_a_field_another_file_declares_a_numpy_array_is_a_host_value(tmp_path):
    """`num_scheduled_tokens: np.ndarray` in one file: `input_batch.num_scheduled_tokens.max().item()` in another
    reads host memory (low confidence, as for a name that says so). A name some file declares a tensor
    (`seq_lens: torch.Tensor`) is no evidence, and device evidence (`.cuda()`) still wins."""
    (tmp_path / "batch.py").write_text(BATCH)
    (tmp_path / "runner.py").write_text(RUNNER)
    facts = index_package([("batch.py", BATCH), ("runner.py", RUNNER)])
    assert facts.array_fields == {"num_scheduled_tokens", "query_start_loc", "num_drafts"}
    found = {finding.line: finding.confidence for finding in lint_paths([tmp_path], select=["SH109", "SH201"])}
    assert found[9] == found[10] == Confidence.LOW  # host memory by a name: as a `*_cpu` name would say
    # seq_lens (a tensor in runner.py), positions, the device copy, t
    assert {line for line, confidence in found.items() if confidence is not Confidence.LOW} == {11, 12, 13, 14}
    alone = {finding.line: finding.confidence for finding in lint_paths([tmp_path / "runner.py"],
                                                                      select=["SH109", "SH201"])}
    assert alone[9] == alone[10] == Confidence.MEDIUM
