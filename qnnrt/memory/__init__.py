"""Where graph data lives: tensor metadata with the numpy <-> QNN dtype rules
(``tensor``) and the DSP-visible rpcmem buffers of a board (``rpcmem``).

Built on ``qnnrt.c`` only; the objects above (``Backend``, the binary metadata,
``Context``, ``Graph``) use them.
"""
