"""Web addresses as documents: ``fetch`` one address, ``crawl`` a section of a site, ``cache`` what was fetched.

Fetching only: the bytes go to ``sextant.kb.loaders.load_bytes`` under the name ``Fetched.name``, whose suffix
picks the loader.
"""
