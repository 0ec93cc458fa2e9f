"""Documentation links the rules cite."""

NONZERO_DOC = "https://pytorch.org/docs/stable/generated/torch.nonzero.html"
SYNC_DEBUG_DOC = "https://pytorch.org/docs/stable/generated/torch.cuda.set_sync_debug_mode.html"
PINNED_DOC = "https://pytorch.org/tutorials/intermediate/pinmem_nonblock.html"
MULTINOMIAL_DOC = "https://pytorch.org/docs/stable/generated/torch.multinomial.html"
LINALG_DOC = "https://pytorch.org/docs/stable/linalg.html"
CUDA_SEMANTICS_DOC = "https://pytorch.org/docs/stable/notes/cuda.html"
