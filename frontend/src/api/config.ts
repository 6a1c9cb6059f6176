/** Where the agent is: runtime config.js (served by scripts/serve.mjs), then VITE_API_URL, then this host on :8000. */
declare global {
  interface Window {
    __SEXTANT__?: { apiUrl?: string };
  }
}

export function apiBase(): string {
  const runtime = typeof window !== "undefined" ? window.__SEXTANT__?.apiUrl : undefined;
  const built = import.meta.env.VITE_API_URL as string | undefined;
  const fallback = typeof window !== "undefined" ? `${window.location.protocol}//${window.location.hostname}:8000` : "";
  return (runtime || built || fallback).replace(/\/+$/, "");
}
