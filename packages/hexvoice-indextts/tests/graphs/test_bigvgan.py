"""BigVGAN v2 as a masked static window: upstream's own BigVGAN (weight norm
removed, as infer_v2 loads it) on a segment's whole mel, against the port on
the segment alone, on a short segment padded into a window (the mask and the
replication index make it the segment's own decode; without the index the
end shows), and on overlapped windows of a longer segment; for the tiny hub
config (odd channels, three stages) and upstream's bundled layout shrunk
(six stages of 4, 4, 2, 2, 2, 2), weights far from their init."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from indextts.s2mel.modules.bigvgan import bigvgan
from scripts.common.floor import rel_gate

from hexvoice_indextts.build.gates import MAX_REL_ERR, port_pair
from hexvoice_indextts.graphs.bigvgan import MaskedBigVGAN
from hexvoice_indextts.tiny.hub import BIGVGAN_OVERRIDES
from hexvoice_indextts.voice.frames import replicate_edges

BUNDLED = json.loads(Path(bigvgan.__file__).with_name("config.json").read_text())
TINY = {**BUNDLED, **BIGVGAN_OVERRIDES}
#: the real layout (six stages, three resblock kernels), 48 channels after
#: the first stage halving to 1
SIX = {**BUNDLED, "upsample_initial_channel": 96}
#: fp16 on the simulator against the fp32 CPU graph
SIM_AUDIO_DB = 30.0


class Vocoder:
    def __init__(self, h: dict[str, Any], seed: int) -> None:
        torch.manual_seed(seed)
        self.model = bigvgan.BigVGAN(bigvgan.AttrDict(h), use_cuda_kernel=False)
        with torch.no_grad():
            for name, p in self.model.named_parameters():
                p.add_(
                    torch.randn_like(p)
                    * (0.3 if "alpha" in name or "beta" in name else 0.05)
                )
        self.state = {k: v.clone() for k, v in self.model.state_dict().items()}
        self.model.remove_weight_norm()
        self.model.eval()
        self.h = h
        self.hop = int(np.prod(h["upsample_rates"]))

    def port(self, frames: int) -> MaskedBigVGAN:
        return MaskedBigVGAN(self.state, self.h, frames).eval()

    def upstream(self, mel: torch.Tensor) -> np.ndarray:
        with torch.no_grad():
            return self.model(mel).numpy()

    def feeds(
        self, mel: torch.Tensor, frames: int, replicate: bool = True
    ) -> tuple[torch.Tensor, ...]:
        n = mel.shape[-1]
        x = torch.zeros(1, mel.shape[1], frames)
        x[..., :n] = mel
        mask = torch.zeros(1, frames * self.hop)
        mask[0, : n * self.hop] = 1.0
        edges = replicate_edges(
            n if replicate else frames, frames, self.h["upsample_rates"]
        )
        return x, mask, torch.from_numpy(edges)


@pytest.fixture(scope="module", params=[0, 1], ids=["tiny", "six"])
def vocoder(request: pytest.FixtureRequest) -> Vocoder:
    return Vocoder((TINY, SIX)[request.param], request.param)


def mel_of(n: int, seed: int) -> torch.Tensor:
    return torch.randn(1, 80, n, generator=torch.Generator().manual_seed(seed)) - 5.0


@pytest.mark.parametrize(("n", "frames"), [(20, 20), (21, 32), (27, 32)])
def test_a_window_is_upstreams_decode_of_the_segment(
    vocoder: Vocoder, n: int, frames: int
) -> None:
    mel = mel_of(n, n)
    want = vocoder.upstream(mel)
    port = vocoder.port(frames)
    with torch.no_grad():
        got = port(*vocoder.feeds(mel, frames)).numpy()[..., : n * vocoder.hop]
    _, exact = port_pair(vocoder.port(n), *vocoder.feeds(mel, n))
    gate = rel_gate("bigvgan", MAX_REL_ERR, exact, want, got)
    assert gate.passed, gate
    if n < frames:
        with torch.no_grad():
            edge = port(*vocoder.feeds(mel, frames, replicate=False)).numpy()
        assert not rel_gate(
            "bigvgan", MAX_REL_ERR, exact, want, edge[..., : n * vocoder.hop]
        ).passed


class PortRunner:
    """The port as a graph runner (the same call the exported graph takes)."""

    def __init__(self, port: MaskedBigVGAN) -> None:
        self.port = port

    def run(self, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
        with torch.no_grad():
            args = (torch.from_numpy(feeds[k]) for k in ("mel", "mask", "edges"))
            return [self.port(*args).numpy()]


def test_overlapped_windows_are_upstreams_whole_decode(vocoder: Vocoder) -> None:
    """Windows of two sizes, the overlap at the config's receptive radius: the
    stitched audio is upstream's decode of the whole segment; a quarter of the
    overlap is not enough."""
    from scripts.common.receptive_field import bigvgan_radius, overlap_for

    from hexvoice_indextts.vocoder.windows import Vocoder as Windows

    h = vocoder.h
    radius = bigvgan_radius(
        h["upsample_rates"], h["upsample_kernel_sizes"],
        h["resblock_kernel_sizes"], h["resblock_dilation_sizes"],
    )  # fmt: skip
    overlap = overlap_for(radius)
    sizes = (2 * overlap + 5, 2 * overlap + 11)
    graphs = {s: PortRunner(vocoder.port(s)) for s in sizes}
    mel = mel_of(2 * sizes[1] + 4, 7)  # several windows, the last moved back
    want = vocoder.upstream(mel).reshape(-1)
    got = np.concatenate(
        list(Windows.from_config(graphs, h, overlap).stream(mel[0].numpy()))
    )
    assert got.shape == want.shape
    assert np.abs(got - want).max() <= 1e-5 * np.abs(want).max()
    with pytest.raises(ValueError, match="receptive radius"):
        Windows.from_config(graphs, h, overlap - 1)
    short = Windows(graphs, tuple(h["upsample_rates"]), overlap // 4)
    cut = np.concatenate(list(short.stream(mel[0].numpy())))
    assert np.abs(cut - want).max() > 1e-3 * np.abs(want).max()


#: the simulator's time grows with samples x channels x ops: a narrow
#: vocoder, one resblock of two dilations a stage
NARROW = {
    **TINY,
    "upsample_initial_channel": 8,
    "resblock_kernel_sizes": [3],
    "resblock_dilation_sizes": [[1, 3]],
}


@pytest.mark.simulator
def test_the_compiled_window_keeps_the_audio_on_the_simulator(tmp_path: Path) -> None:
    """fp16 on the simulator, a short segment padded into a window of
    MIN_WINDOW_FRAMES: the audio's cosine to the CPU graph's at least 0.999
    and SIM_AUDIO_DB or more."""
    pytest.importorskip("onnxruntime_qnn")
    from scripts.common.build.onnx_export import export_static
    from scripts.common.build.runners import Simulator, cpu_runner
    from scripts.common.parity import snr_db
    from scripts.common.qnn_compile import compile_onnx
    from scripts.common.sim_gate import sim_gate

    from hexvoice_indextts.graphs.bigvgan import INPUTS, MIN_WINDOW_FRAMES, OUTPUT

    vocoder = Vocoder(NARROW, 2)
    frames, n = MIN_WINDOW_FRAMES, MIN_WINDOW_FRAMES - 7
    args = vocoder.feeds(mel_of(n, 3), frames)
    spec = export_static(
        vocoder.port(frames), args, INPUTS, (OUTPUT,), tmp_path / "w.onnx"
    )
    feeds = {k: a.numpy() for k, a in zip(INPUTS, args, strict=True)}
    reference = cpu_runner(spec.path).run(feeds)[0][..., : n * vocoder.hop]
    sim = Simulator()
    try:
        got = sim.runner(compile_onnx(spec.path, tmp_path / "bin").bin_path).run(feeds)[
            0
        ]
    finally:
        sim.close()
    got = got[..., : n * vocoder.hop]
    (gate,) = sim_gate("bigvgan", [reference], [got], rows=False)
    assert gate.passed, gate
    assert snr_db(reference, got) >= SIM_AUDIO_DB, snr_db(reference, got)


def test_a_window_under_the_least_is_refused(vocoder: Vocoder) -> None:
    from hexvoice_indextts.graphs.bigvgan import MIN_WINDOW_FRAMES

    with pytest.raises(ValueError, match=f"at least {MIN_WINDOW_FRAMES}"):
        vocoder.port(MIN_WINDOW_FRAMES - 1)
