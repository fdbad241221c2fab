"""The Euler solver around the exported DiT graph (onnxruntime CPU) is
upstream's ``CFM.inference`` (25 steps, guidance 0.7, as infer_v2 calls it):
the same torch seed's noise, mel within 1e-4 of upstream's (the issue's bound
for the mel) on the tiny config and a four-layer one, clips padded into a
bucket; the time grid is torch's linspace bit for bit; a cancel stops it
between graph calls."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch
from indextts.s2mel.modules.flow_matching import CFM
from omegaconf import OmegaConf
from scripts.common.build.onnx_export import export_static
from scripts.common.build.runners import cpu_runner

from hexvoice_indextts.graphs.dit import INPUTS, MaskedDiT
from hexvoice_indextts.model_dir.config import Dit, Wavenet
from hexvoice_indextts.s2mel.flow import STEPS, linspace, solve_euler
from hexvoice_indextts.tiny.model import tiny_config
from hexvoice_indextts.voice.frames import reflect_index

TINY = tiny_config()["s2mel"]
OTHER = {**TINY, "DiT": {**TINY["DiT"], "depth": 4, "num_heads": 4}}
FRAMES = 48  # the bucket
#: infer_v2's inference_cfg_rate
GUIDANCE = 0.7
#: the issue's bound for the mel against upstream
MEL_REL = 1e-4


class Flow:
    def __init__(self, cfg: dict[str, Any], seed: int, out: Any) -> None:
        torch.manual_seed(seed)
        self.cfm = CFM(OmegaConf.create(cfg)).eval()
        self.cfm.estimator.setup_caches(max_batch_size=1, max_seq_length=8192)
        with torch.no_grad():
            for p in self.cfm.parameters():
                p.add_(torch.randn_like(p) * 0.1)
        state = {k[len("estimator.") :]: v for k, v in self.cfm.state_dict().items()}
        port = MaskedDiT(state, Dit(**cfg["DiT"]), Wavenet(**cfg["wavenet"]), FRAMES)
        self.pad = port.max_pad
        args = (
            torch.zeros(1, 80, FRAMES), torch.zeros(1, 80, FRAMES),
            torch.zeros(1, FRAMES, cfg["DiT"]["content_dim"]), torch.zeros(1, 192),
            torch.zeros(1, 256), torch.ones(1, FRAMES),
            torch.from_numpy(reflect_index(FRAMES, FRAMES, self.pad)),
        )  # fmt: skip
        spec = export_static(port.eval(), args, INPUTS, ("velocity",), out / "dit.onnx")
        self.runner = cpu_runner(spec.path)
        self.freqs = state["t_embedder.freqs"].numpy()
        self.content = cfg["DiT"]["content_dim"]

    def inputs(self, n: int, prompt: int, seed: int) -> tuple[torch.Tensor, ...]:
        g = torch.Generator().manual_seed(seed)
        mu = torch.randn(1, n, self.content, generator=g)
        return (
            mu,
            torch.randn(1, 80, prompt, generator=g),
            torch.randn(1, 192, generator=g),
        )

    def upstream(self, n: int, prompt: int, seed: int) -> np.ndarray:
        mu, ref, style = self.inputs(n, prompt, seed)
        torch.manual_seed(seed)
        with torch.no_grad():
            x = self.cfm.inference(mu, torch.LongTensor([n]), ref, style, None, STEPS,
                                   inference_cfg_rate=GUIDANCE)  # fmt: skip
        return x[0].numpy()

    def ours(self, n: int, prompt: int, seed: int, cancel: Any = None) -> np.ndarray:
        mu, ref, style = (a.numpy() for a in self.inputs(n, prompt, seed))
        torch.manual_seed(seed)
        z = torch.randn([1, 80, n]).numpy()[0]  # upstream's one draw
        feeds = {
            "prompt_x": np.zeros((1, 80, FRAMES), np.float32),
            "cond": np.zeros((1, FRAMES, self.content), np.float32),
            "style": style,
            "mask": np.zeros((1, FRAMES), np.float32),
            "reflect": reflect_index(n, FRAMES, self.pad),
        }
        feeds["prompt_x"][0, :, :prompt] = ref[0]
        feeds["cond"][0, :n] = mu[0]
        feeds["mask"][0, :n] = 1.0
        x_in = np.zeros((1, 80, FRAMES), np.float32)

        def velocity(x: np.ndarray, t_freq: np.ndarray) -> np.ndarray:
            x_in[0, :, :n] = x
            out = self.runner.run({**feeds, "x": x_in, "t_freq": t_freq})[0]
            return out[0, :, :n]

        return solve_euler(z, prompt, velocity, self.freqs, cancel=cancel)


@pytest.fixture(scope="module", params=[0, 1], ids=["tiny", "other"])
def flow(request: pytest.FixtureRequest, tmp_path_factory: Any) -> Flow:
    out = tmp_path_factory.mktemp("flow")
    return Flow((TINY, OTHER)[request.param], request.param, out)


@pytest.mark.parametrize(("n", "prompt", "seed"), [(37, 12, 0), (48, 20, 3)])
def test_the_mel_is_upstreams(flow: Flow, n: int, prompt: int, seed: int) -> None:
    want, got = flow.upstream(n, prompt, seed), flow.ours(n, prompt, seed)
    err = np.abs(got - want).max() / np.abs(want).max()
    assert err <= MEL_REL, err
    assert not got[:, :prompt].any()


def test_the_time_grid_is_torchs() -> None:
    # up to 33 points (infer_v2 uses 26); torch's vectorised kernel rounds some
    # points of longer grids another way (seen from 40 points, AVX2)
    for steps in (2, 11, 26, 33):
        want = torch.linspace(0, 1, steps).numpy()
        assert linspace(0.0, 1.0, steps).tobytes() == want.tobytes()


class Cancelled(Exception):
    pass


def test_a_cancel_stops_between_graph_calls(flow: Flow) -> None:
    calls = []

    class After:
        def check(self) -> None:
            if len(calls) == 3:
                raise Cancelled

    def velocity(x: np.ndarray, t_freq: np.ndarray) -> np.ndarray:
        calls.append(1)
        return np.zeros_like(x)

    with pytest.raises(Cancelled):
        solve_euler(
            np.ones((80, 9), np.float32), 2, velocity, flow.freqs, cancel=After()
        )
    assert len(calls) == 3
