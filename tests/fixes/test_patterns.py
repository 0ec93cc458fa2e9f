"""Every fix pattern on a real snippet: the rewrite written with the snippet's own names, its condition, and its
check — equal results on generated inputs that satisfy the condition, no sync under the runtime guard — and a
negative case where the condition does not hold: the rewrite is labelled conditional and the check, fed inputs
that break the condition, finds the difference."""

from __future__ import annotations

import dataclasses

import pytest

from synchunt.fixes import propose, tailor
from synchunt.fixes.model import Feed
from synchunt.fixes.source import Module

torch = pytest.importorskip("torch")
from synchunt.fixes.check import run_check  # noqa: E402  (after the skip: it runs torch)


def _line(source: str, needle: str) -> int:
    return next(number for number, text in enumerate(source.splitlines(), 1) if needle in text)


def tailored(rule: str, source: str, needle: str, *, column_of: str | None = None):  # type: ignore[no-untyped-def]
    """The checked rewrite at the line holding ``needle`` (at ``column_of``'s column when given)."""
    line = _line(source, needle)
    column = source.splitlines()[line - 1].index(column_of) + 1 if column_of else None
    rewrite = tailor(rule, source, line, column=column, check=True)
    assert rewrite is not None, f"no rewrite for {needle!r}"
    return rewrite


def proposal(rule: str, source: str, needle: str, *, column_of: str | None = None):  # type: ignore[no-untyped-def]
    line = _line(source, needle)
    column = source.splitlines()[line - 1].index(column_of) + 1 if column_of else None
    found = propose(rule, Module.parse(source), line, column)
    assert found is not None and found.check is not None
    return found


def assert_checked(rewrite, allowed_syncs: int = 0) -> None:  # type: ignore[no-untyped-def]
    assert rewrite.checked, rewrite.check
    assert "equal on" in rewrite.check
    assert ("made no sync" in rewrite.check) if not allowed_syncs else ("at most 1 sync" in rewrite.check)


def broken(found, **feeds: Feed) -> str:  # type: ignore[no-untyped-def]
    """The check's status when some inputs are fed so that the condition does not hold."""
    spec = dataclasses.replace(found.check, feeds=tuple({**dict(found.check.feeds), **feeds}.items()))
    return run_check(spec).status


HEADER = "import torch\n\n"


def test_modulo_mask_becomes_the_seed_slice() -> None:
    source = HEADER + ("def dcp_kernel_indices(self, indices):\n"
                       "    return indices[indices % self.dcp_size == self.dcp_rank] // self.dcp_size\n")
    rewrite = tailored("SH101", source, "indices[indices %")
    assert rewrite.replacement == "indices[self.dcp_rank::self.dcp_size]"
    assert rewrite.original == "indices[indices % self.dcp_size == self.dcp_rank]"
    assert rewrite.safety == "conditional" and "consecutive values" in rewrite.condition
    assert_checked(rewrite)
    found = proposal("SH101", source, "indices[indices %")
    assert broken(found, indices=Feed("tensor", dtype="int", ndim=1, min_size=4)) == "failed"  # unsorted, gaps


def test_range_mask_becomes_a_slice() -> None:
    source = HEADER + "def window(tokens, pos, start, end):\n    return tokens[(start <= pos) & (pos <= end)]\n"
    rewrite = tailored("SH101", source, "tokens[")
    assert rewrite.replacement == "tokens[start:end + 1]"
    assert "positions of `tokens`" in rewrite.condition
    assert_checked(rewrite)
    found = proposal("SH101", source, "tokens[")
    assert broken(found, pos=Feed("tensor", dtype="int", ndim=1, min_size=4)) == "failed"  # not positions


def test_masked_read_feeding_a_sum_becomes_dense() -> None:
    source = HEADER + "def total(x, keep):\n    return x[keep].sum()\n"
    rewrite = tailored("SH101", source, "x[keep]")
    assert rewrite.replacement == "torch.where(keep, x, 0).sum()"
    assert "`keep` has `x`'s shape" in rewrite.condition
    assert_checked(rewrite)
    found = proposal("SH101", source, "x[keep]")
    assert broken(found, x=Feed("tensor", dtype="float", ndim=2), keep=Feed("mask")) == "failed"  # a row mask


