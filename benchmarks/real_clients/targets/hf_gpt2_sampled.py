"""Sampled decoding (temperature, top-k, top-p) with Hugging Face transformers: a tiny GPT-2 from its config."""

import torch
from transformers import GPT2Config, GPT2LMHeadModel


def setup(device: str = "cpu"):
    torch.manual_seed(0)
    torch.set_num_threads(1)  # one intra-op thread: a step's time does not depend on how busy the cores are
    config = GPT2Config(vocab_size=512, n_positions=256, n_embd=64, n_layer=2, n_head=4,
                        bos_token_id=1, eos_token_id=2)
    model = GPT2LMHeadModel(config).eval().to(device)
    prompt = torch.randint(3, config.vocab_size, (2, 10)).to(device)
    return model, prompt


def step(state):
    model, prompt = state
    torch.manual_seed(1234)  # the same draws every step
    with torch.inference_mode():
        tokens = model.generate(prompt, attention_mask=torch.ones_like(prompt), max_new_tokens=8, do_sample=True,
                                temperature=0.8, top_k=40, top_p=0.9, pad_token_id=0)
    return tokens
