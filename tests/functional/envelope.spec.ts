import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import { signBody } from '#merchants/credentials'
import { rawRequest } from '#tests/helpers/http'
import { authBody, createTestMerchant, resetDatabase, signedPost } from '#tests/helpers/merchants'
import gateway from '#config/gateway'

function assertEnvelope(assert: any, response: any, status: number, error: string) {
  assert.equal(response.status, status, response.text)
  assert.match(response.headers['content-type'], /^application\/json/)
  assert.deepEqual(response.json, {
    code: status,
    error,
    success: false,
    message: response.json.message,
  })
  assert.isString(response.json.message)
}

test.group('error envelope', (group) => {
  group.each.setup(() => resetDatabase())

  test('404 not-found for routes that do not exist, any method', async ({ assert }) => {
    for (const method of ['POST', 'GET', 'DELETE']) {
      assertEnvelope(assert, await rawRequest('/no/such/endpoint', { method }), 404, 'not-found')
    }
  })

  test('405 method-not-allowed for non-POST methods on an endpoint', async ({ assert }) => {
    const response = await rawRequest('/balance', { method: 'GET' })
    assertEnvelope(assert, response, 405, 'method-not-allowed')
    assert.include(response.json.message, 'POST')
  })

  test('400 invalid-inputs for a missing body, a non-JSON body or another content type', async ({
    assert,
  }) => {
    assertEnvelope(
      assert,
      await rawRequest('/balance', { headers: { 'content-type': 'application/json' } }),
      400,
      'invalid-inputs'
    )
    assertEnvelope(
      assert,
      await rawRequest('/balance', {
        body: '{not json',
        headers: { 'content-type': 'application/json' },
      }),
      400,
      'invalid-inputs'
    )
    const form = await rawRequest('/balance', {
      body: 'merchant_id=1',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    })
    assertEnvelope(assert, form, 400, 'invalid-inputs')
    assert.include(form.json.message, 'Content-Type')
  })

  test('413 payload-too-large for bodies over the limit, declared or streamed', async ({
    assert,
  }) => {
    const big = Buffer.alloc(gateway.bodyLimitBytes + 1, 'a')
    const response = await rawRequest('/balance', {
      body: big,
      headers: { 'content-type': 'application/json' },
    })
    assertEnvelope(assert, response, 413, 'payload-too-large')

    // Chunked upload with no Content-Length: the limit applies while reading.
    const { request } = await import('node:https')
    const { testServers } = await import('#tests/helpers/servers')
    const url = new URL(testServers.httpsUrl)
    const streamed: any = await new Promise((resolve, reject) => {
      const req = request(
        {
          host: url.hostname,
          port: url.port,
          path: '/balance',
          method: 'POST',
          ca: testServers.certificate,
          checkServerIdentity: () => undefined,
          headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' },
        },
        (res) => {
          let text = ''
          res.on('data', (chunk) => (text += chunk))
          res.on('end', () => resolve({ status: res.statusCode, json: JSON.parse(text) }))
        }
      )
      req.on('error', reject)
      for (let i = 0; i < 5; i++) req.write(Buffer.alloc(1024 * 1024, 'b'))
      req.end()
    })
    assert.equal(streamed.status, 413)
    assert.equal(streamed.json.error, 'payload-too-large')
  })

  test('500 internal-server-error in the envelope, without a stack, quoting the request id', async ({
    assert,
  }) => {
    const who = await createTestMerchant()
    // A credential whose secret cannot be decrypted (wrong APP_KEY, damaged row) is an operator problem.
    await db
      .from('merchant_credentials')
      .where('merchant_id', who.merchant.id)
      .update({ secret_encrypted: 'damaged' })
    const body = authBody(who)
    const response = await rawRequest('/balance', {
      body,
      headers: { 'content-type': 'application/json', 'x-signature': signBody(who.secret, body) },
    })
    assertEnvelope(assert, response, 500, 'internal-server-error')
    assert.notInclude(response.text, 'at ')
    assert.notInclude(response.text, '.ts')
    assert.notInclude(response.text, 'decrypt')
    const requestId = String(response.headers['x-request-id'])
    assert.isString(requestId)
    assert.include(response.json.message, requestId)
  })

  test('success envelope: code, message, data, success', async ({ assert }) => {
    const who = await createTestMerchant()
    const response = await signedPost('/balance', who, authBody(who))
    assert.deepEqual(Object.keys(response.json), ['code', 'message', 'data', 'success'])
    assert.equal(response.json.code, 200)
    assert.isTrue(response.json.success)
  })
})
