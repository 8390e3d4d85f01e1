#!/usr/bin/env node
// Entry of the `vpnhost` command: hands over to the CLI dispatcher. In a compiled tree (the test runner's `.build`)
// the dispatcher is JavaScript beside this file; otherwise tsx loads the TypeScript sources.
import { existsSync } from 'node:fs';

const compiled = new URL('./cli/main.js', import.meta.url);
if (!existsSync(compiled)) (await import('tsx/esm/api')).register();
const { main } = await import(existsSync(compiled) ? compiled.href : './cli/main.ts');
process.exitCode = await main(process.argv.slice(2));
