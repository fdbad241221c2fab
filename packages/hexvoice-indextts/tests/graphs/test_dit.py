"""The flow-matching estimator as a masked static graph: one guided velocity
(upstream's solve_euler: the DiT on [x, x], [prompt, 0], [cond, 0], [style, 0],
then 1.7 * v - 0.7 * v_unguided) equals upstream's DiT on the clip's exact
frames, for the tiny config and one with four layers (two uvit skips), other
heads and a dilated wavenet of kernel 3, weights far from init, clips padded
into buckets; without the reflection index the padding shows; the exported
graph runs the same on onnxruntime CPU."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch
from indextts.s2mel.modules.diffusion_transformer import DiT
from omegaconf import OmegaConf
from scripts.common.build.onnx_export import export_static
from scripts.common.build.runners import cpu_runner
from scripts.common.floor import rel_gate

from hexvoice_indextts.build.gates import MAX_REL_ERR, port_pair
from hexvoice_indextts.graphs.dit import CFG_RATE, INPUTS, MaskedDiT
from hexvoice_indextts.model_dir.config import Dit, Wavenet
from hexvoice_indextts.tiny.model import tiny_config
from hexvoice_indextts.voice.frames import reflect_index

TINY = tiny_config()["s2mel"]
OTHER = {
    **TINY,
    "DiT": {**TINY["DiT"], "depth": 4, "num_heads": 4},
    "wavenet": {**TINY["wavenet"], "kernel_size": 3, "dilation_rate": 2},
}
UPSTREAM_CACHE = 8192  # infer_v2: setup_caches(max_batch_size=1, max_seq_length=8192)


class Model:
    def __init__(self, cfg: dict[str, Any], seed: int) -> None:
        torch.manual_seed(seed)
        self.dit = DiT(OmegaConf.create(cfg)).eval()
        self.dit.setup_caches(max_batch_size=1, max_seq_length=UPSTREAM_CACHE)
        with torch.no_grad():
            for p in self.dit.parameters():
                p.add_(torch.randn_like(p) * 0.1)
        self.state = self.dit.state_dict()
        self.typed = Dit(**cfg["DiT"]), Wavenet(**cfg["wavenet"])
        self.mels, self.content = cfg["DiT"]["in_channels"], cfg["DiT"]["content_dim"]

    def port(self, frames: int) -> MaskedDiT:
        return MaskedDiT(self.state, *self.typed, frames).eval()

    def clip(self, n: int, prompt: int, t: float, seed: int) -> dict[str, torch.Tensor]:
        g = torch.Generator().manual_seed(seed)
        x = torch.randn(1, self.mels, n, generator=g)
        prompt_x = torch.zeros(1, self.mels, n)
        prompt_x[..., :prompt] = torch.randn(1, self.mels, prompt, generator=g)
        x[..., :prompt] = 0
        return {
            "x": x,
            "prompt_x": prompt_x,
            "cond": torch.randn(1, n, self.content, generator=g),
            "style": torch.randn(1, 192, generator=g),
            "t": torch.tensor([t]),
        }

    def upstream(self, c: dict[str, torch.Tensor]) -> np.ndarray:
        """solve_euler's guided velocity, as it stacks the batch."""
        z = torch.zeros_like
        with torch.no_grad():
            v = self.dit(
                torch.cat([c["x"], c["x"]]),
                torch.cat([c["prompt_x"], z(c["prompt_x"])]),
                torch.tensor([c["x"].shape[-1]]),
                torch.cat([c["t"], c["t"]]),
                torch.cat([c["style"], z(c["style"])]),
                torch.cat([c["cond"], z(c["cond"])]),
            )
        return ((1.0 + CFG_RATE) * v[:1] - CFG_RATE * v[1:]).numpy()

    def feeds(
        self, c: dict[str, torch.Tensor], frames: int, reflect: bool = True
    ) -> tuple[torch.Tensor, ...]:
        n = c["x"].shape[-1]

        def pad(a: torch.Tensor, axis: int) -> torch.Tensor:
            shape = list(a.shape)
            shape[axis] = frames - n
            return torch.cat([a, torch.zeros(shape)], dim=axis)

        port = self.port(frames)
        mask = torch.zeros(1, frames)
        mask[0, :n] = 1.0
        index = reflect_index(n, frames, port.max_pad)
        if not reflect:  # the bucket's own frames, padding included
            index = np.clip(
                np.arange(-port.max_pad, frames + port.max_pad), 0, frames - 1
            )
        t_freq = self.dit.t_embedder.timestep_embedding(c["t"])
        return (
            pad(c["x"], 2), pad(c["prompt_x"], 2), pad(c["cond"], 1), c["style"],
            t_freq, mask, torch.from_numpy(index),
        )  # fmt: skip


