/*
| JavaScript entrypoint for Ace. TypeScript sources are compiled on the fly by
| @poppinss/ts-exec; run it through `npm run ace -- <command>` so that the
| pinned Node 24 from node_modules/.bin is used.
*/
import '@poppinss/ts-exec'

await import('./bin/console.js')
