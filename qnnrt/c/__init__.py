"""The C layer of qnnrt: what touches the QNN shared objects directly.

``_api`` mirrors the headers (nothing else here is mechanical); ``_lib`` finds,
loads and version-checks the libraries, with ``dsp`` reaching the board's HTP stub
and skel first; ``errors.check`` turns every return code into ``QnnError``; ``log``
is QNN's log callback; ``_lifecycle`` is the one exit hook.  Nothing here imports
the objects above it (``qnnrt.memory``, ``Backend``, ``Context``, ...).
"""
