"""BigVGAN v2 on the NPU: overlapped windows of the mel through the static
window graphs (graphs/bigvgan.py), audio handed on one window at a time."""
