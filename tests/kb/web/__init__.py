"""Fetching and crawling web addresses, against a local server."""
