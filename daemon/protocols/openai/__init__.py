"""OpenAI-compatible HTTP API.

The aiohttp app, one module per endpoint family (speech, transcriptions,
cloned voices), request reading and response encoders.
"""
