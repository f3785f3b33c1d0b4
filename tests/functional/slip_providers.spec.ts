import { test } from '@japa/runner'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { inspect } from 'node:util'
import { DateTime } from 'luxon'
import app from '@adonisjs/core/services/app'
import { Secret } from '@adonisjs/core/helpers'
import env from '#start/env'
import PaymentOrder from '#payments/models/payment_order'
import PaymentSlip from '#slips/models/payment_slip'
import { buildSlipMiniQr } from '#slips/mini_qr'
import { recheckSlips } from '#slips/actions/recheck_slips'
import type { SlipProvidersConfig } from '#config/slips'
import {
  buildSlipVerifiers,
  configureSlipVerifiers,
  type SourceAnswer,
} from '#slips/verifiers/registry'
import {
  SlipDelayed,
  SlipRefused,
  SlipSourceFailed,
  type SlipOrder,
  type SlipVerifier,
} from '#slips/verifiers/slip_verifier'
import { closedPort } from '#tests/helpers/ports'
import {
  authBody,
  createDepositAccount,
  createDepositMerchant,
  resetDatabase,
  signedPost,
  type TestMerchant,
} from '#tests/helpers/merchants'
import { sandboxSlip, sandboxTransRef } from '#tests/helpers/slips'
import {
  EASYSLIP_KEY,
  EASYSLIP_V1_STATUS,
  EASYSLIP_V2_STATUS,
  SLIPOK_BRANCH,
  SLIPOK_KEY,
  easySlipError,
  easySlipRawSlip,
  easySlipSuccess,
  easySlipV1Error,
  maskedAccount,
  slipOkData,
  slipOkError,
  slipOkSuccess,
  startSlipProviderServer,
  type ProviderTransfer,
  type SlipProviderServer,
} from '#tests/helpers/slip_provider_server'

/*
 * SlipOK and EasySlip adapters against a local HTTPS server that answers as
 * their documentation says (tests/helpers/slip_provider_server.ts): every
 * answer code and what the gateway makes of it, then the verdicts a slip
 * uploaded through POST /slip/upload gets with the providers configured,
 * and the fallback from a provider that cannot answer to the next one.
 */

const PENDING = 'slip received, verification pending.'
const ALL_OK = 'amount ok, destination ok, transfer in time.'

let server: SlipProviderServer
let caFile: string
let caDir: string
let restoreVerifiers: (() => void) | undefined
let orderSequence = 0
const createdUuids: string[] = []

function providers(overrides: Partial<SlipProvidersConfig> = {}): SlipProvidersConfig {
  return {
    timeoutMs: 5000,
    caFile,
    slipok: { url: server.slipOkUrl, branchId: SLIPOK_BRANCH, apiKey: new Secret(SLIPOK_KEY) },
    easyslip: { url: server.easySlipUrl, apiKey: new Secret(EASYSLIP_KEY) },
    ...overrides,
  }
}

/** SLIP_VERIFIERS for this process, built by the registry from settings as config/slips.ts gives them. */
function useVerifiers(names: string, overrides: Partial<SlipProvidersConfig> = {}) {
  restoreVerifiers?.()
  restoreVerifiers = configureSlipVerifiers(
    buildSlipVerifiers(names.split(','), providers(overrides))
  )
}

function verifier(name: 'slipok' | 'easyslip', overrides: Partial<SlipProvidersConfig> = {}) {
  return buildSlipVerifiers([name], providers(overrides))[0]
}

