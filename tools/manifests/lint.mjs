// Validates every resource deploy/kustomization.yaml lists against the
// Kubernetes schema of kubernetes-models (pinned by package-lock.json):
// each field's type, format and allowed values, and every required field
// present. (How the manifests fit together, selectors, mounts, the front
// door's nodes, is deploy's Go test.) Usage:
//   node lint.mjs <deploy dir>
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { parseAllDocuments, parse } from 'yaml';

const dir = process.argv[2];
const kustomization = parse(await readFile(path.join(dir, 'kustomization.yaml'), 'utf8'));
let problems = 0;
let checked = 0;

for (const file of kustomization.resources) {
  const text = await readFile(path.join(dir, file), 'utf8');
  for (const doc of parseAllDocuments(text)) {
    if (doc.errors.length) {
      console.error(`${file}: ${doc.errors[0].message}`);
      problems++;
      continue;
    }
    const m = doc.toJS();
    if (!m) continue;
    const where = `${file}: ${m.kind}/${m.metadata?.name}`;
    let Model;
    try {
      Model = (await import(`kubernetes-models/${m.apiVersion}`))[m.kind];
    } catch {
      Model = undefined;
    }
    if (!Model) {
      console.error(`${where}: unknown apiVersion ${m.apiVersion} or kind ${m.kind}`);
      problems++;
      continue;
    }
    try {
      new Model(m).validate();
      checked++;
    } catch (e) {
      console.error(`${where}: ${e.message}`);
      problems++;
    }
  }
}
console.log(`${checked} manifests valid against the Kubernetes schema, ${problems} problems`);
process.exit(problems || !checked ? 1 : 0);
