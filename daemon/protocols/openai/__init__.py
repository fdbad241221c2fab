"""OpenAI-compatible HTTP API.

The aiohttp app, request reading and response encoders.
"""
