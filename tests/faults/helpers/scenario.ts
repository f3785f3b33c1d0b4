import type { Assert } from '@japa/assert'
import type { ManagedProcess } from '#tests/faults/helpers/processes'
import type { TestMerchant } from '#tests/faults/helpers/gateway'
import {
  checkFinalStates,
  ledgerVerify,
  reconcileVerify,
  waitForQuiescence,
} from '#tests/faults/helpers/invariants'
import { ScenarioReport, formatOutcomes } from '#tests/faults/helpers/report'
import { markFailed } from '#tests/faults/helpers/world'

/**
 * One fault scenario: the processes it started (all stopped at its end,
 * passed or failed), its figures, and its failures. Failures are collected
 * rather than thrown at the first one, so that a failing run says everything
 * that went wrong in the scenario, after its table.
 */
export class Scenario {
  readonly report: ScenarioReport
  readonly failures: string[] = []
  readonly #processes: ManagedProcess[] = []

  constructor(title: string) {
    this.report = new ScenarioReport(title)
  }

  track<T extends ManagedProcess>(proc: T): T {
    this.#processes.push(proc)
    return proc
  }

  expect(condition: unknown, failure: string) {
    if (!condition) this.failures.push(failure)
    return !!condition
  }

  /**
   * The common end of every scenario: wait until the merchant's orders are
   * final and callbacks delivered, then check the end state and run
   * `ledger:verify` and `reconcile:verify`.
   */
  async settle(merchant: TestMerchant, timeoutMs: number) {
    const quiet = await waitForQuiescence(merchant, timeoutMs)
    this.report.add(
      'time to quiescence',
      quiet.ms === undefined
        ? `not reached in ${(timeoutMs / 1000).toFixed(0)} s; still pending ${JSON.stringify(quiet.pending)}`
        : `${(quiet.ms / 1000).toFixed(1)} s`
    )
    this.expect(
      quiet.ms !== undefined,
      `orders or callbacks still pending after ${(timeoutMs / 1000).toFixed(0)} s: ${JSON.stringify(quiet.pending)}`
    )
    const final = await checkFinalStates(merchant)
    this.report.add('payments final', formatOutcomes(final.payments) || 'none')
    this.report.add('payouts final', formatOutcomes(final.payouts) || 'none')
    this.report.add(
      'callbacks',
      `${final.callbacks.rows} outbox rows, ${final.callbacks.deliveries} deliveries received, ${final.callbacks.duplicateDeliveries} duplicates`
    )
    if (final.problems.length > 0) {
      const shown = final.problems.slice(0, 15)
      const more = final.problems.length - shown.length
      this.failures.push(
        `end state: ${final.problems.length} problem(s):\n    ${shown.join('\n    ')}${more > 0 ? `\n    ... and ${more} more` : ''}`
      )
    }
    const ledger = await ledgerVerify()
    this.report.add(
      'ledger:verify',
      ledger.ok ? `green (${ledger.summary})` : `RED: ${ledger.summary}`
    )
    this.expect(ledger.ok, `ledger:verify failed: ${ledger.summary}`)
    const bank = await reconcileVerify()
    this.report.add(
      'reconcile:verify',
      bank.ok ? `green (${bank.summary})` : `RED: ${bank.summary}`
    )
    this.expect(bank.ok, `reconcile:verify failed: ${bank.summary}`)
    return final
  }

  /** Stops what the scenario started, prints its table, then fails with every failure found. */
  async close(assert?: Assert) {
    await Promise.all(this.#processes.map((proc) => proc.stop('SIGTERM', 3000).catch(() => {})))
    this.report.add(
      'result',
      this.failures.length === 0 ? 'PASS' : `FAIL (${this.failures.length})`
    )
    this.report.print()
    if (this.failures.length > 0) {
      markFailed()
      console.log(`  failures:\n  - ${this.failures.join('\n  - ')}`)
    }
    // The failures go in the message too: CI logs are often read from their tail.
    assert?.deepEqual(
      this.failures,
      [],
      `scenario failures (table above): ${this.failures.join(' | ').slice(0, 2000)}`
    )
  }
}