def test_elementwise_mask_needs_no_shape_condition() -> None:
    source = HEADER + "def positives(x):\n    return x[x > 0].any()\n"
    rewrite = tailored("SH101", source, "x[x > 0]")
    assert rewrite.replacement == "torch.where(x > 0, x, False).any()"
    assert rewrite.condition is None and rewrite.safety == "safe"
    assert_checked(rewrite)


def test_masked_write_becomes_where_with_the_selection_dropped() -> None:
    source = HEADER + ("def loss(per_token_loss, mask, coef_1, sapo_loss_fn, temperature):\n"
                       "    per_token_loss[mask] = sapo_loss_fn(\n        coef_1[mask], temperature\n    )\n")
    rewrite = tailored("SH102", source, "per_token_loss[mask] =")
    assert rewrite.replacement == ("per_token_loss = torch.where(mask, sapo_loss_fn(\n        coef_1, temperature\n"
                                   "    ), per_token_loss)")
    assert "`sapo_loss_fn` elementwise" in rewrite.condition
    assert_checked(rewrite)
    found = proposal("SH102", source, "per_token_loss[mask] =")
    assert broken(found, sapo_loss_fn=Feed("cumulative")) == "failed"  # not elementwise


def test_masked_write_of_an_attribute_stays_in_place() -> None:
    source = HEADER + "def pad(self, mask, pad_token):\n    self.feats[mask] = pad_token\n"
    rewrite = tailored("SH102", source, "self.feats[mask]")
    assert rewrite.replacement == "self.feats.copy_(torch.where(mask, pad_token, self.feats))"
    assert_checked(rewrite)


def test_indexed_item_in_a_loop_is_read_once_before_it() -> None:
    source = HEADER + ("def starts(region_starts, n):\n    out = []\n    for i in range(n):\n"
                       "        out.append(int(region_starts[i].item()))\n    return out\n")
    rewrite = tailored("SH109", source, "region_starts[i]", column_of="region_starts[i]")
    assert rewrite.replacement == "region_starts_list[i]"
    assert rewrite.edits[0].text == "    region_starts_list = region_starts.tolist()\n"
    assert_checked(rewrite, allowed_syncs=1)
    found = proposal("SH109", source, "region_starts[i]", column_of="region_starts[i]")
    assert broken(found, region_starts=Feed("column")) == "failed"  # 2-D: one element per row, but lists


def test_appended_reads_are_batched_after_the_loop() -> None:
    source = HEADER + ("def losses(batches, model):\n    values = []\n    for batch in batches:\n"
                       "        loss = model(batch)\n        values.append(loss.item())\n    return values\n")
    rewrite = tailored("SH109", source, "values.append")
    assert rewrite.replacement == "loss"
    assert rewrite.edits[-1].text == "    values = torch.stack(values).tolist() if values else []\n"
    assert_checked(rewrite, allowed_syncs=1)
    found = proposal("SH109", source, "values.append")
    assert broken(found, loss_rows=Feed("vector_rows")) == "failed"  # not 0-dim


def test_loop_invariant_read_is_hoisted_under_its_keyword() -> None:
    source = HEADER + ("def denoise(model, latents, mask, steps):\n    for t in steps:\n"
                       "        latents = model(latents, t, txt_seq_lens=mask.sum(dim=1).tolist())\n"
                       "    return latents\n")
    rewrite = tailored("SH201", source, "txt_seq_lens=")
    assert rewrite.replacement == "txt_seq_lens"
    assert rewrite.edits[0].text == "    txt_seq_lens = mask.sum(dim=1).tolist()\n"
    assert_checked(rewrite, allowed_syncs=1)
    changing = source.replace("    for t in steps:\n", "    for t in steps:\n        mask = mask[1:]\n")
    assert tailor("SH201", changing, _line(changing, "txt_seq_lens=")) is None  # the loop changes `mask`


def test_item_kept_on_the_device() -> None:
    source = HEADER + ("def norm(total_norm_cuda, norm_type):\n"
                       "    total_norm = total_norm_cuda[0].item() ** (1. / norm_type)\n")
    rewrite = tailored("SH109", source, "total_norm =")
    assert rewrite.replacement == "total_norm_cuda[0]"
    assert "takes a 0-dim tensor" in rewrite.condition
    assert_checked(rewrite)


