# ruff: noqa
"""A request's or processor's output holds host tensors; a logits processor's output holds the model's device
logits, whatever its class name ends with."""
import torch
from serving import LogitsProcessorOutput, RequestOutput


def check_logits(logits_output: LogitsProcessorOutput, plain_output, request: RequestOutput):
    if logits_output.next_token_logits.isinf().any():  # expect: SH110 medium
        logits_output.next_token_logits.fill_(0)
    if plain_output.next_token_logits.isnan().any():  # expect: SH110 medium
        plain_output.next_token_logits.fill_(0)
    if request.prompt_logprobs.isinf().any():
        return None
    return logits_output
