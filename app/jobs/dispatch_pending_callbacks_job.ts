import { dispatchPendingCallbacks } from '#callbacks/enqueue'

/** callback.dispatch-pending — idempotent: job ids dedupe, the handler checks the row. */
export default async function dispatchPendingCallbacksJob() {
  return dispatchPendingCallbacks()
}
