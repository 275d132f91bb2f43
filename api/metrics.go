package api

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"payouts/rules"
)

// Metrics are the Prometheus metrics served at /metrics.
type Metrics struct {
	reg            *prometheus.Registry
	requests       *prometheus.CounterVec
	latency        *prometheus.HistogramVec
	created        *prometheus.CounterVec
	finished       *prometheus.CounterVec
	OutboxFailures *prometheus.CounterVec
	OutboxSent     *prometheus.CounterVec
}

// NewMetrics registers the service's metrics; outboxDepth is read at each scrape.
func NewMetrics(outboxDepth func() float64) *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry()}
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "payouts_http_requests_total",
		Help: "HTTP requests by route and status."}, []string{"route", "status"})
	m.latency = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "payouts_http_request_duration_seconds",
		Help: "HTTP request latency by route.", Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5}},
		[]string{"route"})
	m.created = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "payouts_created_total",
		Help: "Payouts created, by country and channel."}, []string{"country", "channel"})
	m.finished = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "payouts_finished_total",
		Help: "Payouts that reached SUCCESS or REJECTED, by country, stage and status."}, []string{"country", "stage", "status"})
	m.OutboxFailures = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "payouts_outbox_failures_total",
		Help: "Failed outbox deliveries (retried), by kind."}, []string{"kind"})
	m.OutboxSent = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "payouts_outbox_delivered_total",
		Help: "Outbox events delivered, by kind."}, []string{"kind"})
	m.reg.MustRegister(m.requests, m.latency, m.created, m.finished, m.OutboxFailures, m.OutboxSent,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if outboxDepth != nil {
		m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "payouts_outbox_depth",
			Help: "Events waiting in the outbox."}, outboxDepth))
	}
	return m
}

// Observe counts one finished HTTP request.
func (m *Metrics) Observe(route string, status int, d time.Duration) {
	m.requests.WithLabelValues(route, strconv.Itoa(status)).Inc()
	m.latency.WithLabelValues(route).Observe(d.Seconds())
}

// Created counts a new payout.
func (m *Metrics) Created(_ context.Context, p *rules.Payout) {
	m.created.WithLabelValues(p.Country, string(p.Channel)).Inc()
}

// Finished counts a payout's outcome.
func (m *Metrics) Finished(_ context.Context, p *rules.Payout) {
	m.finished.WithLabelValues(p.Country, string(p.Stage), string(p.Status)).Inc()
}

// Handler serves the metrics.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// AddGauges exports the gauges of src (the storage engine's pool and claims) with every
// scrape.
func (m *Metrics) AddGauges(src rules.GaugeSource) {
	m.reg.MustRegister(gaugeCollector{src})
}

// gaugeCollector reads all of an engine's gauges once per scrape.
type gaugeCollector struct{ src rules.GaugeSource }

func (c gaugeCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, g := range c.src.Gauges() {
		ch <- prometheus.NewDesc(g.Name, g.Help, nil, nil)
	}
}

func (c gaugeCollector) Collect(ch chan<- prometheus.Metric) {
	for _, g := range c.src.Gauges() {
		ch <- prometheus.MustNewConstMetric(prometheus.NewDesc(g.Name, g.Help, nil, nil), prometheus.GaugeValue, g.Value)
	}
}
