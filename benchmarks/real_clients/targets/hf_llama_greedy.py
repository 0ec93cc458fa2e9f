"""Greedy decoding with Hugging Face transformers: a tiny Llama built from its config (random weights)."""

import torch
from transformers import LlamaConfig, LlamaForCausalLM


def setup(device: str = "cpu"):
    torch.manual_seed(0)
    torch.set_num_threads(1)  # one intra-op thread: a step's time does not depend on how busy the cores are
    config = LlamaConfig(vocab_size=512, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=256,
                         bos_token_id=1, eos_token_id=2, pad_token_id=0)
    model = LlamaForCausalLM(config).eval().to(device)
    prompt = torch.randint(3, config.vocab_size, (2, 12)).to(device)
    attention_mask = torch.ones_like(prompt)
    return model, prompt, attention_mask


def step(state):
    model, prompt, attention_mask = state
    with torch.inference_mode():
        tokens = model.generate(prompt, attention_mask=attention_mask, max_new_tokens=8, do_sample=False)
    return tokens
