"""What the Qwen3-TTS build's stages share: the model and codec directories
(source, config), the options (options), the context every stage reads
(context), the prompt and ids upstream has (prompt) and the gates' one
input (trajectory)."""
