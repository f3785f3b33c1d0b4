import { test } from '@japa/runner'
import { createHash } from 'node:crypto'
import { readdir, readFile, rm } from 'node:fs/promises'
import { crc32 } from 'node:zlib'
import { DateTime } from 'luxon'
import { Worker } from 'bullmq'
import app from '@adonisjs/core/services/app'
import db from '@adonisjs/lucid/services/db'
import env from '#start/env'
import PaymentOrder from '#payments/models/payment_order'
import type DepositAccount from '#payments/models/deposit_account'
import PaymentSlip from '#slips/models/payment_slip'
import { expirePayment, sweepExpiredPayments } from '#payments/actions/expire_payment'
import { sandboxPay } from '#reconciliation/actions/sandbox_pay'
import { importStatement } from '#reconciliation/actions/import_statement'
import { matchImport, storeStatement } from '#reconciliation/statements'
import { recheckSlips } from '#slips/actions/recheck_slips'
import { promptPayPayload } from '#payments/promptpay_qr'
import { bullConnection, queue, queuePrefix } from '#core/queue/queue_manager'
import { HANDLERS } from '#jobs/handlers'
import { assertError } from '#tests/helpers/envelope'
import {
  authBody,
  createDepositAccount,
  createDepositMerchant,
  resetDatabase,
  signedPost,
  TEST_ACTOR,
  withMarker,
  type TestMerchant,
} from '#tests/helpers/merchants'
import {
  garbageQrImage,
  noQrImage,
  photoLike,
  promptpayQrImage,
  sandboxSlip,
  sandboxTransRef,
} from '#tests/helpers/slips'

const OK = 'slip upload successful.'

let orderSequence = 0
/** Orders whose slip folders the test run removes afterwards. */
const createdUuids: string[] = []

function slipFolder(uuid: string) {
  return `${env.get('DRIVE_FS_ROOT') ?? app.makePath('storage')}/slips/${uuid}`
}

async function removeSlipFolders() {
  for (const uuid of createdUuids.splice(0))
    await rm(slipFolder(uuid), { recursive: true, force: true })
}

async function createOrder(
  who: TestMerchant,
  options: { path?: string; amount?: string } = {}
): Promise<PaymentOrder> {
  orderSequence += 1
  const response = await signedPost(
    options.path ?? '/payment/create',
    who,
    authBody(who, {
      merchant_order_id: `SLIP${orderSequence}`,
      amount: options.amount ?? '150.00',
      bank: 'SCB',
      account_name: 'Customer',
      account_no: '1234567890',
    })
  )
  if (response.status !== 200) throw new Error(response.text)
  const order = await PaymentOrder.findByOrFail(
    'platform_order_id',
    response.json.data.platform_order_id
  )
  await order.load('depositAccount')
  createdUuids.push(order.uuid)
  return order
}

function upload(who: TestMerchant, fields: Record<string, unknown>) {
  return signedPost('/slip/upload', who, authBody(who, fields))
}

function uploadImage(who: TestMerchant, order: PaymentOrder, image: Uint8Array) {
  return upload(who, {
    platform_order_id: order.platformOrderId,
    image_base64: Buffer.from(image).toString('base64'),
  })
}

/** The answer of an accepted upload: its verification_msg. */
function verificationOf(assert: any, response: { status: number; text: string; json: any }) {
  assert.equal(response.status, 200, response.text)
  assert.deepEqual(Object.keys(response.json.data), ['msg', 'verification_msg'])
  assert.equal(response.json.data.msg, OK)
  return response.json.data.verification_msg as string
}

/** Files the drive holds for an order (local disk: storage/slips/<uuid>/). */
async function storedFiles(order: PaymentOrder) {
  try {
    return await readdir(slipFolder(order.uuid))
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return []
    throw error
  }
}

