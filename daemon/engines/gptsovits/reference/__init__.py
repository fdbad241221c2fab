"""Reference-side runtime of GPT-SoVITS v2Pro: what upstream computes from a
reference clip (prompt semantic tokens, style vector ``ge``, the sv embedding),
run on the NPU graphs ``hubert``, ``ssl_quant``, ``ref_enc`` and ``sv``, so a
voice can be made from a clip on the device (zero-shot cloning, cloning/)."""
