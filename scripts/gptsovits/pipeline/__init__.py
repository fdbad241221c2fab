"""What a GPT-SoVITS build reads: its inputs in an upstream installation
(sources.py), the context its stages share (context.py), and the reference
voice's features from the training folder (refs.py, aux_refs.py,
prompt_semantic.py).  The stages are in scripts/gptsovits/stages/.
"""
