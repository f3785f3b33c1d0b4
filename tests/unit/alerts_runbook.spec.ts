import { readFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { test } from '@japa/runner'
import { registry } from '#metrics/registry'

// js-yaml (maintained, YAML 1.2) is already installed; it ships no types.
const { load } = createRequire(import.meta.url)('js-yaml') as { load(text: string): unknown }

interface Rule {
  alert?: string
  record?: string
  expr: string
  annotations?: Record<string, string>
}

const ROOT = new URL('../../', import.meta.url)

async function alertRules(): Promise<Rule[]> {
  const text = await readFile(new URL('monitoring/prometheus/alerts.yml', ROOT), 'utf8')
  const parsed = load(text) as { groups: Array<{ name: string; rules: Rule[] }> }
  return parsed.groups.flatMap((group) => group.rules).filter((rule) => rule.alert)
}

/** GitHub's anchor of a Markdown heading, with -1, -2... for repeated ones. */
function headingAnchors(markdown: string) {
  const anchors = new Set<string>()
  const seen = new Map<string, number>()
  let fenced = false
  for (const line of markdown.split('\n')) {
    if (line.startsWith('```')) fenced = !fenced
    const heading = /^#{1,6}\s+(.+?)\s*#*\s*$/.exec(line)
    if (fenced || !heading) continue
    const base = heading[1]
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-')
    const count = seen.get(base) ?? 0
    seen.set(base, count + 1)
    anchors.add(count === 0 ? base : `${base}-${count}`)
  }
  return anchors
}

/** Series Prometheus itself adds to every target. */
const PROMETHEUS_SERIES = new Set([
  'up',
  'scrape_duration_seconds',
  'scrape_samples_scraped',
  // Written by deploy/backup/gateway-backup.sh for node_exporter, not by a gateway process.
  'gateway_backup_last_success_timestamp_seconds',
])
const KEYWORDS = new Set(['and', 'or', 'unless', 'bool', 'offset', 'inf', 'nan'])

/** The metric names a PromQL expression reads (not functions, labels, keywords or durations). */
function metricNamesIn(expr: string) {
  const stripped = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ')
  const names = new Set<string>()
  for (const match of stripped.matchAll(/[A-Za-z_:][\w:]*/g)) {
    const after = stripped.slice(match.index! + match[0].length)
    if (/^\s*\(/.test(after)) continue // a function
    if (KEYWORDS.has(match[0].toLowerCase())) continue
    // Part of a number such as 1e3.
    if (/\d$/.test(stripped.slice(0, match.index!))) continue
    names.add(match[0])
  }
  return names
}

/** Every series name the gateway's registry exposes (histograms: _bucket, _sum, _count). */
async function exposedNames() {
  const names = new Set<string>()
  for (const metric of await registry.getMetricsAsJSON()) {
    names.add(metric.name)
    if (String(metric.type) === 'histogram') {
      for (const suffix of ['_bucket', '_sum', '_count']) names.add(`${metric.name}${suffix}`)
    }
  }
  return names
}

test.group('Prometheus alerts and their runbook', () => {
  test('every alert has a summary and a runbook_url into docs/operations.md', async ({
    assert,
  }) => {
    const rules = await alertRules()
    assert.isAbove(rules.length, 15)
    for (const rule of rules) {
      assert.isString(rule.annotations?.summary, `${rule.alert}: summary`)
      assert.match(
        rule.annotations?.runbook_url ?? '',
        /^docs\/operations\.md#[a-z0-9-]+$/,
        `${rule.alert}: runbook_url`
      )
    }
  })

  test('every runbook_url anchor is a heading of docs/operations.md', async ({ assert }) => {
    const anchors = headingAnchors(await readFile(new URL('docs/operations.md', ROOT), 'utf8'))
    const missing = (await alertRules())
      .map((rule) => ({ alert: rule.alert, anchor: rule.annotations!.runbook_url.split('#')[1] }))
      .filter(({ anchor }) => !anchors.has(anchor))
    assert.deepEqual(missing, [], 'runbook entries missing from docs/operations.md')
  })

  test('every metric an alert reads is one the gateway exposes', async ({ assert }) => {
    const exposed = await exposedNames()
    const used = new Set<string>()
    for (const rule of await alertRules()) {
      for (const name of metricNamesIn(rule.expr)) {
        used.add(name)
        assert.isTrue(
          exposed.has(name) || PROMETHEUS_SERIES.has(name),
          `${rule.alert} reads ${name}, which the gateway does not expose`
        )
      }
    }
    // The extraction itself finds names (a broken one would pass vacuously).
    assert.includeMembers(
      [...used],
      ['up', 'gateway_http_requests_total', 'gateway_http_request_duration_seconds_bucket']
    )
  })

  test('the Grafana dashboard is valid JSON and reads only exposed metrics', async ({ assert }) => {
    const text = await readFile(new URL('monitoring/grafana/gateway.json', ROOT), 'utf8')
    const dashboard = JSON.parse(text) as {
      templating: { list: Array<{ name: string; type: string }> }
      panels: Array<{ targets?: Array<{ expr: string }> }>
    }
    assert.deepInclude(
      dashboard.templating.list.map(({ name, type }) => ({ name, type })),
      { name: 'datasource', type: 'datasource' }
    )
    const exposed = await exposedNames()
    const exprs = dashboard.panels.flatMap((panel) => panel.targets ?? []).map((t) => t.expr)
    assert.isAbove(exprs.length, 20)
    for (const expr of exprs) {
      for (const name of metricNamesIn(expr)) assert.isTrue(exposed.has(name), `${expr}: ${name}`)
    }
  })

  test('the metric names of an expression', ({ assert }) => {
    assert.sameMembers(
      [
        ...metricNamesIn(
          'histogram_quantile(0.99, sum by (le, route) (rate(a_bucket{route!="x"}[5m]))) > 1e3 and on(queue) b_total offset 5m'
        ),
      ],
      ['a_bucket', 'b_total']
    )
  })
})
