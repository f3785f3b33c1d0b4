/**
 * The BullMQ job id of an order's step: `<step>-<platform_order_id>[-<part>…]`.
 *
 * A custom job id makes adding the job idempotent (a job whose id exists is
 * not added again), which is what lets the after-commit hook and the sweeps
 * both enqueue. It must therefore never be reused: not the auto-increment id
 * of a row, which a database recreated or restored from a backup hands out
 * again while Redis still holds the old rows' completed jobs (kept for
 * inspection), so the new rows' jobs would be dropped as duplicates and wait
 * for a sweep. A platform_order_id is random (see newPlatformOrderId) and
 * unique for good.
 */
export function orderJobId(
  step: string,
  platformOrderId: string,
  ...parts: Array<string | number>
) {
  return [step, platformOrderId, ...parts].join('-')
}
