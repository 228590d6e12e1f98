"""Tools for the `internal` queue."""
