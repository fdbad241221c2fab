"""``hexvoice serve``: the command line read into a checked configuration
(command.py), and the service it runs (service.py)."""
