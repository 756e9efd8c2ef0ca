// Inline SVG charts drawn at the container's real width (text stays legible on a phone), redrawn on resize.

import { dayInZone, formatCalendarDay, formatHourMinute, formatNumber, hourInZone, t } from "./i18n.ts"
import { type Child, h, svg } from "./ui.ts"

export const palette = [
  "#2563eb",
  "#d97706",
  "#059669",
  "#db2777",
  "#7c3aed",
  "#0891b2",
  "#65a30d",
  "#dc2626"
]

/** Four whole-number steps of 1, 2, 2.5 or 5 × 10^k: counts never get fractional ticks. */
const niceMax = (value: number) => {
  const raw = Math.max(1, value / 4)
  const power = 10 ** Math.floor(Math.log10(raw))
  const factors = power >= 10 ? [1, 2, 2.5, 5, 10] : [1, 2, 5, 10]
  const step = factors.map((factor) => factor * power).find((candidate) => candidate >= raw) ?? 10 * power
  return step * 4
}

/** Mounts a chart that re-renders when its box changes width. */
const responsive = (label: string, render: (width: number) => SVGSVGElement) => {
  const figure = h("div", { class: "chart", role: "img", "aria-label": label })
  let lastWidth = 0
  const draw = () => {
    const width = Math.max(280, Math.floor(figure.clientWidth))
    if (width === lastWidth) return
    lastWidth = width
    figure.replaceChildren(render(width))
  }
  const observer = new ResizeObserver(draw)
  observer.observe(figure)
  queueMicrotask(draw)
  return figure
}

/** Where a chart of this width draws: the margins leave room for the axes' labels. */
const plotArea = (width: number) => {
  const height = 220
  return { height, left: 40, right: width - 12, top: 12, bottom: height - 28 }
}

const axisY = (max: number, top: number, bottom: number, left: number, right: number, ticks = 4) =>
  Array.from({ length: ticks + 1 }, (_, index) => {
    const value = (max / ticks) * index
    const y = bottom - ((bottom - top) / ticks) * index
    return svg(
      "g",
      { class: "tick" },
      svg("line", { x1: left, x2: right, y1: y, y2: y, class: index === 0 ? "axis" : "grid" }),
      svg(
        "text",
        { x: left - 6, y: y + 4, "text-anchor": "end" },
        Number.isInteger(value) ? String(value) : value.toFixed(1)
      )
    )
  })

/**
 * Requests per minute per origin over the last 24 hours: one line per origin, minutes without requests at zero.
 */
export const requestsChart = (
  points: ReadonlyArray<{
    readonly minute: string
    readonly origin_id: string | null
    readonly label: string | null
    readonly count: number
  }>,
  now = Date.now()
) => {
  const end = Math.floor(now / 60_000) * 60_000
  const start = end - 24 * 60 * 60_000
  const minutes = 24 * 60 + 1
  const series = new Map<string, { label: string; counts: Float64Array }>()
  for (const point of points) {
    const at = new Date(point.minute).getTime()
    if (at < start || at > end) continue
    const key = point.origin_id ?? "unattributed"
    let entry = series.get(key)
    if (entry === undefined) {
      entry = { label: point.label ?? t.charts.unattributed, counts: new Float64Array(minutes) }
      series.set(key, entry)
    }
    const slot = Math.round((at - start) / 60_000)
    entry.counts[slot] = (entry.counts[slot] ?? 0) + point.count
  }
  const list = [...series.values()].sort((a, b) => a.label.localeCompare(b.label))
  let peak = 0
  let total = 0
  for (const entry of list) {
    for (const count of entry.counts) {
      peak = Math.max(peak, count)
      total += count
    }
  }
  const summary =
    list.length === 0
      ? t.charts.noRequests
      : t.charts.requestsSummary(list.length, formatNumber(total), formatNumber(peak))
  const max = niceMax(peak)
  const chart = responsive(summary, (width) => {
    const { height, left, right, top, bottom } = plotArea(width)
    const x = (index: number) => left + ((right - left) * index) / (minutes - 1)
    const y = (count: number) => bottom - ((bottom - top) * count) / max
    const hourStep = width < 520 ? 6 : 3
    const xTicks: Array<SVGGElement> = []
    const firstHour = Math.ceil(start / 3_600_000) * 3_600_000
    for (let at = firstHour; at <= end; at += 3_600_000) {
      if (hourInZone(new Date(at)) % hourStep !== 0) continue
      const px = x((at - start) / 60_000)
      xTicks.push(
        svg(
          "g",
          { class: "tick" },
          svg("line", { x1: px, x2: px, y1: bottom, y2: bottom + 4, class: "axis" }),
          svg("text", { x: px, y: bottom + 18, "text-anchor": "middle" }, formatHourMinute(new Date(at)))
        )
      )
    }
    const lines = list.map((entry, index) => {
      let d = ""
      for (let minute = 0; minute < minutes; minute++) {
        d += `${minute === 0 ? "M" : "L"}${x(minute).toFixed(1)},${y(entry.counts[minute] ?? 0).toFixed(1)}`
      }
      return svg("path", {
        d,
        class: "series",
        stroke: palette[index % palette.length] ?? "currentColor",
        fill: "none"
      })
    })
    return svg(
      "svg",
      { width, height, viewBox: `0 0 ${width} ${height}`, "aria-hidden": "true", focusable: "false" },
      axisY(max, top, bottom, left, right),
      xTicks,
      lines
    )
  })
  return h(
    "figure",
    { class: "chart-figure" },
    chart,
    legend(
      list.map((entry, index) => [entry.label, palette[index % palette.length] ?? "currentColor"] as const)
    ),
    h("figcaption", { class: "muted" }, summary)
  )
}

