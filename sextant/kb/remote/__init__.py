"""``sextant-kb --http``: the knowledge base served to remote clients, behind bearer tokens.

``tokens`` keeps the tokens (hashed), ``access`` says who is calling and what they may do, ``http`` builds
and runs the Streamable HTTP app. Over stdio none of it is used: the caller is the local process that
started the server.
"""
