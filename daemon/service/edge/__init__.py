"""The service's edge: what every request is checked against before it is queued."""
