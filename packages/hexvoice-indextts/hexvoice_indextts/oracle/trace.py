"""What upstream's ``infer`` computes on the way, recorded without changing
it: every wrapped call returns the wrapped function's own result. Used by the
parity tests to hold each stage of the port to upstream's own intermediate
(one segment; a second segment's arrays would overwrite the first's).

Recorded (float32 unless said, batch dimension kept):

- ``style``, ``prompt_condition``, ``ref_mel``, ``spk_cond_emb``: the speaker
  conditioning (``_get_speaker_conditioning``);
- ``text_tokens`` (int), ``emovec``, ``spk_latent``, ``codes`` (int, the GPT's
  output with its stop token): ``gpt.inference_speech``;
- ``gpt_layer_in`` and ``gpt_layer_out``: ``gpt_layer``'s input and output;
- ``cat_condition`` and ``mel`` (the whole solver output, prompt frames
  included): ``cfm.inference``;
- ``vocoder_in`` and ``vocoder_out``: BigVGAN's input and output.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np


def _np(x: Any) -> np.ndarray:
    return x.detach().cpu().numpy().copy()


@contextmanager
def tracing(tts: Any) -> Iterator[dict[str, np.ndarray]]:
    rec: dict[str, np.ndarray] = {}
    gpt, s2mel = tts.gpt, tts.s2mel.models
    speaker, inference, cfm_inference = (
        tts._get_speaker_conditioning,
        gpt.inference_speech,
        s2mel["cfm"].inference,
    )

    def speaker_conditioning(*a: Any, **k: Any) -> Any:
        out = speaker(*a, **k)
        names = ("spk_cond_emb", "style", "prompt_condition", "ref_mel")
        rec.update({n: _np(x) for n, x in zip(names, out, strict=True)})
        return out

    def inference_speech(spk: Any, text: Any, *a: Any, **k: Any) -> Any:
        codes, latent = inference(spk, text, *a, **k)
        rec.update(text_tokens=_np(text), emovec=_np(k["emo_vec"]))
        rec.update(codes=_np(codes), spk_latent=_np(latent))
        return codes, latent

    def cfm(mu: Any, *a: Any, **k: Any) -> Any:
        out = cfm_inference(mu, *a, **k)
        rec.update(cat_condition=_np(mu), mel=_np(out))
        return out

    def keep(prefix: str) -> Any:
        def hook(_module: Any, inputs: Any, output: Any) -> None:
            rec[f"{prefix}_in"], rec[f"{prefix}_out"] = _np(inputs[0]), _np(output)

        return hook

    handles = [
        s2mel["gpt_layer"].register_forward_hook(keep("gpt_layer")),
        tts.bigvgan.register_forward_hook(keep("vocoder")),
    ]
    tts._get_speaker_conditioning = speaker_conditioning
    gpt.inference_speech = inference_speech
    s2mel["cfm"].inference = cfm
    try:
        yield rec
    finally:
        for h in handles:
            h.remove()
        del tts._get_speaker_conditioning, gpt.inference_speech
        del s2mel["cfm"].inference
