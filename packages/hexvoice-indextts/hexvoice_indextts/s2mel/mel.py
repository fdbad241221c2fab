"""From the GPT's codes and latent to the mel, as infer_v2 does it per
segment (``infer_generator``):

- ``S_infer = vq2emb(codes) + gpt_layer(latent)`` (the codebook rows through
  ``out_project``, voice/semantic_codes.py; ``gpt_layer`` is in the latent
  graph, graphs/gpt.py);
- ``target_lengths = (code_lens * 1.72).long()``: float32, truncated;
- ``cond = length_regulator(S_infer, target)`` (graphs/length_regulator.py),
  after the voice's ``prompt_condition``;
- the flow matching from noise over both (s2mel/flow.py), the prompt's frames
  dropped.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

import numpy as np

from hexvoice_indextts.s2mel.flow import solve_euler
from hexvoice_indextts.voice.frames import bucket_for, reflect_index, regulator_inputs

if TYPE_CHECKING:
    from daemon.sdk.ar.loop import Checkpoint
    from daemon.sdk.graphs import Runner

#: mel frames per semantic code (infer_v2: ``(code_lens * 1.72).long()``)
FRAMES_PER_CODE: Final = np.float32(1.72)


def target_frames(codes: int) -> int:
    """infer_v2's target length: ``codes * 1.72`` in float32, truncated."""
    return int(np.float32(codes) * FRAMES_PER_CODE)


@dataclass(frozen=True)
class MelGraphs:
    """The per-utterance s2mel graphs by frame bucket, and what the CPU needs
    to feed the DiT."""

    length_regulator: Mapping[int, Runner]
    dit: Mapping[int, Runner]
    freqs: np.ndarray  # the DiT's timestep frequencies (t_embedder.freqs)
    reflect_pad: int  # the DiT wavenet's widest reflection padding

    def condition(self, s_infer: np.ndarray) -> np.ndarray:
        """``length_regulator(S_infer, target)`` [target frames, channels]."""
        frames = target_frames(len(s_infer))
        bucket = bucket_for(frames, self.length_regulator, "utterance: mel frames")
        inputs = regulator_inputs(s_infer, frames, bucket)
        return self.length_regulator[bucket].run(inputs)[0][0, :frames]

    def mel(
        self,
        condition: np.ndarray,
        ref_mel: np.ndarray,
        style: np.ndarray,
        noise: np.ndarray,
        cancel: Checkpoint | None = None,
    ) -> np.ndarray:
        """The target's mel [80, frames] from ``condition`` [T, channels] (the
        prompt's and the target's), the prompt's ``ref_mel`` [80, P], its
        ``style`` [192] and the starting ``noise`` [80, T]."""
        total, prompt = len(condition), ref_mel.shape[1]
        bucket = bucket_for(total, self.dit, "utterance: prompt and target mel frames")
        runner = self.dit[bucket]
        mels = ref_mel.shape[0]
        feeds = {
            "prompt_x": np.zeros((1, mels, bucket), np.float32),
            "cond": np.zeros((1, bucket, condition.shape[1]), np.float32),
            "style": np.asarray(style, np.float32).reshape(1, -1),
            "mask": np.zeros((1, bucket), np.float32),
            "reflect": reflect_index(total, bucket, self.reflect_pad),
        }
        feeds["prompt_x"][0, :, :prompt] = ref_mel
        feeds["cond"][0, :total] = condition
        feeds["mask"][0, :total] = 1.0
        x_in = np.zeros((1, mels, bucket), np.float32)

        def velocity(x: np.ndarray, t_freq: np.ndarray) -> np.ndarray:
            x_in[0, :, :total] = x
            return runner.run({**feeds, "x": x_in, "t_freq": t_freq})[0][0, :, :total]

        return solve_euler(noise, prompt, velocity, self.freqs, cancel=cancel)[
            :, prompt:
        ]
