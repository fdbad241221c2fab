"""The rows the GPT graphs read, summed on the CPU from ``gpt.pth``'s tables
as ``UnifiedVoice`` sums them (gpt/model_v2.py), in float32:

- conditioning: the 32 speaker latents plus the emotion vector, then
  ``speed_emb`` rows 1 and 0 (``inference_speech`` and ``forward`` alike);
- generation prompt (``prepare_gpt_inputs``): the conditioning, the text with
  its start and stop ids removed and put back at both ends, each at its text
  position, then the start mel token at mel position 0;
- the n-th generated token (from 1): its mel embedding at mel position n
  (upstream's step takes it from the attention mask's length less the
  conditioning and text rows; measured against transformers 5's beam search:
  the first decode step reads position 1, any other is far off);
- latent pass (``forward``): the conditioning, [start] + text + [stop], and
  [start] + codes + [stop], each at positions from 0; upstream keeps as many
  rows as there are codes, from the start token's (``[:, :-2]`` of the mel
  part).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from hexvoice_indextts.model_dir.config import Gpt

#: speed_emb's rows in the conditioning, in upstream's order (duration_emb_half,
#: then duration_emb)
SPEED_ROWS = (1, 0)


def _table(state: Mapping[str, Any], key: str) -> np.ndarray:
    return state[key].detach().float().numpy().copy()


@dataclass(frozen=True)
class GptTables:
    text: np.ndarray  # [text vocab, d]
    text_pos: np.ndarray  # [max_text_tokens + 2, d]
    mel: np.ndarray  # [number_mel_codes, d]
    mel_pos: np.ndarray  # [max_mel_tokens + 3, d]
    speed: np.ndarray  # [2, d]
    start_text: int
    stop_text: int
    start_mel: int
    stop_mel: int

    @classmethod
    def from_state(cls, state: Mapping[str, Any], cfg: Gpt) -> GptTables:
        """From gpt.pth's state dict (torch tensors; the build side)."""
        return cls(
            _table(state, "text_embedding.weight"),
            _table(state, "text_pos_embedding.emb.weight"),
            _table(state, "mel_embedding.weight"),
            _table(state, "mel_pos_embedding.emb.weight"),
            _table(state, "speed_emb.weight"),
            cfg.start_text_token,
            cfg.stop_text_token,
            cfg.start_mel_token,
            cfg.stop_mel_token,
        )

    @property
    def width(self) -> int:
        return int(self.mel.shape[1])

    def conditioning(self, latents: np.ndarray, emotion: np.ndarray) -> np.ndarray:
        """[latents + 2, d] from latents [n, d] and the emotion vector [d]."""
        rows = np.asarray(latents, np.float32) + np.asarray(emotion, np.float32)
        return np.concatenate([rows, self.speed[list(SPEED_ROWS)]])

    def prompt(self, conditioning: np.ndarray, text: Sequence[int]) -> np.ndarray:
        """The generation prompt [conditioning + text + 3, d]."""
        ids = [t for t in text if t not in (self.start_text, self.stop_text)]
        ids = [self.start_text, *ids, self.stop_text]
        start = self.mel[self.start_mel] + self.mel_pos[0]
        return np.concatenate([conditioning, self._text_rows(ids), start[None]])

    def step(self, tokens: np.ndarray, generated: int) -> np.ndarray:
        """The rows [beams, d] of the ``generated``-th generated tokens."""
        return self.mel[tokens] + self.mel_pos[generated]

    def latent(
        self, conditioning: np.ndarray, text: Sequence[int], codes: Sequence[int]
    ) -> tuple[np.ndarray, slice]:
        """The latent pass's rows, and the slice of them upstream keeps."""
        text_rows = self._text_rows([self.start_text, *text, self.stop_text])
        mel_ids = [self.start_mel, *codes, self.stop_mel]
        mel_rows = self.mel[mel_ids] + self.mel_pos[: len(mel_ids)]
        first = len(conditioning) + len(text_rows)  # the start token's row
        rows = np.concatenate([conditioning, text_rows, mel_rows])
        return rows, slice(first, first + len(codes))

    def _text_rows(self, ids: Sequence[int]) -> np.ndarray:
        return self.text[list(ids)] + self.text_pos[: len(ids)]
