"""build_asr's parts: the model directory, the prompt, the steps, the report."""