def test_a_returned_bool_stays_a_device_tensor() -> None:
    source = HEADER + "def finished(unfinished_sequences):\n    return bool(unfinished_sequences.max() == 0)\n"
    rewrite = tailored("SH110", source, "return bool")
    assert rewrite.replacement == "unfinished_sequences.max() == 0"
    assert "the caller takes a 0-dim tensor (a bool tensor)" in rewrite.condition
    assert_checked(rewrite)


def test_int_kept_on_the_device_needs_an_integer_tensor() -> None:
    source = HEADER + "def slack(x, offsets):\n    tail = x.shape[0] - int(offsets[-1])\n    return tail\n"
    rewrite = tailored("SH109", source, "int(offsets")
    assert rewrite.replacement == "offsets[-1]" and "integer tensor" in rewrite.condition
    assert_checked(rewrite)
    found = proposal("SH109", source, "int(offsets")
    assert broken(found, offsets=Feed("tensor", dtype="float", ndim=1, min_size=2)) == "failed"  # truncation


def test_a_kept_value_that_is_a_view_of_a_changing_buffer_is_copied() -> None:
    """`n = seq_lens[-1].item()` then `seq_lens.add_(1)`: the number read was a copy; `seq_lens[-1]` kept instead
    would be a view that the add changes. The rewrite keeps a copy of its own of anything that may share memory
    (a name, an index, a method that may return its input); a reduction or an operation is one already."""
    changed = HEADER + "def last(seq_lens):\n    n = seq_lens[-1].item()\n    seq_lens.add_(1)\n    return n\n"
    assert tailored("SH109", changed, "seq_lens[-1].item()").replacement == "seq_lens[-1].clone()"
    stored = HEADER + "def grow(t, i, out):\n    v = t[i].item()\n    t[i] = 0\n    out.append(v)\n"
    assert tailored("SH109", stored, "t[i].item()").replacement == "t[i].clone()"
    buffer = HEADER + "def head(self):\n    return self.lens[0].item()\n"
    assert tailored("SH109", buffer, "self.lens[0].item()").replacement == "self.lens[0].clone()"
    own = HEADER + "def total(lens):\n    t = lens.sum().item()\n    lens.add_(1)\n    return t\n"
    assert tailored("SH109", own, "lens.sum().item()").replacement == "lens.sum()"
    handed = HEADER + "def first(lens, out):\n    f = lens[0].item()\n    out.append(f * 2)\n"
    assert tailored("SH109", handed, "lens[0].item()").replacement == "lens[0].clone()"  # `out` keeps it
    alias = HEADER + "def last(seq_lens):\n    n = seq_lens.long()[-1].item()\n    return n\n"
    assert tailored("SH109", alias, ".item()").replacement == "seq_lens.long()[-1].clone()"  # .long() may alias
    arithmetic = HEADER + "def slack(x, offsets):\n    tail = x.shape[0] - int(offsets[-1])\n    return tail\n"
    assert tailored("SH109", arithmetic, "int(offsets").replacement == "offsets[-1]"  # a tensor of its own
    itself = HEADER + "def tick(count, out):\n    n = count.item()\n    count += 1\n    out.append(n)\n"
    assert tailored("SH109", itself, "count.item()").replacement == "count.clone()"  # `+=` on a tensor: in place


@pytest.mark.parametrize("use", ["if total > budget:\n        return 0", "while total > budget:\n        total -= 1",
                                 "print(total)", "return x[:total]", "return list(range(total))",
                                 "return f'{total} tokens'", "return int(total)", "return min(total, budget)",
                                 "ok = total > budget and budget > 0", "return '{}'.format(total)",
                                 "return '%d' % total", "return not total"])
def test_no_kept_value_where_the_code_reads_it_back_anyway(use: str) -> None:
    """`total` kept as a tensor but then branched on, looped on, printed or used as a bound: the read would only
    move there (the rewrite would remove nothing)."""
    source = HEADER + f"def pick(lens, x, budget):\n    total = lens.sum().item()\n    {use}\n"
    found = propose("SH109", Module.parse(source), _line(source, "lens.sum().item()"), None)
    assert found is None or found.pattern != "keep-on-device"


