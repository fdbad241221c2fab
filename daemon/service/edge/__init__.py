"""The service's edge, where it meets the outside: the requests clients send
and the one check they pass (requests.py), the refusals they hear
(refusals.py), the sockets it listens on (listeners.py), the connections it
admits (admission.py), the log lines a client can cause (clientlog.py), the
metrics it exposes (metrics.py) and what it tells systemd (systemd.py).
"""