async function createOrder(who: TestMerchant): Promise<PaymentOrder> {
  orderSequence += 1
  const response = await signedPost(
    '/payment/create',
    who,
    authBody(who, {
      merchant_order_id: `PROV${orderSequence}`,
      amount: '149.99',
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

async function removeSlipFolders() {
  const root = env.get('DRIVE_FS_ROOT') ?? app.makePath('storage')
  for (const uuid of createdUuids.splice(0)) {
    await rm(`${root}/slips/${uuid}`, { recursive: true, force: true })
  }
}

/** The transfer as the provider knows it: the order's amount, to its account, now. */
function transferFor(
  order: PaymentOrder,
  transRef: string,
  overrides: Partial<ProviderTransfer> = {}
): ProviderTransfer {
  return {
    transRef,
    amount: order.transferAmount,
    receiverAccount: maskedAccount(order.depositAccount.accountNo),
    at: DateTime.now(),
    ...overrides,
  }
}

interface Uploaded {
  message: string
  slip: PaymentSlip
  sources: SourceAnswer[]
}

/** Uploads the sandbox slip of `transRef` for the order through POST /slip/upload. */
async function uploadSlip(who: TestMerchant, order: PaymentOrder, transRef: string) {
  const image = await sandboxSlip({ transRef, amount: order.transferAmount })
  const response = await signedPost(
    '/slip/upload',
    who,
    authBody(who, {
      platform_order_id: order.platformOrderId,
      image_base64: image.toString('base64'),
    })
  )
  if (response.status !== 200) throw new Error(response.text)
  const slip = await PaymentSlip.query()
    .where('payment_order_id', order.id)
    .orderBy('id', 'desc')
    .firstOrFail()
  return {
    message: response.json.data.verification_msg as string,
    slip,
    sources: (slip.verification as any).sources as SourceAnswer[],
  } satisfies Uploaded
}

function sourcesOf(uploaded: Uploaded) {
  return uploaded.sources.map((answer) =>
    [answer.name, answer.answer, answer.reason].filter(Boolean).join(' ')
  )
}

/** What one lookup ended with, in words. */
async function outcomeOf(source: SlipVerifier, transRef: string, target: SlipOrder) {
  try {
    const facts = await source.lookup(
      { sendingBank: '004', transRef, qrText: buildSlipMiniQr('004', transRef) },
      target
    )
    if (!facts) return 'not found'
    return facts.repeated ? 'facts, repeated' : 'facts'
  } catch (error) {
    if (error instanceof SlipSourceFailed) return `failed: ${error.reason}`
    if (error instanceof SlipRefused) return `refused: ${error.reason}`
    if (error instanceof SlipDelayed) return 'delayed'
    throw error
  }
}

test.group('Slip providers: every answer code, against the provider over HTTPS', (group) => {
  let who: TestMerchant
  let target: SlipOrder

  group.setup(async () => {
    server = await startSlipProviderServer()
    caDir = await mkdtemp(join(tmpdir(), 'slip-provider-ca-'))
    caFile = join(caDir, 'ca.pem')
    await writeFile(caFile, server.certificate)
    await resetDatabase()
    who = await createDepositMerchant()
    await createDepositAccount()
    const order = await createOrder(who)
    target = { order, account: order.depositAccount }
    return async () => {
      await removeSlipFolders()
      await server.close()
      await rm(caDir, { recursive: true, force: true })
    }
  })
  group.each.setup(() => server.reset())

  test('SlipOK: the request, and each code 1000–1014 with and without the transaction', async ({
    assert,
  }) => {
    const slipok = verifier('slipok')
    const expected: Array<[number, boolean, string]> = [
      [1000, false, 'failed: rejected_request'],
      [1001, false, 'failed: credentials'],
      [1002, false, 'failed: credentials'],
      [1003, false, 'failed: quota'],
      [1004, false, 'failed: quota'],
      [1005, false, 'failed: rejected_request'],
      [1006, false, 'failed: rejected_request'],
      [1007, false, 'failed: rejected_request'],
      [1008, false, 'failed: rejected_request'],
      [1009, false, 'failed: server_error'],
      [1010, false, 'delayed'],
      [1011, false, 'not found'],
      [1012, false, 'refused: repeated'],
      [1012, true, 'facts, repeated'],
      [1013, false, 'refused: amount_mismatch'],
      [1013, true, 'facts'],
      [1014, false, 'refused: receiver_mismatch'],
      [1014, true, 'facts'],
      // A code the adapter does not know is read by its HTTP status.
      [1099, false, 'failed: bad_answer'],
    ]
    const actual: Array<[number, boolean, string]> = []
    for (const [code, withData] of expected) {
      const transRef = sandboxTransRef()
      const data = withData ? slipOkData(transferFor(target.order, transRef)) : undefined
      server.script('slipok', transRef, slipOkError(code, data))
      actual.push([code, withData, await outcomeOf(slipok, transRef, target)])
    }
    assert.deepEqual(actual, expected)

    // What the gateway sends: the QR text as data, the order's amount in baht, log.
    const [request] = server.requests
    assert.equal(request.path, `/api/line/apikey/${SLIPOK_BRANCH}`)
    assert.equal(request.headers['x-authorization'], SLIPOK_KEY)
    assert.equal(request.headers['content-type'], 'application/json')
    assert.deepEqual(request.body, {
      data: buildSlipMiniQr('004', request.transRef!),
      amount: target.order.transferAmount / 100,
      log: true,
    })
  })

  test('SlipOK: success is mapped to facts in satang, Bangkok time, masked receiver, ref1', async ({
    assert,
  }) => {
    const transRef = sandboxTransRef()
    // 20.1 and 0.29 are not exact in binary floating point; satang must be.
    const at = DateTime.fromISO('2026-03-01T23:59:58', { zone: 'UTC+7' })
    for (const [amount, satang] of [
      [2010, 2010],
      [29, 29],
      [target.order.transferAmount, target.order.transferAmount],
    ]) {
      server.script(
        'slipok',
        transRef,
        slipOkSuccess(transferFor(target.order, transRef, { amount, at, ref1: 'REF1ABC' }))
      )
      const facts = await verifier('slipok').lookup(
        { sendingBank: '004', transRef, qrText: buildSlipMiniQr('004', transRef) },
        target
      )
      assert.equal(facts!.amount, satang)
      assert.isTrue(Number.isInteger(facts!.amount))
      assert.equal(facts!.transferredAt!.toISO(), '2026-03-01T23:59:58.000+07:00')
      assert.equal(facts!.receiver.account, maskedAccount(target.account.accountNo))
      assert.equal(facts!.reference1, 'REF1ABC')
      assert.equal(facts!.source, 'slipok')
      assert.include(facts!.evidence, { trans_ref: transRef, sending_bank: '004' })
      assert.match(String(facts!.evidence.rq_uid), /^RQ/)
    }
  })

  test('EasySlip: the v2 request, each v2 code and each v1 name', async ({ assert }) => {
    const easyslip = verifier('easyslip')
    const v2: Record<string, string> = {
      MISSING_API_KEY: 'failed: credentials',
      INVALID_API_KEY: 'failed: credentials',
      BRANCH_INACTIVE: 'failed: credentials',
      SERVICE_BANNED: 'failed: credentials',
      SERVICE_DELETED: 'failed: credentials',
      IP_NOT_ALLOWED: 'failed: credentials',
      QUOTA_EXCEEDED: 'failed: quota',
      VALIDATION_ERROR: 'failed: rejected_request',
      URL_PROTOCOL_NOT_ALLOWED: 'failed: rejected_request',
      URL_INVALID_IP_RANGE: 'failed: rejected_request',
      IMAGE_URL_UNREACHABLE: 'failed: rejected_request',
      IMAGE_SIZE_TOO_LARGE: 'failed: rejected_request',
      INVALID_IMAGE_TYPE: 'failed: rejected_request',
      INVALID_IMAGE_FORMAT: 'failed: rejected_request',
      SLIP_NOT_FOUND: 'not found',
      NOT_FOUND: 'failed: rejected_request',
      API_SERVER_ERROR: 'failed: server_error',
      INTERNAL_SERVER_ERROR: 'failed: server_error',
    }
    const v1: Record<string, string> = {
      invalid_payload: 'failed: rejected_request',
      invalid_image: 'failed: rejected_request',
      image_size_too_large: 'failed: rejected_request',
      unauthorized: 'failed: credentials',
      access_denied: 'failed: credentials',
      account_not_verified: 'failed: credentials',
      application_expired: 'failed: quota',
      application_deactivated: 'failed: credentials',
      quota_exceeded: 'failed: quota',
      slip_not_found: 'not found',
      qrcode_not_found: 'not found',
      server_error: 'failed: server_error',
      api_server_error: 'failed: server_error',
    }
    // Every code the helper knows is in the expectations, and the other way round.
    assert.sameMembers(Object.keys(v2), Object.keys(EASYSLIP_V2_STATUS))
    assert.sameMembers(Object.keys(v1), Object.keys(EASYSLIP_V1_STATUS))

    const actual: Record<string, string> = {}
    for (const [code, reply] of [
      ...Object.keys(v2).map((name) => [name, easySlipError(name)] as const),
      ...Object.keys(v1).map((name) => [name, easySlipV1Error(name)] as const),
    ]) {
      const transRef = sandboxTransRef()
      server.script('easyslip', transRef, reply)
      actual[code] = await outcomeOf(easyslip, transRef, target)
    }
    assert.deepEqual(actual, { ...v2, ...v1 })

    const transRef = sandboxTransRef()
    server.script('easyslip', transRef, easySlipSuccess(transferFor(target.order, transRef)))
    assert.equal(await outcomeOf(easyslip, transRef, target), 'facts')
    const duplicate = sandboxTransRef()
    server.script(
      'easyslip',
      duplicate,
      easySlipSuccess(transferFor(target.order, duplicate), { isDuplicate: true })
    )
    assert.equal(await outcomeOf(easyslip, duplicate, target), 'facts, repeated')

    const request = server.requestsFor('easyslip', transRef)[0]
    assert.equal(request.path, '/v2/verify/bank')
    assert.equal(request.headers.authorization, `Bearer ${EASYSLIP_KEY}`)
    assert.deepEqual(request.body, {
      payload: buildSlipMiniQr('004', transRef),
      matchAmount: target.order.transferAmount / 100,
      matchAccount: true,
      checkDuplicate: true,
    })
  })

  test('EasySlip: rawSlip is mapped to facts; the provider’s match flags are evidence only', async ({
    assert,
  }) => {
    const transRef = sandboxTransRef()
    const at = DateTime.fromISO('2026-03-02T00:00:05+07:00', { setZone: true })
    server.script(
      'easyslip',
      transRef,
      easySlipSuccess(
        transferFor(target.order, transRef, { amount: 10_010, at, receiverProxy: 'xxx-xxx-5678' }),
        { amountInOrder: target.order.transferAmount }
      )
    )
    const facts = await verifier('easyslip').lookup(
      { sendingBank: '004', transRef, qrText: buildSlipMiniQr('004', transRef) },
      target
    )
    assert.equal(facts!.amount, 10_010)
    assert.equal(facts!.transferredAt!.toISO(), '2026-03-02T00:00:05.000+07:00')
    assert.deepEqual(facts!.receiver, {
      account: maskedAccount(target.account.accountNo),
      proxy: 'xxx-xxx-5678',
    })
    assert.isNull(facts!.reference1)
    assert.include(facts!.evidence, {
      trans_ref: transRef,
      is_duplicate: false,
      is_amount_matched: false,
    })
    assert.isFalse(facts!.repeated)
  })

  test('no answer in time, a cut connection, a closed port, 5xx and foreign answers: the source failed', async ({
    assert,
  }) => {
    const transRef = sandboxTransRef()
    const quick = { timeoutMs: 300 }
    server.script('slipok', transRef, 'timeout')
    const started = performance.now()
    assert.equal(await outcomeOf(verifier('slipok', quick), transRef, target), 'failed: timeout')
    assert.isBelow(performance.now() - started, 3000)

    server.script('easyslip', transRef, 'drop')
    assert.equal(await outcomeOf(verifier('easyslip'), transRef, target), 'failed: unreachable')

    const closed = `https://127.0.0.1:${await closedPort()}/api/line/apikey`
    const offline = verifier('slipok', {
      slipok: { url: closed, branchId: SLIPOK_BRANCH, apiKey: new Secret(SLIPOK_KEY) },
    })
    assert.equal(await outcomeOf(offline, transRef, target), 'failed: unreachable')

    const answers: Array<[string, unknown, string]> = [
      ['502 page', { status: 502, raw: '<html>Bad gateway</html>' }, 'failed: server_error'],
      [
        '500 with a success body',
        {
          status: 500,
          json: { success: true, data: slipOkData(transferFor(target.order, transRef)) },
        },
        'failed: server_error',
      ],
      [
        '200 naming another transaction',
        slipOkSuccess(transferFor(target.order, sandboxTransRef())),
        'failed: bad_answer',
      ],
      ['200 without data', { status: 200, json: { success: true } }, 'failed: bad_answer'],
      [
        '200 with an amount of three decimals',
        {
          status: 200,
          json: {
            success: true,
            data: { ...slipOkData(transferFor(target.order, transRef)), amount: 149.991 },
          },
        },
        'failed: bad_answer',
      ],
    ]
    for (const [, reply, expected] of answers) {
      server.script('slipok', transRef, reply as any)
      assert.equal(await outcomeOf(verifier('slipok'), transRef, target), expected)
    }
    server.script('easyslip', transRef, {
      status: 500,
      json: {
        success: true,
        data: { rawSlip: easySlipRawSlip(transferFor(target.order, transRef)) },
      },
    })
    assert.equal(await outcomeOf(verifier('easyslip'), transRef, target), 'failed: server_error')
  })

  test('a wrong key or branch is refused by the provider; the key is in no message', async ({
    assert,
  }) => {
    const transRef = sandboxTransRef()
    server.script('slipok', transRef, slipOkSuccess(transferFor(target.order, transRef)))
    server.script('easyslip', transRef, easySlipSuccess(transferFor(target.order, transRef)))
    const wrongKey = 'wrong-key-7d1f'
    const cases: Array<[SlipVerifier, string]> = [
      [
        verifier('slipok', {
          slipok: { url: server.slipOkUrl, branchId: SLIPOK_BRANCH, apiKey: new Secret(wrongKey) },
        }),
        '1002',
      ],
      [
        verifier('slipok', {
          slipok: { url: server.slipOkUrl, branchId: '99999', apiKey: new Secret(SLIPOK_KEY) },
        }),
        '1001',
      ],
      [
        verifier('easyslip', {
          easyslip: { url: server.easySlipUrl, apiKey: new Secret(wrongKey) },
        }),
        'INVALID_API_KEY',
      ],
    ]
    for (const [source, code] of cases) {
      const error = await source
        .lookup({ sendingBank: '004', transRef, qrText: buildSlipMiniQr('004', transRef) }, target)
        .then(
          () => null,
          (failure) => failure
        )
      assert.instanceOf(error, SlipSourceFailed)
      assert.equal(error.reason, 'credentials')
      assert.equal(error.code, code)
      for (const shown of [error.message, JSON.stringify(error), inspect(error), inspect(source)]) {
        assert.notInclude(shown, wrongKey)
        assert.notInclude(shown, SLIPOK_KEY)
      }
    }
  })

  test('the provider’s certificate is trusted only through the configured CA', async ({
    assert,
  }) => {
    const transRef = sandboxTransRef()
    server.script('slipok', transRef, slipOkSuccess(transferFor(target.order, transRef)))
    const untrusting = verifier('slipok', { caFile: undefined })
    const error = await untrusting
      .lookup({ sendingBank: '004', transRef, qrText: buildSlipMiniQr('004', transRef) }, target)
      .then(
        () => null,
        (failure) => failure
      )
    assert.instanceOf(error, SlipSourceFailed)
    assert.equal(error.reason, 'unreachable')
    assert.match(error.message, /certificate/i)
    assert.lengthOf(server.requests, 0, 'nothing sent before the certificate was verified')

    assert.equal(await outcomeOf(verifier('slipok'), transRef, target), 'facts')

    const badFile = join(caDir, 'missing.pem')
    assert.throws(() => buildSlipVerifiers(['slipok'], providers({ caFile: badFile })), /ENOENT/)
  })
})

test.group('Slip providers: verdicts of uploaded slips, end to end', (group) => {
  let who: TestMerchant

  group.setup(async () => {
    server = await startSlipProviderServer()
    caDir = await mkdtemp(join(tmpdir(), 'slip-provider-ca-'))
    caFile = join(caDir, 'ca.pem')
    await writeFile(caFile, server.certificate)
    return async () => {
      await server.close()
      await rm(caDir, { recursive: true, force: true })
    }
  })
  group.each.setup(async () => {
    await resetDatabase()
    server.reset()
    who = await createDepositMerchant()
    await createDepositAccount()
    return async () => {
      restoreVerifiers?.()
      restoreVerifiers = undefined
      await removeSlipFolders()
    }
  })

  test('SlipOK’s facts are judged by the gateway’s rules: amount and receiver', async ({
    assert,
  }) => {
    useVerifiers('slipok')
    const cases: Array<{
      reply: (order: PaymentOrder, transRef: string) => any
      message: string
      status: string
    }> = [
      {
        reply: (order, ref) => slipOkSuccess(transferFor(order, ref)),
        message: ALL_OK,
        status: 'passed',
      },
      {
        reply: (order, ref) =>
          slipOkError(
            1013,
            slipOkData(transferFor(order, ref, { amount: order.transferAmount - 1 }))
          ),
        message: 'amount mismatch, destination ok, transfer in time.',
        status: 'failed',
      },
      {
        reply: (order, ref) =>
          slipOkError(
            1014,
            slipOkData(transferFor(order, ref, { receiverAccount: 'xxx-x-x9999-x' }))
          ),
        message: 'destination error, amount ok, transfer in time.',
        status: 'failed',
      },
      { reply: () => slipOkError(1013), message: 'amount mismatch.', status: 'failed' },
      { reply: () => slipOkError(1014), message: 'destination error.', status: 'failed' },
    ]
    for (const { reply, message, status } of cases) {
      const order = await createOrder(who)
      const transRef = sandboxTransRef()
      server.script('slipok', transRef, reply(order, transRef))
      const uploaded = await uploadSlip(who, order, transRef)
      assert.equal(uploaded.message, message)
      assert.equal(uploaded.slip.verificationStatus, status)
      assert.equal(uploaded.slip.transRef, transRef)
    }
    // The first slip: SlipOK's facts and evidence are kept with the verdict.
    const first = await PaymentSlip.query().orderBy('id').firstOrFail()
    const record = first.verification as any
    assert.equal(record.facts.source, 'slipok')
    const firstOrder = await PaymentOrder.findOrFail(first.paymentOrderId)
    assert.equal(record.facts.amount, firstOrder.transferAmount)
    assert.equal(record.facts.evidence.trans_ref, first.transRef)
    assert.deepEqual(record.sources, [{ name: 'slipok', answer: 'found' }])
    const refused = await PaymentSlip.query().orderBy('id', 'desc').firstOrFail()
    assert.deepEqual((refused.verification as any).refusal, {
      source: 'slipok',
      reason: 'receiver_mismatch',
    })
  })

  test('a repeated slip is a reused one, unless the gateway’s records show it is this order’s', async ({
    assert,
  }) => {
    useVerifiers('slipok')
    // SlipOK has seen the transaction, the gateway has not: reused elsewhere.
    const order = await createOrder(who)
    const transRef = sandboxTransRef()
    server.script('slipok', transRef, slipOkError(1012, slipOkData(transferFor(order, transRef))))
    const repeated = await uploadSlip(who, order, transRef)
    assert.equal(repeated.message, 'amount ok, destination ok, transfer in time, ref error.')
    assert.equal(repeated.slip.verificationStatus, 'failed')
    assert.include((repeated.slip.verification as any).checks.reuse, {
      result: 'error',
      repeated_at_source: 'slipok',
    })

    const withoutData = await createOrder(who)
    const otherRef = sandboxTransRef()
    server.script('slipok', otherRef, slipOkError(1012))
    assert.equal((await uploadSlip(who, withoutData, otherRef)).message, 'ref error.')

    // One slip for two orders: passed for the first; SlipOK then answers 1012
    // for the second, and the gateway names the first order.
    const first = await createOrder(who)
    const second = await createOrder(who)
    const shared = sandboxTransRef()
    server.script(
      'slipok',
      shared,
      slipOkSuccess(transferFor(first, shared)),
      slipOkError(1012, slipOkData(transferFor(first, shared)))
    )
    assert.equal((await uploadSlip(who, first, shared)).message, ALL_OK)
    const reused = await uploadSlip(who, second, shared)
    // The second order has its own transfer amount: the first order's transfer does not fit it either.
    assert.notEqual(second.transferAmount, first.transferAmount)
    assert.equal(reused.message, 'amount mismatch, destination ok, transfer in time, ref error.')
    assert.deepEqual((reused.slip.verification as any).checks.reuse.used_by, [
      { kind: 'slip', order: { orderType: 'payment', orderId: first.id } },
    ])

    // EasySlip's isDuplicate is the same finding.
    useVerifiers('easyslip')
    const third = await createOrder(who)
    const duplicate = sandboxTransRef()
    server.script(
      'easyslip',
      duplicate,
      easySlipSuccess(transferFor(third, duplicate), { isDuplicate: true })
    )
    const easy = await uploadSlip(who, third, duplicate)
    assert.equal(easy.message, 'amount ok, destination ok, transfer in time, ref error.')
    assert.equal(easy.slip.verificationStatus, 'failed')
  })

  test('not found and delayed leave the slip pending; the re-check verifies it once the bank has it', async ({
    assert,
  }) => {
    useVerifiers('slipok')
    const unknown = await createOrder(who)
    const unknownRef = sandboxTransRef()
    const notFound = await uploadSlip(who, unknown, unknownRef)
    assert.equal(notFound.message, PENDING)
    assert.equal(notFound.slip.verificationStatus, 'pending')
    assert.deepEqual(sourcesOf(notFound), ['slipok unknown'])

    const order = await createOrder(who)
    const transRef = sandboxTransRef()
    server.script(
      'slipok',
      transRef,
      slipOkError(1010, { bankCode: '004', bankName: 'ธนาคารกสิกรไทย', delay: 5 }),
      slipOkSuccess(transferFor(order, transRef))
    )
    const delayed = await uploadSlip(who, order, transRef)
    assert.equal(delayed.message, PENDING)
    assert.deepEqual(sourcesOf(delayed), ['slipok delayed'])

    // The sweep asks again: SlipOK now has the transfer; the other slip is still unknown.
    assert.deepEqual(await recheckSlips(), { checked: 2, verified: 1 })
    const verified = await PaymentSlip.findOrFail(delayed.slip.id)
    assert.equal(verified.verificationStatus, 'passed')
    assert.equal(verified.verificationMsg, ALL_OK)
    assert.equal((await PaymentSlip.findOrFail(notFound.slip.id)).verificationStatus, 'pending')
    assert.lengthOf(server.requestsFor('slipok', transRef), 2)
  })

  test('an outage, a refused key or an exhausted quota falls back to the next provider and never approves', async ({
    assert,
  }) => {
    useVerifiers('slipok,easyslip', { timeoutMs: 800 })
    const cases: Array<{
      slipok: (order: PaymentOrder, ref: string) => any
      easyslip: (order: PaymentOrder, ref: string) => any
      message: string
      sources: string[]
    }> = [
      {
        slipok: () => ({ status: 502, raw: '<html>Bad gateway</html>' }),
        easyslip: (order, ref) => easySlipSuccess(transferFor(order, ref)),
        message: ALL_OK,
        sources: ['slipok failed server_error', 'easyslip found'],
      },
      {
        slipok: () => slipOkError(1004),
        easyslip: () => easySlipError('API_SERVER_ERROR'),
        message: PENDING,
        sources: ['slipok failed quota', 'easyslip failed server_error'],
      },
      {
        slipok: () => slipOkError(1003),
        easyslip: () => easySlipError('QUOTA_EXCEEDED'),
        message: PENDING,
        sources: ['slipok failed quota', 'easyslip failed quota'],
      },
      {
        slipok: () => 'timeout',
        easyslip: () => easySlipError('INVALID_API_KEY'),
        message: PENDING,
        sources: ['slipok failed timeout', 'easyslip failed credentials'],
      },
      {
        // A failure whose body looks like a success is still a failure.
        slipok: (order, ref) => ({
          status: 500,
          json: { success: true, data: slipOkData(transferFor(order, ref)) },
        }),
        easyslip: () => 'drop',
        message: PENDING,
        sources: ['slipok failed server_error', 'easyslip failed unreachable'],
      },
      {
        slipok: () => slipOkError(1009),
        easyslip: () => easySlipError('SLIP_NOT_FOUND'),
        message: PENDING,
        sources: ['slipok failed server_error', 'easyslip unknown'],
      },
    ]
    for (const [index, { slipok, easyslip, message, sources }] of cases.entries()) {
      const order = await createOrder(who)
      const transRef = sandboxTransRef()
      server.script('slipok', transRef, slipok(order, transRef))
      server.script('easyslip', transRef, easyslip(order, transRef))
      const uploaded = await uploadSlip(who, order, transRef)
      assert.equal(uploaded.message, message, `case ${index}`)
      assert.deepEqual(sourcesOf(uploaded), sources, `case ${index}`)
      if (message === PENDING) {
        assert.equal(uploaded.slip.verificationStatus, 'pending')
        assert.isNull((uploaded.slip.verification as any).facts)
      } else {
        assert.equal((uploaded.slip.verification as any).facts.source, 'easyslip')
      }
      const stored = JSON.stringify(uploaded.slip.verification)
      assert.notInclude(stored, SLIPOK_KEY)
      assert.notInclude(stored, EASYSLIP_KEY)
    }
    const passed = await PaymentSlip.query().where('verification_status', 'passed')
    assert.lengthOf(passed, 1)
  })

  test('without the provider’s CA the slip stays pending; nothing reaches the provider', async ({
    assert,
  }) => {
    useVerifiers('slipok', { caFile: undefined })
    const order = await createOrder(who)
    const transRef = sandboxTransRef()
    server.script('slipok', transRef, slipOkSuccess(transferFor(order, transRef)))
    const uploaded = await uploadSlip(who, order, transRef)
    assert.equal(uploaded.message, PENDING)
    assert.deepEqual(sourcesOf(uploaded), ['slipok failed unreachable'])
    assert.match(uploaded.sources[0].error!, /certificate/i)
    assert.lengthOf(server.requests, 0)
  })
})
