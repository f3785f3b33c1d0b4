/*
|--------------------------------------------------------------------------
| Review queues
|--------------------------------------------------------------------------
|
| Each domain registers its review queue with app/review/queues.ts when its
| module loads (the review mechanism imports none of them). This preload
| loads them in every process, web, worker, Ace commands and tests, in the
| order the back-office lists them. A new queue is added here too.
|
*/

import '#payments/review_queue'
import '#slips/review_queue'
import '#reconciliation/review_queue'
import '#approvals/review_queue'
import '#callbacks/review_queue'
