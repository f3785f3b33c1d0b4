import { defineConfig } from '@adonisjs/shield'

/**
 * Secure headers and CSRF for the back-office (its routes only: the merchant
 * API authenticates every request by signature and takes no cookies).
 * Scripts and styles come from the gateway itself; an inline script needs the
 * request's nonce (`cspNonce` in Edge).
 */
const shieldConfig = defineConfig({
  csp: {
    enabled: true,
    directives: {
      defaultSrc: [`'self'`],
      scriptSrc: [`'self'`, '@nonce'],
      styleSrc: [`'self'`],
      imgSrc: [`'self'`, 'data:'],
      formAction: [`'self'`],
      frameAncestors: [`'none'`],
      baseUri: [`'none'`],
      objectSrc: [`'none'`],
    },
    reportOnly: false,
  },
  csrf: {
    enabled: true,
    exceptRoutes: [],
    enableXsrfCookie: false,
    methods: ['POST', 'PUT', 'PATCH', 'DELETE'],
  },
  xFrame: { enabled: true, action: 'DENY' },
  hsts: { enabled: true, maxAge: '180 days' },
  contentTypeSniffing: { enabled: true },
})

export default shieldConfig
