// How a host turns the bundle's manifest and the user's choices into the command it starts: the mcpb library's
// own getMcpConfigForManifest, which Claude Desktop uses. Prints {command, args, env} as JSON.
//   node packaging/mcpb/host_config.mjs UNPACKED_BUNDLE_DIR '{"documents": ["/a", "/b"], "store": ""}'
import { getMcpConfigForManifest } from "@anthropic-ai/mcpb";
import { readFileSync } from "node:fs";

const [bundleDir, userConfig] = process.argv.slice(2);
const manifest = JSON.parse(readFileSync(`${bundleDir}/manifest.json`, "utf8"));
const config = await getMcpConfigForManifest({
  manifest,
  extensionPath: bundleDir,
  systemDirs: { HOME: process.env.HOME },
  userConfig: JSON.parse(userConfig),
  pathSeparator: "/",
});
if (config === undefined) {
  console.error("the host would not start this server: required configuration is missing");
  process.exit(1);
}
console.log(JSON.stringify(config));