def test_raise_on_a_device_test_becomes_assert_async() -> None:
    source = HEADER + ("def check(seq_lens, max_len):\n    if (seq_lens > max_len).any():\n"
                       "        raise ValueError('too long')\n")
    rewrite = tailored("SH110", source, "if (seq_lens")
    assert rewrite.replacement == "torch._assert_async(torch.logical_not((seq_lens > max_len).any()), 'too long')"
    assert rewrite.safety == "conditional" and "`ValueError`" in rewrite.condition
    assert_checked(rewrite)
    with_else = source + "    else:\n        pass\n"
    assert tailor("SH110", with_else, _line(with_else, "if (seq_lens")) is None


def test_an_explicit_bool_is_dropped_from_the_check() -> None:
    source = HEADER + "def check(t):\n    if not bool((t > 0).all()):\n        raise RuntimeError('negative')\n"
    rewrite = tailored("SH110", source, "if not bool")
    assert rewrite.replacement == "torch._assert_async((t > 0).all(), 'negative')"
    assert_checked(rewrite)


def test_assert_on_a_tensor_becomes_assert_async() -> None:
    source = HEADER + "def check(x):\n    assert (x >= 0).all(), 'negative'\n"
    rewrite = tailored("SH110", source, "assert")
    assert rewrite.replacement == "torch._assert_async((x >= 0).all(), 'negative')"
    assert_checked(rewrite)


def test_branch_assignment_becomes_where() -> None:
    source = HEADER + ("def scale(clip, loss_scale):\n    combined = loss_scale\n    if clip > 1:\n"
                       "        combined = clip * loss_scale\n    return combined\n")
    rewrite = tailored("SH110", source, "if clip")
    assert rewrite.replacement == "combined = torch.where(clip > 1, clip * loss_scale, combined)"
    assert "have one shape" in rewrite.condition
    assert_checked(rewrite)
    found = proposal("SH110", source, "if clip")
    assert broken(found, combined=Feed("tensor", dtype="float", ndim=1, min_size=2)) == "failed"  # shapes differ


def test_repeat_interleave_gains_the_host_total() -> None:
    source = HEADER + ("def segments(ids, lens_list):\n    lens = torch.tensor(lens_list, device='cuda')\n"
                       "    return torch.repeat_interleave(ids, lens)\n")
    rewrite = tailored("SH106", source, "repeat_interleave")
    assert rewrite.replacement == "torch.repeat_interleave(ids, lens, output_size=sum(lens_list))"
    assert_checked(rewrite)
    counted = HEADER + ("def segments(bias, expert_ids):\n    counts = torch.bincount(expert_ids)\n"
                        "    return bias.repeat_interleave(counts, dim=0)\n")
    rewrite = tailored("SH106", counted, "repeat_interleave")
    assert rewrite.replacement == "bias.repeat_interleave(counts, dim=0, output_size=expert_ids.numel())"
    assert rewrite.safety == "safe"
    assert_checked(rewrite)
    found = proposal("SH106", source, "repeat_interleave")
    wrong = dataclasses.replace(found.check, rewritten=found.check.rewritten.replace("sum(lens_list)",
                                                                                     "sum(lens_list) + 1"))
    assert run_check(wrong).status == "failed"  # a total that is not the repeats' sum
    unknown = HEADER + "def segments(ids, lens):\n    return torch.repeat_interleave(ids, lens)\n"
    assert tailor("SH106", unknown, _line(unknown, "repeat_interleave")) is None


def test_nonzero_count_stays_on_the_device() -> None:
    source = HEADER + "def count(m):\n    return torch.nonzero(m).shape[0]\n"
    rewrite = tailored("SH103", source, "nonzero")
    assert rewrite.replacement == "torch.count_nonzero(m)" and rewrite.safety == "conditional"
    assert_checked(rewrite)
    found = proposal("SH103", source, "nonzero")
    assert run_check(dataclasses.replace(found.check, compare="exact")).status == "failed"  # int against tensor


