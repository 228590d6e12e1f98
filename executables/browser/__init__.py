"""Tools for the `browser` queue: Playwright-driven Chromium, web fetch and search."""
