"""The one build framework every model family's build is declared on.

A build is a list of :class:`stage.Stage` declarations (export, gates_cpu,
compile, gates_sim, bundle, ...) run by :func:`run.run_stages`: resumable,
each stage keyed by its inputs, the results it reads and the code it imports
(:mod:`code`), with one work-dir layout (:mod:`workdir`), one bundle cache
(:mod:`cache`), one exporter (:mod:`onnx_export`) and one graph-runner module
for the gates (:mod:`runners`).  docs/builds.md describes it.
"""
