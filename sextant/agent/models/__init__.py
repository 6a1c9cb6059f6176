"""Chat-model adapters: each speaks the protocol in ``sextant.agent.chat``."""