@pytest.fixture(scope="module", params=[0, 1], ids=["tiny", "other"])
def model(request: pytest.FixtureRequest) -> Model:
    return Model((TINY, OTHER)[request.param], request.param)


@pytest.mark.parametrize(
    ("n", "frames", "t"),
    [(23, 32, 0.0), (31, 32, 0.44), (17, 48, 0.96), (48, 48, 0.52)],
)
def test_the_guided_velocity_is_upstreams(
    model: Model, n: int, frames: int, t: float
) -> None:
    c = model.clip(n, prompt=n // 3, t=t, seed=n)
    want = model.upstream(c)
    port = model.port(frames)
    with torch.no_grad():
        got = port(*model.feeds(c, frames)).numpy()[..., :n]
    exact_port = model.port(n)
    _, exact = port_pair(exact_port, *model.feeds(c, n))
    gate = rel_gate("dit", MAX_REL_ERR, exact, want, got)
    assert gate.passed, gate
    if n < frames:
        with torch.no_grad():
            leaky = port(*model.feeds(c, frames, reflect=False)).numpy()[..., :n]
        assert not rel_gate("dit", MAX_REL_ERR, exact, want, leaky).passed


def test_the_exported_graph_is_the_port(model: Model, tmp_path: Any) -> None:
    frames = 32
    port = model.port(frames)
    args = model.feeds(model.clip(27, 9, 0.3, seed=5), frames)
    spec = export_static(port, args, INPUTS, ("velocity",), tmp_path / "dit_F32.onnx")
    with torch.no_grad():
        want = port(*args).numpy()
    got = cpu_runner(spec.path).run(
        {k: a.numpy() for k, a in zip(INPUTS, args, strict=True)}
    )[0]
    assert np.abs(got - want).max() <= 1e-5 * np.abs(want).max()


def test_reflect_index_mirrors_as_torch_pads() -> None:
    for length, pad in ((5, 2), (9, 4), (3, 2)):
        x = torch.arange(length, dtype=torch.float32)[None, None]
        want = torch.nn.functional.pad(x, (pad, pad), mode="reflect")[0, 0].long()
        got = reflect_index(length, length + 3, pad)
        assert got[: length + 2 * pad].tolist() == want.tolist()
    with pytest.raises(ValueError, match="cannot be reflected"):
        reflect_index(2, 8, 2)


@pytest.mark.simulator
def test_the_compiled_graph_keeps_the_velocity_on_the_simulator(
    model: Model, tmp_path: Any
) -> None:
    """fp16 on the simulator: the velocity's cosine to the CPU graph's at
    least the simulator gate's 0.999, and its SNR printed in the gate."""
    pytest.importorskip("onnxruntime_qnn")
    from scripts.common.build.runners import Simulator
    from scripts.common.qnn_compile import compile_onnx
    from scripts.common.sim_gate import sim_gate

    frames = 32
    port = model.port(frames)
    args = model.feeds(model.clip(27, 9, 0.5, seed=8), frames)
    spec = export_static(port, args, INPUTS, ("velocity",), tmp_path / "dit_F32.onnx")
    feeds = {k: a.numpy() for k, a in zip(INPUTS, args, strict=True)}
    reference = cpu_runner(spec.path).run(feeds)[0]
    sim = Simulator()
    try:
        binary = compile_onnx(spec.path, tmp_path / "bin").bin_path
        got = sim.runner(binary).run(feeds)[0]
    finally:
        sim.close()
    (gate,) = sim_gate("dit", [reference[..., :27]], [got[..., :27]], rows=False)
    assert gate.passed, gate
