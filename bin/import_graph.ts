/*
 * The imports between the files of app/, read from the code as text: used by
 * `npm run imports` (bin/imports.ts) and by tests/unit/layers.spec.ts.
 */
import { readdir, readFile } from 'node:fs/promises'
import { dirname, join, resolve } from 'node:path'

export async function sourceFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true })
  const nested = await Promise.all(
    entries.map((entry) => {
      const path = join(dir, entry.name)
      if (entry.isDirectory()) return sourceFiles(path)
      return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [path] : []
    })
  )
  return nested.flat()
}

/** Each import of a file: its specifier and whether only types come through it. */
export function imports(source: string) {
  const code = source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '')
  const found: Array<{ specifier: string; typeOnly: boolean }> = []
  for (const match of code.matchAll(
    /\b(import|export)(\s+type)?\b([^'"`;]*?)\bfrom\s*['"]([^'"]+)['"]/g
  )) {
    const named = match[3]
    // `import { type A, type B } from`: every name a type.
    const allTypes =
      /^\s*\{[^}]*\}\s*$/.test(named) &&
      named
        .replace(/[{}]/g, '')
        .split(',')
        .map((part) => part.trim())
        .filter(Boolean)
        .every((part) => part.startsWith('type '))
    found.push({ specifier: match[4], typeOnly: Boolean(match[2]) || allTypes })
  }
  for (const match of code.matchAll(/\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)/g)) {
    found.push({ specifier: match[1], typeOnly: false })
  }
  for (const match of code.matchAll(/^\s*import\s*['"]([^'"]+)['"]/gm)) {
    found.push({ specifier: match[1], typeOnly: false })
  }
  return found
}

/** The file an import names inside app/, or null (a package, config, start…). */
export function target(app: string, from: string, specifier: string) {
  let path: string | null = null
  const alias = specifier.match(/^#([a-z_]+)\/(.+)$/)
  if (
    alias &&
    !['config', 'start', 'providers', 'generated', 'tests', 'client', 'database'].includes(alias[1])
  ) {
    path = join(app, alias[1], alias[2])
  } else if (specifier.startsWith('.')) {
    path = resolve(dirname(from), specifier)
  }
  if (!path || !path.startsWith(app)) return null
  return path.replace(/\.js$/, '').replace(/\.ts$/, '') + '.ts'
}

/** Tarjan's strongly connected components of more than one file. */
export function circles(graph: Map<string, Set<string>>) {
  let index = 0
  const indices = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const onStack = new Set<string>()
  const found: string[][] = []
  const visit = (node: string) => {
    indices.set(node, index)
    low.set(node, index)
    index++
    stack.push(node)
    onStack.add(node)
    for (const next of graph.get(node) ?? []) {
      if (!indices.has(next)) {
        visit(next)
        low.set(node, Math.min(low.get(node)!, low.get(next)!))
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node)!, indices.get(next)!))
      }
    }
    if (low.get(node) === indices.get(node)) {
      const component: string[] = []
      let member: string
      do {
        member = stack.pop()!
        onStack.delete(member)
        component.push(member)
      } while (member !== node)
      if (component.length > 1) found.push(component.sort())
    }
  }
  for (const node of graph.keys()) if (!indices.has(node)) visit(node)
  return found
}

/**
 * Every file of app/ (absolute paths) with the files it imports: `runtime`
 * leaves out what only `import type` brings (erased when compiled), `all`
 * keeps it.
 */
export async function importGraph(app: string) {
  const files = await sourceFiles(app)
  const known = new Set(files)
  const runtime = new Map<string, Set<string>>()
  const all = new Map<string, Set<string>>()
  for (const file of files) {
    runtime.set(file, new Set())
    all.set(file, new Set())
    for (const { specifier, typeOnly } of imports(await readFile(file, 'utf8'))) {
      const to = target(app, file, specifier)
      if (!to || !known.has(to) || to === file) continue
      all.get(file)!.add(to)
      if (!typeOnly) runtime.get(file)!.add(to)
    }
  }
  return { files, runtime, all }
}
