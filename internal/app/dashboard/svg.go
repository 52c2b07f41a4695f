package dashboard

import (
	"fmt"
	"html/template"
	"math"
	"strings"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
)

// point is one sample of a plotted series.
type point struct {
	At time.Time
	V  float64
}

type series struct {
	Name   string
	Points []point
}

// palette colours the series of a chart in order.
var palette = []string{"#2563eb", "#dc2626", "#16a34a", "#9333ea", "#ea580c", "#0891b2", "#ca8a04", "#db2777"}

// lineChart draws ss over time as an inline SVG of w×h pixels, the y axis
// from 0 to the largest value, labelled with label; a note when there is
// nothing to draw yet.
func lineChart(ss []series, w, h int, label func(float64) string) template.HTML {
	var first, last time.Time
	top := 0.0
	n := 0
	for _, s := range ss {
		for _, p := range s.Points {
			if math.IsNaN(p.V) {
				continue
			}
			n++
			if first.IsZero() || p.At.Before(first) {
				first = p.At
			}
			if p.At.After(last) {
				last = p.At
			}
			top = math.Max(top, p.V)
		}
	}
	if n == 0 {
		return template.HTML(`<p class="muted">No samples yet: the plot fills as the dashboard samples.</p>`)
	}
	if top == 0 {
		top = 1
	}
	span := last.Sub(first).Seconds()
	if span <= 0 {
		span = 1
	}
	const left, bottom, pad = 56, 18, 6
	pw, ph := float64(w-left-pad), float64(h-bottom-pad)
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart" viewBox="0 0 %d %d" width="%d" height="%d" role="img">`, w, h, w, h)
	fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" class="axis"/>`, left, pad, left, h-bottom)
	fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" class="axis"/>`, left, h-bottom, w-pad, h-bottom)
	fmt.Fprintf(&b, `<text x="%d" y="%d" class="tick" text-anchor="end">%s</text>`, left-4, pad+8, template.HTMLEscapeString(label(top)))
	fmt.Fprintf(&b, `<text x="%d" y="%d" class="tick" text-anchor="end">%s</text>`, left-4, h-bottom, template.HTMLEscapeString(label(0)))
	fmt.Fprintf(&b, `<text x="%d" y="%d" class="tick">%s ago</text>`, left, h-4, template.HTMLEscapeString(age(first)))
	fmt.Fprintf(&b, `<text x="%d" y="%d" class="tick" text-anchor="end">now</text>`, w-pad, h-4)
	for i, s := range ss {
		colour := palette[i%len(palette)]
		var pts []string
		for _, p := range s.Points {
			if math.IsNaN(p.V) {
				continue
			}
			x := float64(left) + pw*p.At.Sub(first).Seconds()/span
			y := float64(pad) + ph*(1-p.V/top)
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", x, y))
		}
		if len(pts) == 1 {
			pts = append(pts, pts[0])
		}
		fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="1.6" points="%s"><title>%s</title></polyline>`,
			colour, strings.Join(pts, " "), template.HTMLEscapeString(s.Name))
	}
	b.WriteString(`</svg><div class="legend">`)
	for i, s := range ss {
		fmt.Fprintf(&b, `<span><i style="background:%s"></i>%s</span>`, palette[i%len(palette)], template.HTMLEscapeString(s.Name))
	}
	b.WriteString(`</div>`)
	return template.HTML(b.String()) //nolint:gosec // every text in it is escaped above
}

// bucketChart draws a cumulative histogram's observations per bucket as
// bars (each bucket's own count), labelled with the bucket's upper bound.
func bucketChart(h histogram, w, hgt int) template.HTML {
	if h.Count == 0 {
		return template.HTML(`<p class="muted">No observations yet.</p>`)
	}
	counts := make([]float64, len(h.Buckets))
	top := 0.0
	for i := range h.Buckets {
		counts[i] = h.Buckets[i]
		if i > 0 {
			counts[i] -= h.Buckets[i-1]
		}
		top = math.Max(top, counts[i])
	}
	const bottom = 16
	bw := float64(w) / float64(len(counts))
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart" viewBox="0 0 %d %d" width="%d" height="%d" role="img">`, w, hgt, w, hgt)
	for i, c := range counts {
		bh := float64(hgt-bottom) * c / math.Max(top, 1)
		x := float64(i) * bw
		fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" class="bar"><title>≤ %s: %.0f</title></rect>`,
			x+1, float64(hgt-bottom)-bh, bw-2, bh, template.HTMLEscapeString(seconds(h.Bounds[i])), c)
		if i%2 == 0 {
			fmt.Fprintf(&b, `<text x="%.1f" y="%d" class="tick">%s</text>`, x+1, hgt-3, template.HTMLEscapeString(shortSeconds(h.Bounds[i])))
		}
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String()) //nolint:gosec // every text in it is escaped above
}

func shortSeconds(v float64) string {
	if math.IsInf(v, 1) {
		return "+Inf"
	}
	return strings.ReplaceAll(seconds(v), " ", "")
}

// metricText is one FederatedHPA metric's current value, as kubectl get
// hpa shows it.
func metricText(m autoscalingv2.MetricStatus) string {
	switch {
	case m.Resource != nil:
		if u := m.Resource.Current.AverageUtilization; u != nil {
			return fmt.Sprintf("%s %d%%", m.Resource.Name, *u)
		}
		if v := m.Resource.Current.AverageValue; v != nil {
			return fmt.Sprintf("%s %s", m.Resource.Name, v.String())
		}
	case m.Pods != nil && m.Pods.Current.AverageValue != nil:
		return fmt.Sprintf("%s %s", m.Pods.Metric.Name, m.Pods.Current.AverageValue.String())
	case m.Object != nil && m.Object.Current.Value != nil:
		return fmt.Sprintf("%s %s", m.Object.Metric.Name, m.Object.Current.Value.String())
	case m.External != nil && m.External.Current.Value != nil:
		return fmt.Sprintf("%s %s", m.External.Metric.Name, m.External.Current.Value.String())
	case m.External != nil && m.External.Current.AverageValue != nil:
		return fmt.Sprintf("%s %s", m.External.Metric.Name, m.External.Current.AverageValue.String())
	}
	return string(m.Type)
}
