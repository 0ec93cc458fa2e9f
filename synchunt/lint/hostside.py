"""Code that runs on the host side of a serving stack: multimodal processors, tokenizers, CPU backends.

Their tensors are host tensors unless the code says otherwise, so a finding there that only has "a tensor of
unknown device" as evidence drops to low confidence (device evidence, such as `.to(get_device())` of a host
tensor, still counts). Recognized by convention: a class whose name, or a base's, ends in ``ModalProcessor``,
``ImageProcessor``, ``VideoProcessor``, ``AudioProcessor``, ``FeatureExtractor`` or ``Tokenizer``, or derives
from ``ProcessorMixin``/``SGLangBaseProcessor`` (not a ``LogitsProcessor``: sampling runs on the device); a
module under a ``processors``/``processing`` folder or named ``processing_*``; CPU- and MLX-platform code: a module
under a ``cpu``/``mlx`` folder or named with such a part, a class or function named with one (``CPUModelRunner``,
``forward_cpu``). Also the host path of a device check: the branch of ``if not x.is_cuda:`` or
``x.device.type == "cpu"`` (the ``else`` of ``if x.is_cuda:``, the rest of a function after ``if x.is_cuda: return``,
the right side of ``not x.is_cuda and ...``), where the code is the host fallback.
"""

from __future__ import annotations

import ast
import re
from pathlib import PurePath

_CLASS_SUFFIXES = ("ModalProcessor", "ImageProcessor", "ImageProcessorFast", "VideoProcessor", "AudioProcessor",
                   "FeatureExtractor", "Tokenizer", "TokenizerFast", "ProcessingInfo", "ProcessorOutput",
                   "HostPool", "PoolHost", "HostMemoryPool")
_BASES = frozenset({"ProcessorMixin", "SGLangBaseProcessor"})
_FOLDERS = frozenset({"processors", "processing", "preprocessing", "cpu", "mlx"})
_PLATFORM_TOKENS = frozenset({"cpu", "mlx", "amx"})  # AMX: Intel's CPU matrix extension
_CAMEL = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")


def host_side_module(path: str) -> bool:
    parts = PurePath(path).parts
    stem = PurePath(path).stem.lower()
    tokens = set(stem.split("_"))
    return any(part.lower() in _FOLDERS for part in parts[:-1]) or stem.startswith("processing_") or bool(
        tokens & _PLATFORM_TOKENS)


def host_side_class(node: ast.ClassDef) -> bool:
    names = [node.name, *(ast.unparse(base).rsplit(".", 1)[-1] for base in node.bases)]
    return any(name.endswith(_CLASS_SUFFIXES) or name in _BASES or platform_name(name) for name in names)


def platform_name(name: str) -> bool:
    """Whether a class or function name says CPU or MLX platform code (``CPUWorker``, ``forward_cpu``)."""
    tokens = {token.lower() for part in name.split("_") for token in _CAMEL.findall(part)}
    return bool(tokens & _PLATFORM_TOKENS)


def host_branch(test: ast.expr) -> bool | None:
    """``True`` when ``test`` holding proves a tensor on the host (``not x.is_cuda``, ``x.is_cpu``,
    ``x.device.type == "cpu"``), ``False`` when it failing does (``x.is_cuda``), ``None`` for other tests."""
    flipped = False
    while isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        test, flipped = test.operand, not flipped
    on_host = None
    if isinstance(test, ast.Attribute) and test.attr in {"is_cuda", "is_cpu"}:
        on_host = test.attr == "is_cpu"
    elif (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.Eq, ast.NotEq))
          and isinstance(test.comparators[0], ast.Constant) and test.comparators[0].value in {"cpu", "cuda"}):
        subject = test.left.value if isinstance(test.left, ast.Attribute) and test.left.attr == "type" else test.left
        if isinstance(subject, ast.Attribute) and subject.attr == "device":
            on_host = test.comparators[0].value == "cpu"
            flipped ^= isinstance(test.ops[0], ast.NotEq)
    return None if on_host is None else on_host != flipped
