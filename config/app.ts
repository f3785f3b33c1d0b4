import env from '#start/env'
import proxyAddr from 'proxy-addr'
import { defineConfig } from '@adonisjs/core/http'
import gateway from '#config/gateway'

/**
 * X-Forwarded-For and X-Forwarded-Proto are honoured only when the TCP peer is
 * one of TRUSTED_PROXIES; from anyone else they are ignored, so a client cannot
 * forge its source IP (IP whitelist) or claim HTTPS over plain HTTP.
 */
const trustProxy = proxyAddr.compile(gateway.trustedProxies)

export const http = defineConfig({
  generateRequestId: true,
  allowMethodSpoofing: false,
  useAsyncLocalStorage: false,
  trustProxy,
  cookie: {
    domain: '',
    path: '/',
    maxAge: '2h',
    httpOnly: true,
    secure: true,
    sameSite: 'lax',
  },
})

export const appName = env.get('APP_NAME', 'thb-gateway')
