// Parses PowerShell files with tree-sitter's PowerShell grammar and lists
// every syntax error (ERROR or missing nodes), for the scripts that no
// PowerShell runs here: cudnnctl's completion script and the Windows CI
// job's scripts/windows-smoke.ps1.  A parse is not a run: it catches what
// would stop the script from loading, not what it does.
//
//   node ps-parse.mjs NODE_PREFIX FILE...
//
// NODE_PREFIX holds node_modules/web-tree-sitter and
// node_modules/tree-sitter-powershell (scripts/deps.sh --test).
// Exit 0: all parse; 1: a syntax error; 77: the modules are not there.
import fs from 'fs';
import path from 'path';
import { createRequire } from 'module';
import { pathToFileURL } from 'url';
import v8 from 'v8';

// The grammar is 1 MB of WebAssembly: V8's optimizing tier compiled it in
// the background and held the exit for 8 s; the baseline compiler alone
// parses both files in well under a second.
v8.setFlagsFromString('--liftoff-only');

const [prefix, ...files] = process.argv.slice(2);
const req = createRequire(path.join(prefix, 'package.json'));
let wts, wasm;
try {
  wts = await import(pathToFileURL(req.resolve('web-tree-sitter')).href);
  wasm = path.join(path.dirname(req.resolve('tree-sitter-powershell/package.json')),
                   'tree-sitter-powershell.wasm');
  fs.accessSync(wasm);
} catch (e) {
  console.log(`SKIP: no tree-sitter PowerShell grammar under ${prefix} (scripts/deps.sh --test): ${e.message}`);
  process.exit(77);
}
const { Parser, Language } = wts.Parser ? wts : wts.default;
await Parser.init();
const parser = new Parser();
parser.setLanguage(await Language.load(wasm));
// hasError marks a node with an ERROR or missing node under it: only those
// subtrees are walked (asking every node for its children, through the
// wasm boundary, took 8 s for the two files).
function errors(file, src) {
  const tree = parser.parse(src);
  const bad = [];
  const walk = (n) => {
    if (n.type === 'ERROR' || n.isMissing) {
      const text = src.slice(n.startIndex, Math.min(n.endIndex, n.startIndex + 60));
      bad.push(`${file}:${n.startPosition.row + 1}:${n.startPosition.column + 1}: ` +
               `${n.isMissing ? 'missing ' + n.type : 'syntax error'}: ${JSON.stringify(text)}`);
    }
    for (const c of n.children) if (c.hasError || c.isMissing) walk(c);
  };
  if (tree.rootNode.hasError) walk(tree.rootNode);
  return { bad, nodes: tree.rootNode.descendantCount };
}
// the grammar must see an error where there is one, or a pass means nothing
if (!errors('(check)', 'function f { if ($x -eq 1 { "a" } }\n').bad.length) {
  console.log('the grammar finds no error in a broken script: it checks nothing');
  process.exit(1);
}
let failed = 0;
for (const file of files) {
  const { bad, nodes } = errors(file, fs.readFileSync(file, 'utf8'));
  console.log(bad.length ? bad.join('\n') : `${file}: parses (${nodes} nodes)`);
  failed += bad.length;
}
process.exit(failed ? 1 : 0);
