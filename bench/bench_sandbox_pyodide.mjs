// Pyodide under node for bench/bench_sandbox_choice.py: reads {files: {path: text}, program} as JSON on standard
// input, starts Pyodide from the npm package in the folder given as the first argument, writes the files into its
// in-memory file system (nothing of the host's is mounted), puts /app on sys.path and runs the program; its
// standard output and error go to this process's.
import { readFileSync } from "node:fs";
import { dirname } from "node:path";

const [pyodideDir] = process.argv.slice(2);
const { loadPyodide } = await import(`${pyodideDir}/pyodide.mjs`);
const { files, program } = JSON.parse(readFileSync(0, "utf8"));
const pyodide = await loadPyodide({
  indexURL: `${pyodideDir}/`,
  stdout: (line) => console.log(line),
  stderr: (line) => console.error(line),
});
for (const [path, text] of Object.entries(files)) {
  pyodide.FS.mkdirTree(dirname(path));
  pyodide.FS.writeFile(path, text);
}
pyodide.runPython("import sys; sys.path.insert(0, '/app')");
try {
  pyodide.runPython(program);
} catch (error) {
  console.error(String(error));
  process.exitCode = 1;
}
