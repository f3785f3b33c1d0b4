/*
 * The shape of app/ as its imports draw it (docs/architecture.md, "Layers"):
 *
 *   npm run imports            folders, files, arrows and circles
 *   npm run imports -- --list  the arrows between folders too, named
 *
 * A folder is a room (app/payments, app/payments/actions, …); an arrow is a
 * pair of rooms one imports from the other; a circle is a set of files that
 * import each other round (runtime imports, `import type` left out, since
 * it is erased when compiled; the type-only circles are counted apart).
 */
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { circles, importGraph } from './import_graph.js'

const ROOT = fileURLToPath(new URL('../', import.meta.url))
// Piped into `head`: the reader left, which is no failure.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(0)
  throw error
})
const list = process.argv.includes('--list')

const { files, runtime, all } = await importGraph(join(ROOT, 'app'))
const room = (file: string) => relative(ROOT, dirname(file))
const rooms = new Set(files.map(room))
const arrows = new Set<string>()
for (const [file, targets] of all) {
  for (const to of targets) if (room(to) !== room(file)) arrows.add(`${room(file)} -> ${room(to)}`)
}
const name = (file: string) => relative(ROOT, file)
const runtimeCircles = circles(runtime)
const typeCircles = circles(all).filter(
  (component) => !runtimeCircles.some((circle) => circle.every((file) => component.includes(file)))
)
const imported = [...runtime.values()].reduce((sum, set) => sum + set.size, 0)
console.log(`${files.length} files in ${rooms.size} folders of app/`)
console.log(`${imported} runtime imports between files; ${arrows.size} arrows between folders`)
console.log(
  `${runtimeCircles.length} circles of runtime imports; ${typeCircles.length} more through types only`
)
if (list) {
  console.log('\narrows between folders:')
  for (const arrow of [...arrows].sort()) console.log(`  ${arrow}`)
}
for (const circle of runtimeCircles) console.log(`  circle: ${circle.map(name).join(' <-> ')}`)
for (const circle of typeCircles)
  console.log(`  type-only circle: ${circle.map(name).join(' <-> ')}`)
