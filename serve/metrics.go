package serve

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/gosr/gosr/pyfallback"
)

// metrics are the server's Prometheus metrics: Triton's names where one
// means the same thing (so that Triton's dashboards read gosr), gosr_
// for the rest. The nv_ counters of durations are cumulative
// microseconds, as Triton's are: divide their rates by the request rate.
type metrics struct {
	reg *prometheus.Registry

	success, failure, count, exec     *prometheus.CounterVec
	requestUs, queueUs, computeUs     *prometheus.CounterVec
	pending                           *prometheus.GaugeVec
	latency                           *prometheus.HistogramVec
	managedBytes, instances, batchObs *prometheus.GaugeVec
	batchSize                         *prometheus.HistogramVec
}

func newMetrics() *metrics {
	labels := []string{"model", "version"}
	m := &metrics{reg: prometheus.NewRegistry()}
	counter := func(name, help string, extra ...string) *prometheus.CounterVec {
		c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, append(append([]string(nil), labels...), extra...))
		m.reg.MustRegister(c)
		return c
	}
	gauge := func(name, help string) *prometheus.GaugeVec {
		g := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help}, labels)
		m.reg.MustRegister(g)
		return g
	}
	m.success = counter("nv_inference_request_success", "Inference requests that succeeded.")
	m.failure = counter("nv_inference_request_failure", "Inference requests that failed, by reason (REJECTED: queue full or not ready; CANCELED: client gone or deadline; BACKEND: the model's run; OTHER: a bad request).", "reason")
	m.count = counter("nv_inference_count", "Inferences performed (a batch of n rows counts n).")
	m.exec = counter("nv_inference_exec_count", "Model executions (a batch of requests run together counts 1).")
	m.requestUs = counter("nv_inference_request_duration_us", "Cumulative request duration, from decoded request to encoded response, in microseconds.")
	m.queueUs = counter("nv_inference_queue_duration_us", "Cumulative time requests waited for a runtime or in the batcher, in microseconds.")
	m.computeUs = counter("nv_inference_compute_infer_duration_us", "Cumulative time in model execution, in microseconds.")
	m.pending = gauge("nv_inference_pending_request_count", "Requests queued or running.")
	m.latency = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "gosr_inference_request_duration_seconds", Help: "Request latency inside the server, per model.",
		Buckets: prometheus.ExponentialBuckets(10e-6, 2, 20), // 10 µs to 5 s
	}, labels)
	m.reg.MustRegister(m.latency)
	m.batchSize = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "gosr_inference_batch_rows", Help: "Rows per model execution (dynamic batching).",
		Buckets: prometheus.ExponentialBuckets(1, 2, 10),
	}, labels)
	m.reg.MustRegister(m.batchSize)
	m.managedBytes = gauge("gosr_managed_bytes", "Bytes of planned intermediate tensors across the model's runtimes (the slabs).")
	m.instances = gauge("gosr_model_instances", "Runtimes in the model's pool (instance_group count).")
	m.batchObs = gauge("gosr_max_batch_size", "The model's max_batch_size (0: no batching).")
	m.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// modelMetrics are one model version's series, resolved once so that a
// request does no label lookups.
type modelMetrics struct {
	success, count, exec, requestUs, queueUs, computeUs prometheus.Counter
	rejected, canceled, backend, other                  prometheus.Counter
	pending                                             prometheus.Gauge
	latency, batchRows                                  prometheus.Observer
	m                                                   *metrics
	labels                                              []string
}

func (m *metrics) forModel(name, version string) *modelMetrics {
	l := []string{name, version}
	f := func(reason string) prometheus.Counter { return m.failure.WithLabelValues(name, version, reason) }
	return &modelMetrics{
		success: m.success.WithLabelValues(l...), count: m.count.WithLabelValues(l...), exec: m.exec.WithLabelValues(l...),
		requestUs: m.requestUs.WithLabelValues(l...), queueUs: m.queueUs.WithLabelValues(l...), computeUs: m.computeUs.WithLabelValues(l...),
		rejected: f("REJECTED"), canceled: f("CANCELED"), backend: f("BACKEND"), other: f("OTHER"),
		pending: m.pending.WithLabelValues(l...), latency: m.latency.WithLabelValues(l...), batchRows: m.batchSize.WithLabelValues(l...),
		m: m, labels: l,
	}
}

// fail counts a failed request by its error's reason.
func (mm *modelMetrics) fail(e *Error) {
	switch e.Code {
	case CodeUnavailable:
		mm.rejected.Inc()
	case CodeCanceled, CodeDeadlineExceeded:
		mm.canceled.Inc()
	case CodeInternal:
		mm.backend.Inc()
	default:
		mm.other.Inc()
	}
}

// drop removes a retired version's series.
func (mm *modelMetrics) drop() {
	m, l := mm.m, mm.labels
	for _, v := range []*prometheus.CounterVec{m.success, m.count, m.exec, m.requestUs, m.queueUs, m.computeUs} {
		v.DeleteLabelValues(l...)
	}
	for _, r := range []string{"REJECTED", "CANCELED", "BACKEND", "OTHER"} {
		m.failure.DeleteLabelValues(append(l, r)...)
	}
	m.pending.DeleteLabelValues(l...)
	m.latency.DeleteLabelValues(l...)
	m.batchSize.DeleteLabelValues(l...)
	m.managedBytes.DeleteLabelValues(l...)
	m.instances.DeleteLabelValues(l...)
	m.batchObs.DeleteLabelValues(l...)
}

// registerPython adds the interpreters' metrics: busy seconds per
// interpreter (a counter; its rate is the busy share) and the busy share
// since the interpreters started.
func (m *metrics) registerPython(pm interface {
	Interpreters() []pyfallback.InterpreterInfo
}) {
	start := time.Now()
	busy := prometheus.NewDesc("gosr_python_interpreter_busy_seconds_total", "Time each Python interpreter held its GIL for gosr's calls.", []string{"interpreter"}, nil)
	calls := prometheus.NewDesc("gosr_python_interpreter_calls_total", "Calls each Python interpreter ran.", []string{"interpreter"}, nil)
	share := prometheus.NewDesc("gosr_python_interpreter_busy_share", "Busy time of all interpreters over their number times the time since they started (0 to 1).", nil, nil)
	m.reg.MustRegister(collectorFunc{descs: []*prometheus.Desc{busy, calls, share}, collect: func(ch chan<- prometheus.Metric) {
		infos := pm.Interpreters()
		var total time.Duration
		for _, in := range infos {
			id := strconv.Itoa(in.ID)
			ch <- prometheus.MustNewConstMetric(busy, prometheus.CounterValue, in.Busy.Seconds(), id)
			ch <- prometheus.MustNewConstMetric(calls, prometheus.CounterValue, float64(in.Calls), id)
			total += in.Busy
		}
		s := 0.0
		if el := time.Since(start); len(infos) > 0 && el > 0 {
			s = min(1, total.Seconds()/(el.Seconds()*float64(len(infos))))
		}
		ch <- prometheus.MustNewConstMetric(share, prometheus.GaugeValue, s)
	}})
}

type collectorFunc struct {
	descs   []*prometheus.Desc
	collect func(chan<- prometheus.Metric)
}

func (c collectorFunc) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range c.descs {
		ch <- d
	}
}
func (c collectorFunc) Collect(ch chan<- prometheus.Metric) { c.collect(ch) }
