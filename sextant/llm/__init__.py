"""The chat-model layer under the agent and the knowledge base's CLI: one protocol (``chat``), its adapters
(Gemini, llama.cpp in process, OpenAI-compatible, scripted), the settings that choose one, and the overview
writer both sides use. It imports neither ``sextant.agent`` nor ``sextant.kb``."""