function csvLine(at: DateTime, amount: number, reference: string, description = 'TRANSFER') {
  const when = at.setZone('Asia/Bangkok').toFormat('yyyy-LL-dd HH:mm:ss')
  return `${when},credit,${(amount / 100).toFixed(2)},${reference},${description}`
}

/** A bank statement of the order's account with one credit naming the transfer's reference. */
function importTransfer(
  account: DepositAccount,
  transfer: { transRef: string; amount: number; at: DateTime }
) {
  return importStatement(
    {
      deposit_account_id: account.id,
      layout: 'neutral',
      file_name: `statement-${transfer.transRef}.csv`,
      content: `date_time,direction,amount,reference,description\n${csvLine(transfer.at, transfer.amount, transfer.transRef)}\n`,
    },
    TEST_ACTOR
  )
}

/**
 * A statement line stored but not matched yet: what the gateway knows
 * between an import's commit and its matching (or before a lagging
 * statement's matching ran). The order is still open, so a slip of the
 * transfer can be uploaded and verified against the line.
 */
async function storedNotMatched(
  account: DepositAccount,
  line: { transRef: string; amount: number; at: DateTime; reference?: string | null },
  layout: 'neutral' | 'sandbox' = 'neutral'
) {
  return db.transaction((trx) =>
    storeStatement(trx, {
      account,
      layout,
      fileName: `${layout}-${line.transRef}`,
      fileSha256: createHash('sha256').update(line.transRef).digest('hex'),
      lines: [
        {
          lineNumber: 1,
          lineAt: line.at.toJSDate(),
          direction: 'credit',
          amount: line.amount,
          reference: line.reference === undefined ? line.transRef : line.reference,
          // The sandbox bank's description names the transfer's reference.
          description: `SANDBOX TRANSFER ${line.transRef} FROM SCB X7890 Customer`,
        },
      ],
      actor: TEST_ACTOR,
    })
  )
}

/** A PNG with a private text chunk that brings it to exactly `size` bytes. */
function paddedPng(png: Buffer, size: number) {
  const iend = png.length - 12
  const type = Buffer.from('tEXt')
  const data = Buffer.alloc(size - png.length - 12, 0x61)
  Buffer.from('Comment\0').copy(data)
  const length = Buffer.alloc(4)
  length.writeUInt32BE(data.length)
  const crc = Buffer.alloc(4)
  crc.writeUInt32BE(crc32(Buffer.concat([type, data])) >>> 0)
  return Buffer.concat([png.subarray(0, iend), length, type, data, crc, png.subarray(iend)])
}

/** The merchant's balances and the postings that moved money (not the statements the bank sent). */
async function ledgerSnapshot(who: TestMerchant) {
  const balances = await db.from('merchant_balances').where('merchant_id', who.merchant.id).first()
  const [{ total }] = await db
    .from('ledger_transactions')
    .whereNot('kind', 'bank_statement')
    .count('* as total')
  return { balances, transactions: Number(total) }
}

