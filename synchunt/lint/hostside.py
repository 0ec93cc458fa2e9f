"""Code that runs on the host side of a serving stack: multimodal processors, tokenizers, CPU backends.

Their tensors are host tensors unless the code says otherwise, so a finding there that only has "a tensor of
unknown device" as evidence drops to low confidence (device evidence, such as `.to(get_device())` of a host
tensor, still counts). Recognized by convention: a class whose name, or a base's, ends in ``ModalProcessor``,
``ImageProcessor``, ``VideoProcessor``, ``AudioProcessor``, ``FeatureExtractor`` or ``Tokenizer``, or derives
from ``ProcessorMixin``/``SGLangBaseProcessor`` (not a ``LogitsProcessor``: sampling runs on the device); a
module under a ``processors``/``processing`` folder or named ``processing_*``; a module under a ``cpu`` folder
or named with a ``cpu`` part.
"""

from __future__ import annotations

import ast
from pathlib import PurePath

_CLASS_SUFFIXES = ("ModalProcessor", "ImageProcessor", "ImageProcessorFast", "VideoProcessor", "AudioProcessor",
                   "FeatureExtractor", "Tokenizer", "TokenizerFast", "ProcessingInfo")
_BASES = frozenset({"ProcessorMixin", "SGLangBaseProcessor"})
_FOLDERS = frozenset({"processors", "processing", "preprocessing", "cpu"})


def host_side_module(path: str) -> bool:
    parts = PurePath(path).parts
    stem = PurePath(path).stem.lower()
    tokens = set(stem.split("_"))
    return any(part.lower() in _FOLDERS for part in parts[:-1]) or stem.startswith("processing_") or "cpu" in tokens


def host_side_class(node: ast.ClassDef) -> bool:
    names = [node.name, *(ast.unparse(base).rsplit(".", 1)[-1] for base in node.bases)]
    return any(name.endswith(_CLASS_SUFFIXES) or name in _BASES for name in names)
