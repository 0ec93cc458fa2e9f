"""Documentation links the rules cite."""

NONZERO_DOC = "https://pytorch.org/docs/stable/generated/torch.nonzero.html"
SYNC_DEBUG_DOC = "https://pytorch.org/docs/stable/generated/torch.cuda.set_sync_debug_mode.html"
PINNED_DOC = "https://pytorch.org/tutorials/intermediate/pinmem_nonblock.html"
MULTINOMIAL_DOC = "https://pytorch.org/docs/stable/generated/torch.multinomial.html"
LINALG_DOC = "https://pytorch.org/docs/stable/linalg.html"
CUDA_SEMANTICS_DOC = "https://pytorch.org/docs/stable/notes/cuda.html"

# Names the lint forms of several rules take (the catalogue names every op the lint matches).
TENSOR_BUILDERS = ("tensor", "as_tensor", "asarray")  # build a tensor from (possibly nested) data
TYPED_CONSTRUCTORS = ("Tensor", "FloatTensor", "LongTensor", "IntTensor", "BoolTensor", "HalfTensor",
                      "DoubleTensor", "ByteTensor", "BFloat16Tensor", "ShortTensor", "CharTensor")
SIZED_FACTORIES = ("arange", "zeros", "ones", "empty", "full", "rand", "randn", "randint", "randperm", "eye",
                   "linspace", "logspace")
