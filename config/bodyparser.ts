import { defineConfig } from '@adonisjs/core/bodyparser'

/**
 * Body parsing for the back-office's forms and the payment page's slip form
 * (only their routes use the bodyparser middleware); the merchant API reads
 * its raw body itself, since the signature covers the exact bytes. The slip
 * form's multipart body is read by its controller with its own size limit
 * (app/payment_page/slip_form.ts), never into temporary files.
 */
const bodyParserConfig = defineConfig({
  allowedMethods: ['POST', 'PUT', 'PATCH', 'DELETE'],
  form: {
    convertEmptyStringsToNull: false,
    trimWhitespaces: true,
    types: ['application/x-www-form-urlencoded'],
  },
  json: {
    convertEmptyStringsToNull: false,
    trimWhitespaces: true,
    types: ['application/json'],
  },
  multipart: {
    autoProcess: true,
    convertEmptyStringsToNull: false,
    trimWhitespaces: true,
    processManually: ['/pay/:uuid/slip'],
    limit: '20mb',
    types: ['multipart/form-data'],
  },
})

export default bodyParserConfig
