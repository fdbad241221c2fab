"""A direct torch transcription of upstream's sampling and stop rules (test oracle).

GPT_SoVITS/AR/models/utils.py ``logits_to_probs`` / ``multinomial_sample_one_no_sync``
(batched form, dim=1) and the stop logic of t2s_model.py ``infer_panel_naive``,
per docs/gpt-sovits.md, T2S sampling; T2S stopping. Only change: the exponential draw
``q`` is passed in, so the oracle and the engine can share it.
"""

from __future__ import annotations

import torch


def logits_to_probs(
    logits: torch.Tensor,
    previous_tokens: torch.Tensor | None,
    temperature: float,
    top_k: int | None,
    top_p: float | None,
    repetition_penalty: float,
) -> torch.Tensor:
    if previous_tokens is not None and repetition_penalty != 1.0:
        previous_tokens = previous_tokens.long()
        score = torch.gather(logits, dim=1, index=previous_tokens)
        score = torch.where(
            score < 0, score * repetition_penalty, score / repetition_penalty
        )
        logits.scatter_(dim=1, index=previous_tokens, src=score)

    if top_p is not None and top_p < 1.0:
        sorted_logits, sorted_indices = torch.sort(logits, descending=True)
        cum_probs = torch.cumsum(
            torch.nn.functional.softmax(sorted_logits, dim=-1), dim=-1
        )
        sorted_indices_to_remove = cum_probs > top_p
        sorted_indices_to_remove[:, 0] = False
        indices_to_remove = sorted_indices_to_remove.scatter(
            dim=1, index=sorted_indices, src=sorted_indices_to_remove
        )
        logits = logits.masked_fill(indices_to_remove, -float("Inf"))

    logits = logits / max(temperature, 1e-5)

    if top_k is not None:
        v, _ = torch.topk(logits, min(top_k, logits.size(-1)))
        pivot = v[:, -1].unsqueeze(-1)
        logits = torch.where(logits < pivot, -float("Inf"), logits)

    return torch.nn.functional.softmax(logits, dim=-1)


def multinomial_sample_one_no_sync(
    probs: torch.Tensor, q: torch.Tensor
) -> torch.Tensor:
    return torch.argmax(probs / q, dim=-1, keepdim=True).to(dtype=torch.int)


def sample(
    logits: torch.Tensor, previous_tokens: torch.Tensor, q: torch.Tensor, **kwargs
) -> tuple[torch.Tensor, torch.Tensor]:
    probs = logits_to_probs(logits, previous_tokens, **kwargs)
    return multinomial_sample_one_no_sync(probs, q), probs


def decode_step(
    logits: torch.Tensor,
    y: torch.Tensor,
    idx: int,
    q: torch.Tensor,
    eos: int,
    **kwargs,
) -> tuple[torch.Tensor, bool]:
    """One iteration of infer_panel_naive after the forward pass: returns the
    extended ``y`` and whether the loop stops (the caller drops the last token)."""
    if idx < 11:  # upstream hard-codes 11 steps without EOS
        logits = logits[:, :-1]
    samples = sample(logits, y, q[: logits.shape[1]].unsqueeze(0), **kwargs)[0]
    y = torch.concat([y, samples], dim=1)
    stop = bool(torch.argmax(logits, dim=-1)[0] == eos or samples[0, 0] == eos)
    return y, stop
