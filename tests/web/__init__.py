"""Browser tests of the web client (clients/web) in Debian's Chromium, driven by Playwright.

Where Playwright for Python or /usr/bin/chromium is absent, the ``browser`` fixture
skips each test and says which is missing.
"""
