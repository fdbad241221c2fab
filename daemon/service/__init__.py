"""The running service, layer by layer from the bottom: its configuration
(config.py the schema, config_file.py reading it); where it meets the outside
(edge/: requests and their one check, refusals, sockets, connections, client
log lines, metrics, systemd); the voices it serves (voices/); requests on the
one NPU worker (scheduling/); cloned voices (cloning/); and the engine host
the protocols talk to (host.py).
"""
