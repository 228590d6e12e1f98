"""Executables used only by the tests (registered by the test fixtures, never by migrate)."""
