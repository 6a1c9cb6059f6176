/// <reference types="vitest/config" />
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import tailwindcss from "@tailwindcss/vite";
import react from "@vitejs/plugin-react";
import { defineConfig, type Plugin } from "vite";

const root = path.dirname(fileURLToPath(import.meta.url));
const corpus = path.resolve(root, "../eval/corpus/documents");

/** The committed sample corpus, served under /sample/ so onboarding can upload it with one click. */
function sampleCorpus(): Plugin {
  const files = () =>
    readdirSync(corpus)
      .filter((name) => /\.(pdf|docx|md|txt)$/i.test(name) && statSync(path.join(corpus, name)).size > 0)
      .sort();
  return {
    name: "sextant-sample-corpus",
    configureServer(server) {
      server.middlewares.use((req, res, next) => {
        const url = req.url ?? "";
        if (url === "/sample/index.json") {
          res.setHeader("content-type", "application/json");
          res.end(JSON.stringify(files()));
          return;
        }
        const name = decodeURIComponent(url.replace(/^\/sample\//, ""));
        if (url.startsWith("/sample/") && files().includes(name)) {
          res.end(readFileSync(path.join(corpus, name)));
          return;
        }
        next();
      });
    },
    generateBundle() {
      const names = files();
      this.emitFile({ type: "asset", fileName: "sample/index.json", source: JSON.stringify(names) });
      for (const name of names) {
        this.emitFile({ type: "asset", fileName: `sample/${name}`, source: readFileSync(path.join(corpus, name)) });
      }
    },
  };
}

export default defineConfig({
  plugins: [react(), tailwindcss(), sampleCorpus()],
  resolve: { alias: { "@": path.resolve(root, "src") } },
  server: { port: 5173 },
  preview: { port: 3000 },
  test: { environment: "jsdom", include: ["src/**/*.test.{ts,tsx}"] },
});
