/*
 * Dashboard charts (Chart.js, served from node_modules by the back-office).
 * The figures come from the page's <script type="application/json"
 * id="dashboard-data"> block; the tables under the charts show the same
 * numbers without JavaScript. No inline script: the CSP allows only
 * scripts from the gateway itself.
 */
;(function () {
  // A new platform narrows the merchant list: reload with it at once, the
  // merchant cleared (it may be of another platform). Without JavaScript,
  // Apply does the same.
  var platform = document.getElementById('filter-platform')
  var merchant = document.getElementById('filter-merchant')
  if (!platform || !merchant) return
  platform.addEventListener('change', function () {
    merchant.value = ''
    platform.form.submit()
  })
})()
;(function () {
  var source = document.getElementById('dashboard-data')
  if (!source || typeof window.Chart === 'undefined') return
  var data = JSON.parse(source.textContent)
  var Chart = window.Chart
  var colors = {
    paid: '#0b6e4f',
    expired: '#d97706',
    other: '#98a2b3',
    rate: '#1d4ed8',
    payouts: '#6941c6',
    ages: ['#12b76a', '#84cc16', '#f79009', '#d92d20'],
  }
  Chart.defaults.font.family = 'system-ui, -apple-system, "Segoe UI", "Noto Sans Thai", sans-serif'
  Chart.defaults.font.size = 12
  Chart.defaults.color = '#5b6470'
  Chart.defaults.animation = false
  Chart.defaults.maintainAspectRatio = false
  Chart.defaults.plugins.legend.labels.boxWidth = 12
  var baht = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 })
  var grid = { color: '#eef0f3' }

  function draw(id, config) {
    var canvas = document.getElementById(id)
    if (canvas) new Chart(canvas, config)
  }

  draw('chart-deposits', {
    data: {
      labels: data.labels,
      datasets: [
        {
          type: 'bar',
          label: 'Paid',
          data: data.deposits.paid,
          backgroundColor: colors.paid,
          stack: 'orders',
          yAxisID: 'y',
        },
        {
          type: 'bar',
          label: 'Expired',
          data: data.deposits.expired,
          backgroundColor: colors.expired,
          stack: 'orders',
          yAxisID: 'y',
        },
        {
          type: 'bar',
          label: 'Open or other',
          data: data.deposits.other,
          backgroundColor: colors.other,
          stack: 'orders',
          yAxisID: 'y',
        },
        {
          type: 'line',
          label: 'Success rate %',
          data: data.deposits.successRate,
          borderColor: colors.rate,
          backgroundColor: colors.rate,
          yAxisID: 'rate',
          tension: 0.25,
          spanGaps: true,
        },
      ],
    },
    options: {
      scales: {
        x: { stacked: true, grid: { display: false } },
        y: {
          stacked: true,
          beginAtZero: true,
          grid: grid,
          title: { display: true, text: 'orders' },
        },
        rate: {
          position: 'right',
          min: 0,
          max: 100,
          grid: { display: false },
          title: { display: true, text: '%' },
        },
      },
    },
  })

  draw('chart-volume', {
    type: 'bar',
    data: {
      labels: data.labels,
      datasets: [
        { label: 'Deposits paid', data: data.volume.deposits, backgroundColor: colors.paid },
        { label: 'Payouts sent', data: data.volume.payouts, backgroundColor: colors.payouts },
      ],
    },
    options: {
      scales: {
        x: { grid: { display: false } },
        y: {
          beginAtZero: true,
          // With no volume at all Chart.js would label 0..1 in fifths, printed
          // as whole baht (0, 0, 1, 1...): give the empty chart a sensible scale.
          suggestedMax: 1000,
          grid: grid,
          ticks: {
            precision: 0,
            callback: function (value) {
              return baht.format(value)
            },
          },
        },
      },
      plugins: {
        tooltip: {
          callbacks: {
            label: function (item) {
              return (
                item.dataset.label +
                ': ' +
                item.parsed.y.toLocaleString('en-US', {
                  minimumFractionDigits: 2,
                  maximumFractionDigits: 2,
                }) +
                ' THB'
              )
            },
          },
        },
      },
    },
  })

  draw('chart-matching', {
    type: 'line',
    data: {
      labels: data.labels,
      datasets: [
        {
          label: 'Order to match',
          data: data.matching.orderToMatch,
          borderColor: colors.paid,
          backgroundColor: colors.paid,
          tension: 0.25,
          spanGaps: true,
        },
        {
          label: 'Bank line to match',
          data: data.matching.lineToMatch,
          borderColor: colors.rate,
          backgroundColor: colors.rate,
          tension: 0.25,
          spanGaps: true,
        },
      ],
    },
    options: {
      scales: {
        x: { grid: { display: false } },
        y: { beginAtZero: true, grid: grid, title: { display: true, text: 'minutes' } },
      },
    },
  })

  draw('chart-review', {
    type: 'bar',
    data: {
      labels: data.review.queues.map(function (item) {
        return item.label
      }),
      datasets: data.review.buckets.map(function (bucket, index) {
        return {
          label: bucket,
          data: data.review.queues.map(function (item) {
            return item.counts[index]
          }),
          backgroundColor: colors.ages[index % colors.ages.length],
        }
      }),
    },
    options: {
      indexAxis: 'y',
      scales: {
        x: { stacked: true, beginAtZero: true, grid: grid, ticks: { precision: 0 } },
        y: { stacked: true, grid: { display: false } },
      },
    },
  })
})()