test.group('POST /slip/upload: input checks (422 invalid-inputs)', (group) => {
  group.each.setup(() => resetDatabase())
  group.each.teardown(removeSlipFolders)

  test('each input failure has its own message; nothing is stored', async ({ assert }) => {
    const who = await createDepositMerchant()
    await createDepositAccount()
    const order = await createOrder(who)
    const png = await sandboxSlip()
    const image = png.toString('base64')
    const id = order.platformOrderId
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ image_base64: image }, 'platform_order_id is required'],
      [{ platform_order_id: id }, 'image_base64 is required'],
      [{ platform_order_id: id, image_base64: '' }, 'image_base64 is required'],
      [
        { platform_order_id: id.slice(0, 23), image_base64: image },
        'platform_order_id must be 24 characters',
      ],
      [
        { platform_order_id: withMarker(id, 'W'), image_base64: image },
        'platform_order_id must have marker P at index 3 (a payment order)',
      ],
      [
        { platform_order_id: `${id.slice(0, 4)}2026-3-1ABCDEFGHIJKL`, image_base64: image },
        'platform_order_id must be a 3-character prefix, a marker, YYYYMMDD and 12 letters or digits',
      ],
      [{ platform_order_id: 12345, image_base64: image }, 'platform_order_id must be a string'],
      [
        { platform_order_id: id, image_base64: `data:image/png;base64,${image}` },
        'image_base64 must be plain base64 without a data: prefix',
      ],
      [
        { platform_order_id: id, image_base64: 'iVBORw0KGgo$$$$' },
        'image_base64 must be base64 (A-Z, a-z, 0-9, + and /, = padding; no spaces or line breaks)',
      ],
      [
        { platform_order_id: id, image_base64: `${image.slice(0, 76)}\n${image.slice(76)}` },
        'image_base64 must be base64 (A-Z, a-z, 0-9, + and /, = padding; no spaces or line breaks)',
      ],
      [
        {
          platform_order_id: id,
          image_base64: Buffer.from('GIF89a not a slip at all').toString('base64'),
        },
        'image_base64 must be a PNG or JPG image',
      ],
      [
        {
          platform_order_id: id,
          image_base64: paddedPng(png, 2_000_001).toString('base64'),
        },
        'image_base64 must decode to at most 2000000 bytes (this one is 2000001)',
      ],
      [{}, 'platform_order_id is required; image_base64 is required'],
    ]
    for (const [fields, message] of cases) {
      assertError(assert, await upload(who, fields), 422, 'invalid-inputs', message)
    }
    assert.lengthOf(await PaymentSlip.all(), 0)
    assert.deepEqual(await storedFiles(order), [])
    assert.isFalse((await order.refresh()).awaitingReview)
  })

  test('an image of exactly 2,000,000 bytes fits the body limit and is accepted', async ({
    assert,
  }) => {
    const who = await createDepositMerchant()
    await createDepositAccount()
    const order = await createOrder(who)
    const image = paddedPng(await sandboxSlip(), 2_000_000)
    assert.lengthOf(image, 2_000_000)
    const response = await uploadImage(who, order, image)
    assert.equal(verificationOf(assert, response), 'slip received, verification pending.')
    const slip = await PaymentSlip.findByOrFail('payment_order_id', order.id)
    assert.equal(slip.byteSize, 2_000_000)
    assert.equal(slip.sha256, createHash('sha256').update(image).digest('hex'))
  })
})

