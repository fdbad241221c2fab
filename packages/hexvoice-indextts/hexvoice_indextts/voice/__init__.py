"""What a voice is made of at registration: the speaker clip's conditioning,
computed once on the NPU worker and kept as the voice print (no audio kept)."""
