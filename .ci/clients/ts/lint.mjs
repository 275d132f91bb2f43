// node lint.mjs CONFIG FILE...: lints OpenAPI documents as `redocly lint --max-problems 50`
// does, with its engine (@redocly/openapi-core) and the rules of CONFIG (redocly.yaml), and
// exits 1 when a document has an error. The engine alone rather than @redocly/cli: the CLI
// brings a documentation server, telemetry and React, two thirds of the files npm ci wrote
// (18,000 of 26,600): npm ci took 60 s, now 19.
import { formatProblems, getTotals, lint, loadConfig } from '@redocly/openapi-core';

const [configPath, ...files] = process.argv.slice(2);
const config = await loadConfig({ configPath });
let failed = false;
for (const ref of files) {
  const problems = await lint({ ref, config });
  const totals = getTotals(problems);
  formatProblems(problems, { format: 'stylish', maxProblems: 50, totals, version: 'openapi-core' });
  console.log(`${ref}: ${totals.errors} errors, ${totals.warnings} warnings`);
  failed ||= totals.errors > 0;
}
process.exit(failed ? 1 : 0);
