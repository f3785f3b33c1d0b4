import { writeFileSync } from 'node:fs'
import { relative } from 'node:path'
import { BaseReporter } from '@japa/runner/core'
import type { TestEndNode } from '@japa/runner/types'
import { printSlowest, type ShardReport } from '../../bin/test_shards.js'

/**
 * After the run, the slowest tests and the spec files that took the most wall
 * time (their hooks included), so that a test that makes the suite slow is
 * seen the day it lands (docs/testing.md). A process of a sharded run writes
 * them to TEST_REPORT_FILE instead, for bin/test_shards.ts to print the
 * whole run's.
 */
export class TimingReporter extends BaseReporter {
  #tests: ShardReport['tests'] = []
  #files: Record<string, number> = {}
  #file = ''
  #fileStartedAt = 0
  #startedAt = 0

  protected async start() {
    this.#startedAt = performance.now()
  }

  protected onGroupStart() {
    this.#switchTo(this.currentFileName)
  }

  protected onTestStart() {
    this.#switchTo(this.currentFileName)
  }

  protected onTestEnd(payload: TestEndNode) {
    this.#tests.push({
      title: payload.title.expanded,
      file: this.#relative(this.currentFileName),
      ms: payload.duration,
    })
  }

  #relative(fileName: string | undefined) {
    return fileName ? relative(process.cwd(), fileName) : '?'
  }

  /** A file's time runs from its first group or test to the next file's. */
  #switchTo(fileName: string | undefined) {
    const file = this.#relative(fileName)
    if (file === this.#file) return
    const now = performance.now()
    if (this.#file)
      this.#files[this.#file] = (this.#files[this.#file] ?? 0) + now - this.#fileStartedAt
    this.#file = file
    this.#fileStartedAt = now
  }

  protected async end() {
    this.#switchTo('')
    delete this.#files['?']
    const reportFile = process.env.TEST_REPORT_FILE
    if (!reportFile) {
      printSlowest(this.#tests, this.#files, performance.now() - this.#startedAt)
      return
    }
    const summary = this.runner!.getSummary()
    const report: ShardReport = {
      tests: this.#tests,
      files: this.#files,
      passed: summary.aggregates.passed,
      failed: summary.aggregates.failed,
      skipped: summary.aggregates.skipped,
      todo: summary.aggregates.todo,
      hasError: summary.hasError,
    }
    writeFileSync(reportFile, JSON.stringify(report))
  }
}

export const timing = () => ({
  name: 'timing',
  handler: (...args: Parameters<TimingReporter['boot']>) => new TimingReporter().boot(...args),
})
