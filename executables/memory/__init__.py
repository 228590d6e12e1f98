"""Tools for the `memory` queue, all stored in Postgres."""
