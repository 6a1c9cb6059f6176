// Replaced at serve time by frontend/scripts/serve.mjs (SEXTANT_API_URL). Empty: use the build's default.
window.__SEXTANT__ = window.__SEXTANT__ || {};
