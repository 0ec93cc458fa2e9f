"""Sentence embeddings with sentence-transformers: encode() on a tiny BERT saved locally (random weights)."""

import tempfile
from pathlib import Path

import torch
from sentence_transformers import SentenceTransformer
from transformers import BertConfig, BertModel, BertTokenizerFast

WORDS = ["the", "a", "model", "request", "cache", "token", "batch", "queue", "serve", "decode", "prefill", "page",
         "block", "stream", "kernel", "sync", "host", "device", "memory", "copy", "read", "write", "fast", "slow",
         "long", "short"]
SENTENCES = ["the model reads a page from the cache", "decode is slow when the host waits on the device",
             "a long prefill batch", "serve the queue fast", "copy a block to host memory and read it",
             "short request"]


def setup(device: str = "cpu"):
    torch.manual_seed(0)
    torch.set_num_threads(1)  # one intra-op thread: a step's time does not depend on how busy the cores are
    folder = Path(tempfile.mkdtemp(prefix="st-encode-"))
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS]
    (folder / "vocab.txt").write_text("\n".join(vocab) + "\n")
    BertTokenizerFast(vocab_file=str(folder / "vocab.txt")).save_pretrained(folder)
    config = BertConfig(vocab_size=len(vocab), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=64)
    BertModel(config).save_pretrained(folder)
    return SentenceTransformer(str(folder), device=device)


def step(model):
    return model.encode(SENTENCES, batch_size=4, normalize_embeddings=True)
