"""The client protocols the service speaks.

Wyoming and the OpenAI-compatible HTTP API.
"""
