"""Names the provenance guess knows: which calls build tensors, which answer with plain values."""

from __future__ import annotations

FACTORIES = frozenset({
    "tensor", "as_tensor", "asarray", "zeros", "ones", "empty", "full", "arange", "range", "linspace", "logspace",
    "eye", "rand", "randn", "randint", "randperm", "empty_strided", "zeros_like", "ones_like", "empty_like",
    "full_like", "rand_like", "randn_like", "randint_like", "Tensor", "FloatTensor", "LongTensor", "IntTensor",
    "BoolTensor", "HalfTensor", "DoubleTensor", "ByteTensor", "BFloat16Tensor", "ShortTensor", "CharTensor",
})
# Legacy typed constructors: `torch.LongTensor([...])` on the host, `torch.cuda.LongTensor([...])` on the device.
TYPED_CONSTRUCTORS = frozenset(name for name in FACTORIES if name.endswith("Tensor"))
VALUE_TORCH_CALLS = frozenset({
    "equal", "allclose", "is_tensor", "numel", "is_floating_point", "is_complex", "get_default_dtype",
    "device", "dtype", "Size", "Generator", "Event", "Stream", "current_stream", "default_stream",
    "get_device_module", "is_available", "device_count", "current_device", "compile", "no_grad",
    "inference_mode", "finfo", "iinfo", "set_grad_enabled",
    "calculate_gain", "_calculate_correct_fan", "_calculate_fan_in_and_fan_out",  # `nn.init`'s numbers
})
# torch submodules whose functions compute tensors, and those whose functions answer questions.
TENSOR_NAMESPACES = frozenset({"nn", "linalg", "special", "fft", "ops", "sparse", "nested"})
VALUE_NAMESPACES = frozenset({"cuda", "accelerator", "distributed", "backends", "npu", "xpu", "hpu", "mps",
                              "cpu", "version", "compiler", "_dynamo", "utils", "jit", "fx", "library",
                              "testing", "profiler", "autograd", "hub", "multiprocessing", "_C"})
VALUE_BUILTINS = frozenset({
    "len", "int", "float", "bool", "str", "range", "list", "tuple", "dict", "set", "frozenset", "sorted",
    "isinstance", "issubclass", "hasattr", "getattr", "enumerate", "zip", "repr", "id", "type", "round",
    "print", "map", "filter", "reversed", "any", "all", "divmod", "hash", "ord", "chr", "format", "open",
})
# Builtins whose result's elements are those of their (first) argument.
PASS_THROUGH_BUILTINS = frozenset({"list", "tuple", "sorted", "reversed", "set", "frozenset", "iter", "filter"})
# Builtins whose result is one of their arguments' elements (or one of several arguments).
PICKING_BUILTINS = frozenset({"max", "min", "next"})
VALUE_METHODS = frozenset({
    "numel", "dim", "ndimension", "size", "nelement", "element_size", "data_ptr", "is_contiguous", "stride",
    "storage_offset", "get_device", "is_pinned", "query", "item", "tolist", "record", "wait", "keys", "values",
    "items", "get", "append", "extend", "pop", "split_with_sizes_list", "untyped_storage", "record_stream",
    "is_floating_point", "is_complex", "type", "format", "join", "startswith", "endswith", "index", "count",
    # metadata queries that answer a Python bool without reading the data (not `is_nonzero`: it reads it)
    "is_inference", "is_shared", "is_set_to", "is_signed", "is_same_size", "is_conj", "is_neg",
})
# Methods whose results hold plain values all the way down (a list of numbers, a shape, a string's parts).
HOST_CONTAINER_METHODS = frozenset({"tolist", "size", "stride", "keys", "split_with_sizes_list", "numpy",
                                    "splitlines", "encode", "decode", "strip", "lower", "upper"})
HOST_CONTAINER_ATTRIBUTES = frozenset({"shape", "stride", "device", "dtype", "ndim"})
HOST_METHODS = frozenset({"cpu", "numpy", "pin_memory"})
# Methods only a tensor has: an unknown receiver called with one of them is a tensor. (Not `scatter`/`gather`:
# communication objects have them too.)
TENSOR_ONLY_METHODS = frozenset({
    "long", "int", "bool", "float", "half", "bfloat16", "double", "short", "byte", "contiguous", "unsqueeze",
    "masked_fill", "masked_fill_", "index_select", "clone", "detach", "narrow", "expand", "expand_as",
    "index_add_", "index_put_", "scatter_", "masked_scatter_", "view_as", "type_as",
    "new_zeros", "new_ones", "new_empty", "new_full", "new_tensor", "eq", "ne", "gt", "ge", "lt", "le",
    "logical_and", "logical_or", "logical_not", "bitwise_and", "bitwise_or", "flip", "roll", "cumsum_",
    "copy_", "fill_", "zero_", "add_", "sub_", "mul_", "div_", "clamp_", "clamp", "clamp_min", "clamp_max",
    "unsqueeze_", "squeeze_", "repeat_interleave", "softmax", "log_softmax", "topk", "argmax", "argmin",
    "isin", "isnan", "isinf", "isfinite", "sigmoid", "exp", "to", "cuda", "permute", "transpose", "abs",
    "norm", "square", "sqrt", "rsqrt", "masked_select", "bincount", "t",
})
# Attributes only a tensor (or a parameter) has.
TENSOR_ONLY_ATTRIBUTES = frozenset({"grad"})
# Methods of Python numbers, strings and containers, and of numpy arrays: on a plain value, a plain value.
PLAIN_VALUE_METHODS = frozenset({
    "sum", "mean", "max", "min", "prod", "cumsum", "cumprod", "argmax", "argmin", "astype", "reshape", "transpose",
    "flatten", "ravel", "squeeze", "copy", "any", "all", "nonzero", "std", "var", "round", "clip", "dot", "view",
    "fill", "sort", "argsort", "take", "repeat", "tobytes", "tolist", "item", "searchsorted", "conjugate",
    "split", "rsplit", "strip", "lstrip", "rstrip", "replace", "format", "join", "lower", "upper", "startswith",
    "endswith", "encode", "decode", "find", "rfind", "partition", "rpartition", "splitlines", "zfill", "title",
    "isdigit", "isalpha", "count", "index", "get", "items", "keys", "values", "pop", "setdefault", "update",
    "append", "extend", "insert", "remove", "add", "discard", "union", "intersection", "difference",
    "bit_length", "is_integer", "hex", "real", "imag", "__len__", "__getitem__", "numel", "size",
})