def test_builtin_max_becomes_clamp_and_stack() -> None:
    source = HEADER + "def mean(loss, n):\n    return loss / max(1, n)\n"
    rewrite = tailored("SH109", source, "max(1, n)")
    assert rewrite.replacement == "n.clamp(min=1)"
    assert_checked(rewrite)
    found = proposal("SH109", source, "max(1, n)")
    assert broken(found, n=Feed("number", dtype="int")) == "failed"  # a Python int has no clamp
    norms = HEADER + "def norm(tensors):\n    return max(t.abs().max() for t in tensors)\n"
    rewrite = tailored("SH109", norms, "max(t")
    assert rewrite.replacement == "torch.stack([t.abs().max() for t in tensors]).max()"
    assert_checked(rewrite)
    reads = HEADER + "def eps(self):\n    return max(self.eps_end.item(), self.eps.item())\n"
    rewrite = tailored("SH109", reads, "max(", column_of="self.eps_end")
    assert rewrite.replacement == "torch.maximum(self.eps_end, self.eps)"


def test_constant_copied_to_the_device_becomes_a_fill() -> None:
    source = HEADER + "def buf(amaxes):\n    return torch.tensor([0], dtype=torch.int, device=amaxes[0].device)\n"
    rewrite = tailored("SH202", source, "torch.tensor")
    assert rewrite.replacement == "torch.zeros(1, dtype=torch.int, device=amaxes[0].device)"
    assert rewrite.safety == "safe" and rewrite.condition is None
    assert_checked(rewrite)
    moved = HEADER + "def total():\n    return torch.tensor(0, dtype=torch.int).cuda()\n"
    assert tailored("SH202", moved, "torch.tensor").replacement == 'torch.zeros((), dtype=torch.int, device="cuda")'
    inferred = HEADER + "def flags():\n    return torch.tensor([[True, True]], device='cuda')\n"
    assert tailored("SH202", inferred, "torch.tensor").replacement == (
        "torch.ones((1, 2), dtype=torch.bool, device='cuda')")
    mixed = HEADER + "def ids():\n    return torch.tensor([0, 1], device='cuda')\n"
    assert tailor("SH202", mixed, _line(mixed, "torch.tensor")) is None  # not one repeated constant


def test_where_with_a_copied_fill_becomes_masked_fill() -> None:
    source = HEADER + ("def topk(top_k, max_topk):\n"
                       "    return torch.where(top_k <= 0, top_k.new_tensor(max_topk), top_k)\n")
    rewrite = tailored("SH202", source, "torch.where")
    assert rewrite.replacement == "torch.masked_fill(top_k, top_k <= 0, max_topk)"
    assert rewrite.condition == "`max_topk` is a Python number"
    assert_checked(rewrite)
    found = proposal("SH202", source, "torch.where")
    assert broken(found, max_topk=Feed("tensor", dtype="int", ndim=1, min_size=3)) == "failed"


def test_tensor_of_device_scalars_becomes_stack() -> None:
    source = HEADER + "def scores(id2score, idx):\n    return torch.mean(torch.tensor(id2score[idx]))\n"
    rewrite = tailored("SH109", source, "torch.tensor")
    assert rewrite.replacement == "torch.stack(id2score[idx])"
    assert_checked(rewrite)
    found = proposal("SH109", source, "torch.tensor")
    assert broken(found, id2score=Feed("number_table")) == "failed"  # Python numbers, not 0-dim tensors


def test_read_back_of_a_host_list_becomes_the_list() -> None:
    source = HEADER + "def ids(values):\n    t = torch.tensor(values, device='cuda')\n    return t.tolist()\n"
    rewrite = tailored("SH201", source, "t.tolist()")
    assert rewrite.replacement == "list(values)"
    assert_checked(rewrite)
    found = proposal("SH201", source, "t.tolist()")
    assert broken(found, values=Feed("float_list")) == "failed"  # 0.1 is not exact in float32


def test_copy_stored_for_later_becomes_non_blocking() -> None:
    source = HEADER + "def keep(x):\n    y = x.cpu()\n    return y\n"
    rewrite = tailored("SH201", source, "x.cpu()")
    assert rewrite.replacement == 'x.to("cpu", non_blocking=True)'
    assert "only after an event" in rewrite.condition
    assert_checked(rewrite)
    read_at_once = HEADER + "def keep(x):\n    return x.cpu().numpy()\n"
    assert tailor("SH201", read_at_once, _line(read_at_once, "x.cpu()"), check=False) is None
    upload = HEADER + "def up(norm, other):\n    return combine(norm.to(other.device), other)\n"
    rewrite = tailored("SH202", upload, "norm.to")
    assert rewrite.replacement == "norm.to(other.device, non_blocking=True)" and "pinned" in rewrite.condition
