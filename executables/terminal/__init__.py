"""Tools for the `terminal` queue: commands and files, confined to the worker's workspace root."""
