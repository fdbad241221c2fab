"""GPT-SoVITS v2Pro: export the static graphs and CPU tables of a voice."""
