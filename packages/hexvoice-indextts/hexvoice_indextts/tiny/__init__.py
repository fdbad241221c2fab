"""A tiny random-weight IndexTTS-2, written with upstream's own classes in its
on-disk formats (model.py: the model directory; hub.py: the four shared hub
models; text.py: the BPE and the emotion model), for the tests."""
