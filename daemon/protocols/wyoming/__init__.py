"""Wyoming protocol.

The server, one handler per connection, and bounded input reading.
"""
