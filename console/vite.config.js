// The console is served by the binary under /console/; its build goes to dist/, which
// `--console-dir` names (console/dist by default).
import { defineConfig } from "vite";

export default defineConfig({
  base: "/console/",
  build: { outDir: "dist", emptyOutDir: true, sourcemap: false },
});
