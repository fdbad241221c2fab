"""The tables stage: a model dir as the hub ships it (vocab.json + merges.txt,
the codec elsewhere) loads through upstream's own loader, its tokenizer is
converted to text/tokenizer.json, its tables and params come out."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from daemon.engines.qwen3.tts import params as layout
from scripts.qwen3.tts.pipeline.source import read_model_dir
from tests.qwen3_fixtures import require_qwen_tts

require_qwen_tts()


def test_a_hub_layout_with_the_codec_elsewhere(tiny_tts_custom: Path, tmp_path: Path):
    """No tokenizer.json (converted at build time), no speech_tokenizer/ in the
    model dir (--codec): the tables, tokenizer and params still come out."""
    tokenizers = pytest.importorskip("tokenizers")
    from scripts.qwen3.tts.build import BuildOptions
    from scripts.qwen3.tts.pipeline.context import BuildContext
    from scripts.qwen3.tts.pipeline.options import CodecPlan, CodecWindow, Window
    from scripts.qwen3.tts.stages.tables import write_tables

    model = Path(shutil.copytree(tiny_tts_custom, tmp_path / "model"))
    codec = Path(shutil.move(model / "speech_tokenizer", tmp_path / "codec"))
    (model / "tokenizer.json").unlink()
    opts = BuildOptions(
        model=model,
        target="simulator",
        out=tmp_path / "bundle",
        work=tmp_path / "work",
        codec=codec,
        prefill_buckets=(64,),
        kv_buckets=(192,),
        codec_windows=(Window(8), Window(16)),
    )
    ctx = BuildContext(opts, read_model_dir(model, codec))
    plan = CodecPlan([CodecWindow(8, 4), CodecWindow(16, 6)], 4, 6.9)
    res = write_tables(ctx, plan)
    p = layout.TtsParams.from_mapping(res.params)
    assert p.embedding_dtype == "float32" and res.embedding_dtype == "float32"
    assert [(w.frames, w.context) for w in p.codec.windows] == [(8, 4), (16, 6)]
    assert (ctx.work / "model" / "speech_tokenizer").resolve() == codec.resolve()
    tok = tokenizers.Tokenizer.from_file(str(ctx.stage / layout.TOKENIZER))
    text = ctx.tts._build_assistant_text("Hello world. 你好,世界。")
    assert tok.encode(text).ids == ctx.tts._tokenize_texts([text])[0][0].tolist()
    role = tok.encode(p.prompt.template.split("{text}")[0]).ids
    assert role == [p.tokens.im_start, p.tokens.assistant, p.tokens.newline]
    emb = np.load(ctx.stage / layout.CODEC_EMBEDDING)
    want = ctx.model.talker.model.codec_embedding.weight.detach().numpy()
    np.testing.assert_array_equal(emb, want)