const legend = (entries: ReadonlyArray<readonly [label: Child, color: string]>) =>
  entries.length === 0
    ? null
    : h(
        "ul",
        { class: "legend" },
        entries.map(([label, color]) =>
          h(
            "li",
            {},
            svg(
              "svg",
              { width: 12, height: 12, "aria-hidden": "true" },
              svg("rect", { width: 12, height: 12, rx: 2, fill: color })
            ),
            label
          )
        )
      )

/** Leads created and enriched per day (stacked bars), the last 30 days. */
export const leadsChart = (
  days: ReadonlyArray<{ readonly day: string; readonly created: number; readonly enriched: number }>,
  now = Date.now()
) => {
  // The server counts by the organization's local days, so the last bar is its today, not UTC's.
  const [year, month, day] = dayInZone(now).split("-").map(Number) as [number, number, number]
  const byDay = new Map(days.map((entry) => [entry.day.slice(0, 10), entry]))
  const series: Array<{ date: Date; created: number; enriched: number }> = []
  for (let offset = 29; offset >= 0; offset--) {
    const date = new Date(Date.UTC(year, month - 1, day - offset))
    const key = date.toISOString().slice(0, 10)
    const entry = byDay.get(key)
    series.push({ date, created: entry?.created ?? 0, enriched: entry?.enriched ?? 0 })
  }
  const created = series.reduce((sum, entry) => sum + entry.created, 0)
  const enriched = series.reduce((sum, entry) => sum + entry.enriched, 0)
  const summary = t.charts.leadsSummary(formatNumber(created), formatNumber(enriched))
  const max = niceMax(Math.max(...series.map((entry) => entry.created + entry.enriched)))
  const colors = { created: "#2563eb", enriched: "#93c5fd" }
  const chart = responsive(summary, (width) => {
    const { height, left, right, top, bottom } = plotArea(width)
    const slot = (right - left) / series.length
    const barWidth = Math.max(3, slot * 0.7)
    const y = (count: number) => ((bottom - top) * count) / max
    const labelEvery = width < 520 ? 10 : 5
    const bars = series.map((entry, index) => {
      const x = left + slot * index + (slot - barWidth) / 2
      const createdHeight = y(entry.created)
      const enrichedHeight = y(entry.enriched)
      return svg(
        "g",
        {},
        svg(
          "title",
          {},
          t.charts.dayBar(
            formatCalendarDay(entry.date),
            formatNumber(entry.created),
            formatNumber(entry.enriched)
          )
        ),
        svg("rect", {
          x,
          y: bottom - createdHeight,
          width: barWidth,
          height: createdHeight,
          fill: colors.created
        }),
        svg("rect", {
          x,
          y: bottom - createdHeight - enrichedHeight,
          width: barWidth,
          height: enrichedHeight,
          fill: colors.enriched
        }),
        (series.length - 1 - index) % labelEvery === 0
          ? svg(
              "text",
              // the last day's label ends at its bar, so it is not cut at the chart's right edge
              index === series.length - 1
                ? { x: x + barWidth, y: bottom + 18, "text-anchor": "end" }
                : { x: x + barWidth / 2, y: bottom + 18, "text-anchor": "middle" },
              formatCalendarDay(entry.date)
            )
          : null
      )
    })
    return svg(
      "svg",
      { width, height, viewBox: `0 0 ${width} ${height}`, "aria-hidden": "true", focusable: "false" },
      axisY(max, top, bottom, left, right),
      bars
    )
  })
  return h(
    "figure",
    { class: "chart-figure" },
    chart,
    legend([
      [t.charts.created, colors.created],
      [t.charts.enriched, colors.enriched]
    ]),
    h("figcaption", { class: "muted" }, summary)
  )
}