test.group('POST /slip/upload: order checks and limits', (group) => {
  group.each.setup(() => resetDatabase())
  group.each.teardown(removeSlipFolders)

  test('404 not-found for a missing order and for another merchant’s order', async ({ assert }) => {
    const who = await createDepositMerchant()
    const other = await createDepositMerchant()
    await createDepositAccount()
    const theirs = await createOrder(other)
    const image = (await sandboxSlip()).toString('base64')
    const missing = `${theirs.platformOrderId.slice(0, 12)}ZZZZZZZZZZZZ`
    for (const id of [missing, theirs.platformOrderId]) {
      assertError(
        assert,
        await upload(who, { platform_order_id: id, image_base64: image }),
        404,
        'not-found',
        `payment order ${id} not found`
      )
    }
    assert.lengthOf(await PaymentSlip.all(), 0)
  })

  test('403 permission-denied when the order is not open or older than 30 days', async ({
    assert,
  }) => {
    const who = await createDepositMerchant()
    await createDepositAccount()
    const image = await sandboxSlip()

    const expired = await createOrder(who)
    assert.isTrue(await expirePayment(expired.id, DateTime.utc().plus({ hours: 1 })))
    assertError(
      assert,
      await uploadImage(who, expired, image),
      403,
      'permission-denied',
      `payment order ${expired.platformOrderId} is error: slips are accepted for open orders only`
    )

    const old = await createOrder(who)
    await PaymentOrder.query()
      .where('id', old.id)
      .update({ order_at: DateTime.utc().minus({ days: 30, minutes: 1 }).toJSDate() })
    assertError(
      assert,
      await uploadImage(who, old, image),
      403,
      'permission-denied',
      `payment order ${old.platformOrderId} is older than 30 days: slips are no longer accepted`
    )

    // Paid by the sandbox bank (its statement line is matched at once): not open any more.
    const paid = await createOrder(who)
    const payment = await sandboxPay({ platform_order_id: paid.platformOrderId }, TEST_ACTOR)
    assert.equal(payment.orderStatus, 'unsettled_paid')
    assertError(
      assert,
      await uploadImage(who, paid, await readFile(payment.slipPath)),
      403,
      'permission-denied'
    )
    assert.lengthOf(await PaymentSlip.all(), 0)
    for (const order of [expired, old, paid]) assert.deepEqual(await storedFiles(order), [])
  })

  test('429 too-many-requests within 5 minutes and before slip_upload_wait_seconds; refusals do not count', async ({
    assert,
  }) => {
    const who = await createDepositMerchant({ slipUploadWaitSeconds: 3600 })
    await createDepositAccount()
    const order = await createOrder(who)

    const early = await uploadImage(who, order, await sandboxSlip())
    assertError(
      assert,
      early,
      429,
      'too-many-requests',
      /^slips for this order are accepted from 3600 seconds after its creation; retry in \d+ s$/
    )
    assert.isAtLeast(Number(early.headers['retry-after']), 3590)
    assert.deepEqual(await storedFiles(order), [])

    // The refused upload did not count: with the wait lifted the first upload is accepted.
    who.merchant.slipUploadWaitSeconds = 0
    await who.merchant.save()
    assert.equal(
      verificationOf(assert, await uploadImage(who, order, await sandboxSlip())),
      'slip received, verification pending.'
    )
    const second = await uploadImage(who, order, await sandboxSlip())
    assertError(
      assert,
      second,
      429,
      'too-many-requests',
      /^a slip was uploaded for this order less than 5 minutes ago; retry in (29\d|300) s$/
    )
    assert.isAbove(Number(second.headers['retry-after']), 280)
    assert.lengthOf(await storedFiles(order), 1)

    // Five minutes later another upload is accepted.
    await PaymentSlip.query()
      .where('payment_order_id', order.id)
      .update({ created_at: DateTime.utc().minus({ minutes: 5, seconds: 1 }).toJSDate() })
    verificationOf(assert, await uploadImage(who, order, await sandboxSlip()))
    assert.lengthOf(await PaymentSlip.query().where('payment_order_id', order.id), 2)
    assert.lengthOf(await storedFiles(order), 2)
  })

  test('two uploads at once for one order: exactly one is accepted and only its file stays', async ({
    assert,
  }) => {
    const who = await createDepositMerchant()
    await createDepositAccount()

    const order = await createOrder(who)
    const images = [await sandboxSlip(), await sandboxSlip({ format: 'jpg' })]
    const responses = await Promise.all(images.map((image) => uploadImage(who, order, image)))
    const statuses = responses.map((response) => response.status).sort()
    assert.deepEqual(statuses, [200, 429], responses.map((response) => response.text).join('\n'))
    const slips = await PaymentSlip.query().where('payment_order_id', order.id)
    assert.lengthOf(slips, 1)
    assert.deepEqual(await storedFiles(order), [slips[0].storageKey.split('/').pop()])

    // The same image twice at once: the refused upload must not remove the accepted one's file.
    const same = await createOrder(who)
    const image = await sandboxSlip()
    const twice = await Promise.all([1, 2].map(() => uploadImage(who, same, image)))
    assert.deepEqual(twice.map((response) => response.status).sort(), [200, 429])
    const [kept] = await PaymentSlip.query().where('payment_order_id', same.id)
    assert.deepEqual(await storedFiles(same), [`${kept.sha256}.png`])
  })

  test('an accepted upload stores the image, flags the order for review, writes its event and audit row; money does not move', async ({
    assert,
  }) => {
    const who = await createDepositMerchant()
    await createDepositAccount()
    const order = await createOrder(who)
    const before = await ledgerSnapshot(who)

    const image = await sandboxSlip({ format: 'jpg' })
    const response = await uploadImage(who, order, image)
    assert.equal(verificationOf(assert, response), 'slip received, verification pending.')

    const slip = await PaymentSlip.findByOrFail('payment_order_id', order.id)
    const sha256 = createHash('sha256').update(image).digest('hex')
    assert.equal(slip.source, 'merchant_api')
    assert.equal(slip.merchantId, who.merchant.id)
    assert.equal(slip.mime, 'image/jpeg')
    assert.equal(slip.sha256, sha256)
    assert.equal(slip.storageKey, `slips/${order.uuid}/${sha256}.jpg`)
    assert.equal(slip.sendingBank, '004')
    assert.match(slip.transRef!, /^\d{8}[A-Z0-9]{12}$/)
    assert.equal(slip.verificationStatus, 'pending')
    const stored = await readFile(
      `${env.get('DRIVE_FS_ROOT') ?? app.makePath('storage')}/${slip.storageKey}`
    )
    assert.isTrue(stored.equals(image))

    await order.refresh()
    assert.equal(order.status, 'open')
    assert.isTrue(order.awaitingReview)
    const event = await db
      .from('order_events')
      .where({ order_type: 'payment', order_id: order.id })
      .orderBy('id', 'desc')
      .first()
    assert.equal(event.from_status, 'open')
    assert.equal(event.to_status, 'open')
    assert.equal(event.actor, `merchant:${who.merchantId}`)
    assert.equal(
      event.reason,
      `slip ${slip.id} uploaded (merchant_api): slip received, verification pending.`
    )
    const audit = await db.from('audit_logs').where('action', 'slip.upload').firstOrFail()
    assert.equal(audit.actor, `merchant:${who.merchantId}`)
    assert.equal(audit.subject_id, order.platformOrderId)
    const details = typeof audit.details === 'string' ? JSON.parse(audit.details) : audit.details
    assert.equal(details.sha256, sha256)
    assert.equal(details.slip_id, slip.id)
    assert.equal(details.verification_msg, 'slip received, verification pending.')

    assert.deepEqual(await ledgerSnapshot(who), before)
    const query = await signedPost(
      '/payment/query',
      who,
      authBody(who, { platform_order_id: order.platformOrderId })
    )
    assert.equal(query.json.data.status, 'open')
  })

  test('an open order with a slip under review does not expire', async ({ assert }) => {
    const who = await createDepositMerchant()
    await createDepositAccount()
    const reviewed = await createOrder(who)
    const plain = await createOrder(who)
    verificationOf(assert, await uploadImage(who, reviewed, await sandboxSlip()))

    const later = DateTime.utc().plus({ hours: 1 })
    assert.isFalse(await expirePayment(reviewed.id, later))
    assert.equal(await sweepExpiredPayments(later), 1)
    assert.equal((await reviewed.refresh()).status, 'open')
    assert.equal((await plain.refresh()).status, 'error')
  })
})

