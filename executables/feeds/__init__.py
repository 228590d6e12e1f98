"""Tools for the `feeds` queue: RSS/Atom, notifications, GitHub."""
