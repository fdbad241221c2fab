"""Wyoming protocol.

The server, one handler per connection with its text-to-speech (speak.py)
and speech-to-text (listen.py) sides, and bounded input reading.
"""
