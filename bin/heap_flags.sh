# The V8 heap bounds of the gateway's two processes, as `npm start` and
# production run them (docs/operations.md, "Memory"). bin/start.sh sources
# this file; the benchmark and the shutdown fault test read it through
# bin/heap_flags.ts, so what they measure and check is what runs.
WEB_HEAP_FLAGS="--max-old-space-size=192 --max-semi-space-size=4"
WORKER_HEAP_FLAGS="--max-old-space-size=256 --max-semi-space-size=16"