test.group('POST /slip/upload: verification_msg from slip images', (group) => {
  group.each.setup(async () => {
    await resetDatabase()
    await queue('reconciliation').obliterate({ force: true })
  })
  group.each.teardown(removeSlipFolders)

  test('the transfer of the order itself, known from the statement: all checks pass (PNG, JPG, photos)', async ({
    assert,
  }) => {
    const who = await createDepositMerchant()
    const account = await createDepositAccount()
    const transfer = await createDepositAccount({ channel: 'transfer', promptpayId: null })
    const before = await ledgerSnapshot(who)

    const variants: Array<[string, (slip: Buffer) => Promise<Buffer>, string?]> = [
      ['png', async (slip) => slip],
      ['jpg', async (slip) => slip],
      ['rotated photo (JPG)', (slip) => photoLike(slip, { rotate: 9, scale: 0.7 })],
      [
        'scaled photo (PNG)',
        async (slip) => {
          const { default: sharp } = await import('sharp')
          return sharp(await photoLike(slip, { rotate: -6, scale: 1.3 }))
            .png()
            .toBuffer()
        },
      ],
      ['transfer channel', async (slip) => slip, '/payment/create-transfer'],
    ]
    for (const [name, transform, path] of variants) {
      const order = await createOrder(who, { path })
      const target = path ? transfer : account
      const transRef = sandboxTransRef()
      await storedNotMatched(target, {
        transRef,
        amount: order.transferAmount,
        at: DateTime.utc(),
      })
      const slip = await sandboxSlip({
        transRef,
        amount: order.transferAmount,
        format: name === 'jpg' ? 'jpg' : 'png',
      })
      const message = verificationOf(assert, await uploadImage(who, order, await transform(slip)))
      assert.equal(
        message,
        path
          ? 'amount ok, destination ok (TRANSFER), transfer in time.'
          : 'amount ok, destination ok, transfer in time.',
        name
      )
      const stored = await PaymentSlip.findByOrFail('payment_order_id', order.id)
      assert.equal(stored.verificationStatus, 'passed', name)
      assert.equal(stored.transRef, transRef)
      assert.equal((stored.verification.facts as any).source, 'statement')
    }
    assert.deepEqual(await ledgerSnapshot(who), before, 'uploads move no money')
  })

  test('wrong amount, another order’s and another merchant’s slip, before creation, after expiry', async ({
    assert,
  }) => {
    const who = await createDepositMerchant()
    const otherMerchant = await createDepositMerchant()
    const account = await createDepositAccount()

    // The customer paid 1 THB less through the sandbox bank: not matched, the order stays open.
    const short = await createOrder(who)
    const underpaid = await sandboxPay(
      {
        platform_order_id: short.platformOrderId,
        amount: ((short.transferAmount - 100) / 100).toFixed(2),
      },
      TEST_ACTOR
    )
    assert.equal(underpaid.orderStatus, 'open')
    assert.equal(
      verificationOf(assert, await uploadImage(who, short, await readFile(underpaid.slipPath))),
      'amount mismatch, destination ok, transfer in time.'
    )

    // Another merchant's order on the same account, paid; a new order then gets the
    // same transfer_amount (the slot was freed): only the reuse gives the slip away.
    const theirs = await createOrder(otherMerchant)
    const theirPayment = await sandboxPay({ platform_order_id: theirs.platformOrderId }, TEST_ACTOR)
    assert.equal(theirPayment.orderStatus, 'unsettled_paid')
    const mine = await createOrder(who)
    assert.equal(mine.transferAmount, theirs.transferAmount)
    assert.equal(
      verificationOf(assert, await uploadImage(who, mine, await readFile(theirPayment.slipPath))),
      'amount ok, destination ok, transfer in time, ref error.'
    )
    const reused = await PaymentSlip.findByOrFail('payment_order_id', mine.id)
    assert.equal(reused.verificationStatus, 'failed')
    assert.deepEqual((reused.verification.checks as any).reuse.used_by, [
      { kind: 'statement_line', order: { orderType: 'payment', orderId: theirs.id } },
    ])

    // Another order of the same merchant, paid to another account with another amount.
    const elsewhere = await createDepositAccount({
      depositGroup: 'elsewhere',
      promptpayId: '0898765432',
    })
    who.merchant.depositGroup = 'elsewhere'
    await who.merchant.save()
    const far = await createOrder(who, { amount: '320.00' })
    assert.equal(far.depositAccountId, elsewhere.id)
    who.merchant.depositGroup = 'test-group'
    await who.merchant.save()
    const farPayment = await sandboxPay({ platform_order_id: far.platformOrderId }, TEST_ACTOR)
    const target = await createOrder(who)
    assert.equal(
      verificationOf(assert, await uploadImage(who, target, await readFile(farPayment.slipPath))),
      'destination error, amount mismatch, transfer in time, ref error.'
    )

    // A transfer made 10 minutes before the order was created.
    const late = await createOrder(who)
    const before = sandboxTransRef()
    await importTransfer(account, {
      transRef: before,
      amount: late.transferAmount,
      at: DateTime.utc().minus({ minutes: 10 }),
    })
    assert.equal((await late.refresh()).status, 'open')
    assert.equal(
      verificationOf(assert, await uploadImage(who, late, await sandboxSlip({ transRef: before }))),
      'amount ok, destination ok, transfer before create.'
    )

    // A transfer after the order's expiry (+ the minute of slack). A statement
    // line cannot be dated in the future, so the order is moved into the past.
    const slow = await createOrder(who)
    const back = slow.expireAt.diffNow().plus({ minutes: 10 })
    slow.orderAt = slow.orderAt.minus(back)
    slow.expireAt = slow.expireAt.minus(back)
    await slow.save()
    const after = sandboxTransRef()
    await importTransfer(account, {
      transRef: after,
      amount: slow.transferAmount,
      at: slow.expireAt.plus({ minutes: 5 }),
    })
    assert.equal((await slow.refresh()).status, 'open')
    assert.equal(
      verificationOf(assert, await uploadImage(who, slow, await sandboxSlip({ transRef: after }))),
      'amount ok, destination ok, transfer expired.'
    )

    // The same slip again on another merchant's order: the reference is used.
    const again = await createOrder(otherMerchant)
    assert.equal(
      verificationOf(
        assert,
        await uploadImage(otherMerchant, again, await sandboxSlip({ transRef: before }))
      ),
      'amount mismatch, destination ok, transfer before create, ref error.'
    )
    const forensics = (await PaymentSlip.findByOrFail('payment_order_id', again.id)).verification
      .forensics as any
    assert.lengthOf(forensics.same_trans_ref, 1)
    assert.equal(forensics.same_trans_ref[0].platform_order_id, late.platformOrderId)
    assert.equal(forensics.same_trans_ref[0].merchant_id, who.merchantId)
  })

  test('bill payment: the provider’s ref1 names the order', async ({ assert }) => {
    const who = await createDepositMerchant()
    const account = await createDepositAccount({ promptpayId: null, billerId: '010555555555501' })
    const order = await createOrder(who)
    assert.isString(order.paymentReference)
    const transRef = sandboxTransRef()
    // The sandbox bank's transfer, its statement line not matched yet.
    await storedNotMatched(
      account,
      {
        transRef,
        amount: order.transferAmount,
        at: DateTime.utc(),
        reference: order.paymentReference,
      },
      'sandbox'
    )
    assert.equal(
      verificationOf(assert, await uploadImage(who, order, await sandboxSlip({ transRef }))),
      'ref ok, transfer in time.'
    )
    const slip = await PaymentSlip.findByOrFail('payment_order_id', order.id)
    assert.equal((slip.verification.facts as any).source, 'sandbox')
    assert.equal((slip.verification.facts as any).reference1, order.paymentReference)
  })

  test('no QR, a garbage QR, a PromptPay QR and a slip the sources do not know', async ({
    assert,
  }) => {
    const who = await createDepositMerchant()
    await createDepositAccount()
    const cases: Array<[Buffer, string, string]> = [
      [await noQrImage(), "can't read qr data.", 'unreadable'],
      [await garbageQrImage(), 'qrcode error', 'unreadable'],
      [
        await promptpayQrImage(promptPayPayload({ proxy: '0812345678', amountSatang: 15_000 })),
        'qrcode error',
        'unreadable',
      ],
      [await sandboxSlip(), 'slip received, verification pending.', 'pending'],
    ]
    for (const [image, message, status] of cases) {
      const order = await createOrder(who)
      assert.equal(verificationOf(assert, await uploadImage(who, order, image)), message)
      const slip = await PaymentSlip.findByOrFail('payment_order_id', order.id)
      assert.equal(slip.verificationStatus, status)
      assert.isTrue((await order.refresh()).awaitingReview, 'every accepted upload is reviewed')
      assert.lengthOf(await storedFiles(order), 1)
    }
  })

  test('pending, then verified by the worker after a statement import adds the transfer', async ({
    assert,
  }) => {
    const who = await createDepositMerchant()
    const copycat = await createDepositMerchant()
    const account = await createDepositAccount()
    const order = await createOrder(who)
    const transRef = sandboxTransRef()
    const transferredAt = DateTime.utc()
    const image = await sandboxSlip({ transRef, transferredAt })
    assert.equal(
      verificationOf(assert, await uploadImage(who, order, image)),
      'slip received, verification pending.'
    )
    // The same slip on another merchant's order, before anything is known of it.
    const copied = await createOrder(copycat)
    assert.equal(
      verificationOf(assert, await uploadImage(copycat, copied, image)),
      'slip received, verification pending.'
    )

    const connection = bullConnection()
    const worker = new Worker('reconciliation', async (job) => (await HANDLERS[job.name]())(job), {
      connection,
      prefix: queuePrefix,
    })
    try {
      const summary = await importTransfer(account, {
        transRef,
        amount: order.transferAmount,
        at: transferredAt,
      })
      assert.equal(summary.results.matched, 1, 'the statement line pays the order')
      const slip = await PaymentSlip.findByOrFail('payment_order_id', order.id)
      const copy = await PaymentSlip.findByOrFail('payment_order_id', copied.id)
      const deadline = Date.now() + 10_000
      while (copy.verificationStatus === 'pending' && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 100))
        await copy.refresh()
      }
      await slip.refresh()
      // The transaction paid this order: the other merchant's slip is the reused one.
      assert.equal(slip.verificationStatus, 'passed')
      assert.equal(slip.verificationMsg, 'amount ok, destination ok, transfer in time.')
      assert.equal(copy.verificationStatus, 'failed')
      assert.equal(
        copy.verificationMsg,
        'amount mismatch, destination ok, transfer in time, ref error.'
      )
      assert.lengthOf((copy.verification.forensics as any).same_image, 1)
    } finally {
      await worker.close()
      await connection.quit()
    }
    assert.equal((await order.refresh()).status, 'unsettled_paid')
    const event = await db
      .from('order_events')
      .where({ order_type: 'payment', order_id: order.id })
      .orderBy('id', 'desc')
      .first()
    assert.match(event.reason, /^slip \d+ verified: amount ok, destination ok, transfer in time\.$/)
    assert.equal(event.actor, 'system')
  })

  test('the sweep verifies pending slips once their transfer is known; verified slips are left alone', async ({
    assert,
  }) => {
    const who = await createDepositMerchant()
    const account = await createDepositAccount()
    const order = await createOrder(who)
    const transRef = sandboxTransRef()
    verificationOf(assert, await uploadImage(who, order, await sandboxSlip({ transRef })))
    assert.deepEqual(await recheckSlips(), { checked: 1, verified: 0 })

    const stored = await storedNotMatched(account, {
      transRef,
      amount: order.transferAmount + 1,
      at: DateTime.utc(),
    })
    assert.deepEqual(await recheckSlips({ depositAccountId: account.id + 1 }), {
      checked: 0,
      verified: 0,
    })
    assert.deepEqual(await recheckSlips({ depositAccountId: account.id }), {
      checked: 1,
      verified: 1,
    })
    const slip = await PaymentSlip.findByOrFail('payment_order_id', order.id)
    assert.equal(slip.verificationMsg, 'amount mismatch, destination ok, transfer in time.')
    assert.deepEqual(await recheckSlips(), { checked: 0, verified: 0 })
    await matchImport(account.id, stored.importId)
    assert.equal((await order.refresh()).status, 'open', 'another amount does not pay the order')
  })
})
