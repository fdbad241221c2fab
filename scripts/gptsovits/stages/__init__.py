"""The stages of a GPT-SoVITS build (scripts/gptsovits/build.py declares
them): one module per kind of work, importing what that work needs and little
else, so a stage's code key (docs/builds.md, keys) reruns it and what reads
its result, not the whole build."""
