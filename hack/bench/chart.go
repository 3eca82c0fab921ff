package main

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"math"
	"time"

	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"
)

// The chart: six panels drawn with the standard library and basicfont, no plotting library.
var (
	white  = color.RGBA{255, 255, 255, 255}
	black  = color.RGBA{30, 30, 30, 255}
	grey   = color.RGBA{200, 200, 200, 255}
	red    = color.RGBA{200, 40, 40, 255}
	series = []color.RGBA{{31, 119, 180, 255}, {255, 127, 14, 255}, {44, 160, 44, 255}}
)

type canvas struct{ *image.RGBA }

func (c canvas) fill(r image.Rectangle, col color.Color) {
	draw.Draw(c.RGBA, r, &image.Uniform{col}, image.Point{}, draw.Src)
}

func (c canvas) text(x, y int, s string, col color.Color) {
	d := &font.Drawer{Dst: c.RGBA, Src: image.NewUniform(col), Face: basicfont.Face7x13, Dot: fixed.P(x, y)}
	d.DrawString(s)
}

func textWidth(s string) int { return font.MeasureString(basicfont.Face7x13, s).Ceil() }

// line draws a line of the given thickness; dash > 0 draws it dashed.
func (c canvas) line(x0, y0, x1, y1 int, col color.Color, thick, dash int) {
	dx, dy := x1-x0, y1-y0
	steps := max(abs(dx), abs(dy), 1)
	for i := 0; i <= steps; i++ {
		if dash > 0 && (i/dash)%2 == 1 {
			continue
		}
		x := x0 + dx*i/steps
		y := y0 + dy*i/steps
		c.fill(image.Rect(x-thick/2, y-thick/2, x-thick/2+thick, y-thick/2+thick), col)
	}
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// axis is a value axis from zero to a round maximum.
type axis struct {
	max, step float64
}

func niceAxis(v float64) axis {
	if v <= 0 {
		v = 1
	}
	raw := v / 4
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	return axis{max: step * math.Ceil(v/step), step: step}
}

func label(v float64) string {
	if v == math.Trunc(v) {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.1f", v)
}

// panel is one plot: a frame, a title, and a plot area with a value axis.
type panel struct {
	c     canvas
	area  image.Rectangle
	y     axis
	title string
}

func newPanel(c canvas, r image.Rectangle, title, unit string, ymax float64) panel {
	p := panel{c: c, title: title, y: niceAxis(ymax)}
	p.area = image.Rect(r.Min.X+60, r.Min.Y+50, r.Max.X-14, r.Max.Y-40)
	c.text(r.Min.X+10, r.Min.Y+16, title, black)
	c.text(r.Min.X+10, r.Min.Y+30, unit, color.RGBA{90, 90, 90, 255})
	for v := 0.0; v <= p.y.max+p.y.step/2; v += p.y.step {
		y := p.yPix(v)
		c.line(p.area.Min.X, y, p.area.Max.X, y, grey, 1, 0)
		s := label(v)
		c.text(p.area.Min.X-6-textWidth(s), y+4, s, black)
	}
	c.line(p.area.Min.X, p.area.Min.Y, p.area.Min.X, p.area.Max.Y, black, 1, 0)
	c.line(p.area.Min.X, p.area.Max.Y, p.area.Max.X, p.area.Max.Y, black, 1, 0)
	return p
}

func (p panel) yPix(v float64) int {
	v = math.Max(0, math.Min(v, p.y.max))
	return p.area.Max.Y - int(v/p.y.max*float64(p.area.Dy()))
}

// target draws a dashed red line at v with a label.
func (p panel) target(v float64, name string) {
	if v > p.y.max {
		return
	}
	y := p.yPix(v)
	p.c.line(p.area.Min.X, y, p.area.Max.X, y, red, 2, 6)
	p.c.text(p.area.Min.X+4, y-4, name, red)
}

// bars draws one bar per value, labelled below and valued above.
func (p panel) bars(names []string, values []float64, format func(float64) string) {
	colors := make([]int, len(values))
	for i := range colors {
		colors[i] = i
	}
	p.coloredBars(names, values, colors, format)
}

// coloredBars is bars with each bar's colour chosen: colors[i] indexes the series colours.
func (p panel) coloredBars(names []string, values []float64, colors []int, format func(float64) string) {
	n := len(values)
	if n == 0 {
		return
	}
	slot := p.area.Dx() / n
	w := slot * 5 / 10
	for i, v := range values {
		x := p.area.Min.X + slot*i + (slot-w)/2
		y := p.yPix(v)
		if y >= p.area.Max.Y {
			y = p.area.Max.Y - 1
		}
		p.c.fill(image.Rect(x, y, x+w, p.area.Max.Y), series[colors[i]%len(series)])
		s := format(v)
		p.c.text(x+w/2-textWidth(s)/2, y-4, s, black)
		p.c.text(x+w/2-textWidth(names[i])/2, p.area.Max.Y+16, names[i], black)
	}
}

// lines draws series of (x, y) points over a linear x axis from 0 to xmax.
func (p panel) lines(xs []float64, xmax float64, ys [][]float64, names []string) {
	xPix := func(x float64) int { return p.area.Min.X + int(x/xmax*float64(p.area.Dx()-10)) }
	for _, x := range xs {
		s := label(x)
		p.c.text(xPix(x)-textWidth(s)/2, p.area.Max.Y+16, s, black)
	}
	p.c.text(p.area.Min.X+p.area.Dx()/2-20, p.area.Max.Y+32, "clusters", black)
	for si, vals := range ys {
		col := series[si%len(series)]
		for i := range vals {
			x, y := xPix(xs[i]), p.yPix(vals[i])
			p.c.fill(image.Rect(x-3, y-3, x+4, y+4), col)
			if i > 0 {
				// Every other series dashed, so series that coincide stay visible.
				p.c.line(xPix(xs[i-1]), p.yPix(vals[i-1]), x, y, col, 2, 5*(si%2))
			}
		}
		lx, ly := p.area.Max.X-90, p.area.Min.Y+14+si*15
		p.c.fill(image.Rect(lx, ly-8, lx+12, ly), col)
		p.c.text(lx+16, ly, names[si], black)
	}
}

func msf(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func drawChart(res *results) ([]byte, error) {
	const w, h, cols, rows = 1260, 720, 3, 2
	c := canvas{image.NewRGBA(image.Rect(0, 0, w, h))}
	c.fill(c.Bounds(), white)
	c.text(14, 22, fmt.Sprintf("app-status benchmark, %s, %d CPUs, %s (see benchmark.md)", res.Machine.Date.Format("2006-01-02"), res.Machine.CPUs, gib(res.Machine.MemTotal)), black)
	cell := func(i int) image.Rectangle {
		cw, ch := w/cols, (h-34)/rows
		x, y := (i%cols)*cw, 34+(i/cols)*ch
		return image.Rect(x+4, y+4, x+cw-4, y+ch-4)
	}
	for i := range cols * rows {
		r := cell(i)
		c.line(r.Min.X, r.Min.Y, r.Max.X, r.Min.Y, grey, 1, 0)
	}
	fmtMs := func(v float64) string { return ms(time.Duration(v * float64(time.Millisecond))) }
	toolNames := []string{toolAppStatus, toolPoller, toolKubectl}
	if l := res.Latency; l != nil {
		var vals []float64
		for _, n := range toolNames {
			vals = append(vals, msf(median(l.tool(n).PerCluster)))
		}
		p := newPanel(c, cell(0), "1. Verdict latency after the last object is Current", "p50 per cluster, ms", maxOf(vals))
		p.bars(toolNames, vals, fmtMs)
		p.target(msf(targetP50), "target 100 ms")
	}
	if f := res.FailFast; f != nil {
		var vals []float64
		for _, n := range toolNames {
			vals = append(vals, float64(median(f.tool(n).Run))/float64(time.Second))
		}
		p := newPanel(c, cell(1), "2. Fail-fast: unpullable image to verdict", "median per run, s", maxOf(vals))
		p.bars(toolNames, vals, func(v float64) string { return ms(time.Duration(v * float64(time.Second))) })
	}
	if g := res.Growth; g != nil && len(g.Points) > 0 {
		var xs, getWall, verWall, getRSS, verRSS, getReq, verReq []float64
		for _, pt := range g.Points {
			xs = append(xs, float64(pt.Clusters))
			getWall, verWall = append(getWall, msf(median(pt.Get))), append(verWall, msf(median(pt.Verify)))
			getRSS = append(getRSS, float64(medianInt(pt.GetRSS))/(1<<20))
			verRSS = append(verRSS, float64(medianInt(pt.VerifyRSS))/(1<<20))
			getReq, verReq = append(getReq, pt.GetReq.PerCluster), append(verReq, pt.VerifyReq.PerCluster)
		}
		xmax := float64(maxInt(g.Wanted))
		names := []string{"get", "verify"}
		p := newPanel(c, cell(2), fmt.Sprintf("3/4. Wall time, %d objects per cluster", g.Objects), "ms", math.Max(maxOf(append(getWall, verWall...)), msf(targetWall)))
		p.target(msf(targetWall), "target 2 s")
		p.lines(xs, xmax, [][]float64{getWall, verWall}, names)
		p = newPanel(c, cell(3), "3/4. Peak RSS of app-status", "MiB", math.Max(maxOf(append(getRSS, verRSS...)), 250))
		p.target(250, "target 250 MB")
		p.lines(xs, xmax, [][]float64{getRSS, verRSS}, names)
		p = newPanel(c, cell(4), "3/4. API requests per cluster", "requests (a watch counts one)", maxOf(append(getReq, verReq...)))
		p.lines(xs, xmax, [][]float64{getReq, verReq}, names)
	}
	if s := res.Startup; s != nil {
		vals := []float64{msf(median(s.AppStatus)), msf(median(s.Kubectl))}
		p := newPanel(c, cell(5), "5. Exec to first API request", "p50, ms", math.Max(maxOf(vals), msf(targetStartup)))
		p.bars([]string{toolAppStatus, "kubectl"}, vals, fmtMs)
		p.target(msf(targetStartup), "target 50 ms")
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, c.RGBA); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func maxOf(vs []float64) float64 {
	m := 0.0
	for _, v := range vs {
		m = math.Max(m, v)
	}
	return m
}

func maxInt(xs []int) int {
	m := 0
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}
