package serve

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gosr/gosr/ivalue"
)

// batchExec runs the model once on the batched inputs; its outputs are
// tensors the caller owns (copies, not a runtime's values) whose dim 0 is
// the batch's rows (the sum of its requests' dim 0). The inputs are the
// request's own for a batch of one (they may be strided), else the
// worker's contiguous tensors, which the next batch overwrites: exec must
// not keep them.
type batchExec func(ctx context.Context, inputs []*ivalue.Tensor) ([]*ivalue.Tensor, error)

// batcherOptions are a model's dynamic batching settings (config.pbtxt's
// max_batch_size, dynamic_batching and instance_group).
type batcherOptions struct {
	MaxBatchSize        int           // rows (sum of dim 0) per run; < 1 means 1
	MaxQueueDelay       time.Duration // the longest the oldest queued request waits for more
	PreferredBatchSizes []int         // run as soon as a batch reaches one of these (the largest that can be had); those over MaxBatchSize are ignored
	MaxQueueSize        int           // requests waiting; one more gets ErrQueueFull at once; 0 means no limit
	Workers             int           // batches run at the same time (the model's instances); < 1 means 1
	// InputNames and OutputNames name the tensors in error messages
	// (optional: "input 0" for a missing name).
	InputNames, OutputNames []string
}

// batcher is Triton's dynamic batcher: requests with compatible inputs
// (the same count, dtypes and dims after the first) queue until the
// oldest of them has waited MaxQueueDelay, they reach a preferred size or
// MaxBatchSize rows, whichever comes first; then one free batchWorker
// concatenates them along dim 0, runs exec once and hands every request
// its rows of the outputs.
//
// One free worker at a time (the leader) watches the queue; the others
// wait for its place. The leader takes a batch, gives up its place and
// runs the batch, so a request waits past its delay only while every
// worker is running.
type batcher struct {
	o         batcherOptions
	exec      batchExec
	preferred []int // PreferredBatchSizes up to MaxBatchSize

	mu     sync.Mutex
	queue  []*batchRequest // in arrival order
	closed bool

	wake chan struct{} // a request arrived, or close: the leader looks again

	lead  sync.Mutex  // held by the worker that watches the queue
	timer *time.Timer // the leader's wait for the oldest request's delay
	pick  []int       // the leader's scratch: queue indices of the next batch
	heads []int       // and of the oldest request of each group

	workers sync.WaitGroup
}

// A request's state: queued until a worker takes it (under batcher.mu),
// then running until the worker hands over its results (done) or its
// caller goes away (abandoned). The worker recycles an abandoned request,
// the caller any other.
const (
	reqQueued int32 = iota
	reqRunning
	reqDone
	reqAbandoned
)

type batchRequest struct {
	inputs []*ivalue.Tensor
	rows   int
	enq    time.Time
	state  atomic.Int32
	run    *batchRun     // the batch it runs in, once taken
	done   chan struct{} // the results are set (capacity 1, reused)

	outs   []*ivalue.Tensor
	queued time.Duration
	err    error
}

// batchRun is one batch's run: its context is cancelled when every
// request of the batch has gone away, so that the model stops early.
type batchRun struct {
	ctx    context.Context
	cancel context.CancelFunc
	n      int32
	gone   atomic.Int32
}

func (r *batchRun) leave() {
	if r.gone.Add(1) == r.n {
		r.cancel()
	}
}

var batchRequests = sync.Pool{New: func() any { return &batchRequest{done: make(chan struct{}, 1)} }}

func (r *batchRequest) recycle() {
	*r = batchRequest{done: r.done} // state back to reqQueued
	batchRequests.Put(r)
}

// worker is one worker's own memory: its batch and the concatenated
// inputs, reused from batch to batch (exec returns copies, so nothing of
// a batch's inputs outlives its run).
type batchWorker struct {
	reqs  []*batchRequest
	ins   []*ivalue.Tensor
	sizes []int
}

// newBatcher starts o.Workers workers running exec; close stops them.
func newBatcher(o batcherOptions, exec batchExec) *batcher {
	o.MaxBatchSize = max(o.MaxBatchSize, 1)
	o.Workers = max(o.Workers, 1)
	b := &batcher{o: o, exec: exec, wake: make(chan struct{}, 1)}
	b.timer = time.AfterFunc(time.Hour, b.signal)
	b.timer.Stop()
	for _, p := range o.PreferredBatchSizes {
		if p >= 1 && p <= o.MaxBatchSize {
			b.preferred = append(b.preferred, p)
		}
	}
	b.workers.Add(o.Workers)
	for range o.Workers {
		go b.work()
	}
	return b
}

// close stops accepting requests (they get CodeUnavailable), runs what is
// queued without waiting out its delay, and returns when the workers are
// done. It may be called more than once.
func (b *batcher) close() {
	b.mu.Lock()
	b.closed = true
	b.mu.Unlock()
	b.signal()
	b.workers.Wait()
}

// pending is the number of requests queued (not yet running).
func (b *batcher) pending() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.queue)
}

func (b *batcher) signal() {
	select {
	case b.wake <- struct{}{}:
	default: // the leader has a wake-up waiting already
	}
}

// submit queues one request's inputs, which share dim 0 (the request's
// rows, 1 to MaxBatchSize), waits for its rows of the batch's outputs
// and returns them (views of the batch's outputs, which the caller owns)
// and how long it was queued before its batch started. A ctx done while
// queued takes the request out of the queue; done while its batch runs,
// submit returns at once and the batch goes on for the others. Errors
// are *Error.
func (b *batcher) submit(ctx context.Context, inputs []*ivalue.Tensor) (outs []*ivalue.Tensor, queued time.Duration, err error) {
	rows, err := b.rowsOf(inputs)
	if err != nil {
		return nil, 0, err
	}
	if err := ctx.Err(); err != nil {
		return nil, 0, asError(err)
	}
	r := batchRequests.Get().(*batchRequest)
	r.inputs, r.rows, r.enq = inputs, rows, time.Now()
	b.mu.Lock()
	switch {
	case b.closed:
		b.mu.Unlock()
		r.recycle()
		return nil, 0, &Error{Code: CodeUnavailable, Msg: "the model is shutting down"}
	case b.o.MaxQueueSize > 0 && len(b.queue) >= b.o.MaxQueueSize:
		b.mu.Unlock()
		r.recycle()
		return nil, 0, ErrQueueFull
	}
	b.queue = append(b.queue, r)
	b.mu.Unlock()
	b.signal()

	select {
	case <-r.done:
	case <-ctx.Done():
		queued = time.Since(r.enq) // r is not ours once abandoned
		if b.abandon(r) {
			return nil, queued, asError(ctx.Err())
		}
		<-r.done // the results came first
	}
	outs, queued, err = r.outs, r.queued, r.err
	r.recycle()
	if err != nil {
		return nil, queued, asError(err)
	}
	return outs, queued, nil
}

// abandon gives up r, whose caller's context is done: it reports false
// when r's results are already set (the caller takes them).
func (b *batcher) abandon(r *batchRequest) bool {
	b.mu.Lock()
	if r.state.Load() == reqQueued {
		if i := slices.Index(b.queue, r); i >= 0 {
			b.queue = slices.Delete(b.queue, i, i+1)
		}
		b.mu.Unlock()
		r.recycle()
		return true
	}
	run := r.run // set under mu with the state; read before r may be recycled
	b.mu.Unlock()
	if r.state.CompareAndSwap(reqRunning, reqAbandoned) {
		run.leave() // the worker recycles r
		return true
	}
	return false
}

// rowsOf checks a request's inputs and returns its rows.
func (b *batcher) rowsOf(inputs []*ivalue.Tensor) (int, error) {
	if len(inputs) == 0 {
		return 0, &Error{Code: CodeInvalidArgument, Msg: "a batched request needs at least one input"}
	}
	rows := 0
	for i, t := range inputs {
		switch {
		case t == nil:
			return 0, errorf(CodeInvalidArgument, "%s: no tensor", tensorName(b.o.InputNames, "input", i))
		case !t.Device().IsHost():
			return 0, errorf(CodeInternal, "%s: a tensor on %v; the batcher concatenates host memory", tensorName(b.o.InputNames, "input", i), t.Device())
		case t.Dim() == 0:
			return 0, errorf(CodeInvalidArgument, "%s: a scalar; a model with max_batch_size %d takes the batch in dim 0", tensorName(b.o.InputNames, "input", i), b.o.MaxBatchSize)
		case i == 0:
			rows = t.Size(0)
			if rows < 1 || rows > b.o.MaxBatchSize {
				return 0, errorf(CodeInvalidArgument, "%s: shape %v: dim 0 (the batch) must be 1 to the model's max_batch_size %d",
					tensorName(b.o.InputNames, "input", i), t.Sizes(), b.o.MaxBatchSize)
			}
		case t.Size(0) != rows:
			return 0, errorf(CodeInvalidArgument, "%s: shape %v: dim 0 (the batch) is %d, and %s's is %d",
				tensorName(b.o.InputNames, "input", i), t.Sizes(), t.Size(0), tensorName(b.o.InputNames, "input", 0), rows)
		}
	}
	return rows, nil
}

func tensorName(names []string, kind string, i int) string {
	if i < len(names) && names[i] != "" {
		return fmt.Sprintf("%s %q", kind, names[i])
	}
	return fmt.Sprintf("%s %d", kind, i)
}

// batchable reports whether a and b may run in one batch: the same
// number of inputs, dtypes and dims but the first.
func batchable(a, b *batchRequest) bool {
	if len(a.inputs) != len(b.inputs) {
		return false
	}
	for i, x := range a.inputs {
		y := b.inputs[i]
		if x.DType() != y.DType() || x.Dim() != y.Dim() {
			return false
		}
		xs, ys := x.Sizes(), y.Sizes()
		for d := 1; d < len(xs); d++ {
			if xs[d] != ys[d] {
				return false
			}
		}
	}
	return true
}

func (b *batcher) work() {
	defer b.workers.Done()
	w := &batchWorker{}
	for {
		b.lead.Lock()
		ok := b.take(w)
		b.lead.Unlock()
		if !ok {
			return
		}
		b.run(w)
	}
}

// take waits for the next batch and moves its requests into w.reqs; it
// reports false once the batcher is closed and its queue empty.
func (b *batcher) take(w *batchWorker) bool {
	for {
		b.mu.Lock()
		if len(b.queue) == 0 {
			closed := b.closed
			b.mu.Unlock()
			if closed {
				return false
			}
			<-b.wake
			// The submitter that woke us handed over its time slice:
			// without a yield the leader takes its one request at once,
			// ahead of the other submitters runnable on this P, and
			// under load every batch is of one request. Yielding lets
			// them queue first; with nothing else runnable it returns
			// at once.
			runtime.Gosched()
			continue
		}
		n, wait := b.plan()
		if n == 0 {
			b.mu.Unlock()
			b.timer.Reset(wait)
			<-b.wake
			b.timer.Stop()
			continue
		}
		run := &batchRun{n: int32(n)}
		run.ctx, run.cancel = context.WithCancel(context.Background())
		k, kept := 0, 0
		for i, r := range b.queue {
			if k < n && b.pick[k] == i {
				r.run = run
				r.state.Store(reqRunning)
				w.reqs = append(w.reqs, r)
				k++
				continue
			}
			b.queue[kept] = r
			kept++
		}
		clear(b.queue[kept:])
		b.queue = b.queue[:kept]
		b.mu.Unlock()
		return true
	}
}

// plan picks the next batch (b.mu held), its queue indices in b.pick,
// and returns how many of them run now, or 0 and how long to wait for
// more. The queue's requests fall in groups of compatible ones; each
// group's batch is its requests in arrival order that fit in MaxBatchSize
// rows. Groups are looked at in the order of their oldest request, and
// the first batch ready runs: a batch that is full (MaxBatchSize rows, or
// the group's next request does not fit) runs whole; else one that
// reaches preferred sizes runs as the largest of them; else it runs whole
// once its oldest request has waited MaxQueueDelay, or at once while
// closing. So a full batch of one shape does not wait behind a lone
// request of another, and the wait is the oldest request's.
func (b *batcher) plan() (n int, wait time.Duration) {
	b.heads = b.heads[:0]
next:
	for s, r := range b.queue {
		for _, h := range b.heads {
			if batchable(b.queue[h], r) {
				continue next // in an older request's group
			}
		}
		b.heads = append(b.heads, s)
		if n := b.planGroup(s); n > 0 {
			return n, 0
		}
	}
	return 0, time.Until(b.queue[0].enq.Add(b.o.MaxQueueDelay))
}

// planGroup picks the batch of the group whose oldest request is
// b.queue[s] into b.pick, and returns how many of it run now (0: none).
func (b *batcher) planGroup(s int) int {
	head := b.queue[s]
	b.pick = b.pick[:0]
	rows, pref := 0, 0
	for i := s; i < len(b.queue); i++ {
		r := b.queue[i]
		if i > s && !batchable(head, r) {
			continue
		}
		if rows+r.rows > b.o.MaxBatchSize {
			return len(b.pick) // full: the next one does not fit
		}
		rows += r.rows
		b.pick = append(b.pick, i)
		for _, p := range b.preferred {
			if rows == p {
				pref = len(b.pick)
			}
		}
		if rows == b.o.MaxBatchSize {
			return len(b.pick)
		}
	}
	if pref > 0 {
		return pref
	}
	if b.o.MaxQueueDelay <= 0 || b.closed || time.Since(head.enq) >= b.o.MaxQueueDelay {
		return len(b.pick)
	}
	return 0
}

// run runs w's batch and hands every request its results.
func (b *batcher) run(w *batchWorker) {
	start := time.Now()
	reqs := w.reqs
	run := reqs[0].run
	rows := 0
	for _, r := range reqs {
		rows += r.rows
	}
	outs, err := b.runBatch(run.ctx, w, rows)
	off := 0
	for _, r := range reqs {
		if r.state.Load() == reqRunning { // else abandoned: nobody reads it
			r.queued = start.Sub(r.enq)
			switch {
			case err != nil:
				r.err = err
			case len(reqs) == 1:
				r.outs = outs
			default:
				r.outs = splitRows(outs, off, r.rows)
			}
		}
		off += r.rows
		if r.state.CompareAndSwap(reqRunning, reqDone) {
			r.done <- struct{}{}
		} else {
			r.recycle()
		}
	}
	run.cancel()
	clear(reqs)
	w.reqs = reqs[:0]
}

// runBatch concatenates the inputs of w's requests, runs exec on them and
// checks its outputs' dim 0.
func (b *batcher) runBatch(ctx context.Context, w *batchWorker, rows int) (outs []*ivalue.Tensor, err error) {
	inputs := w.reqs[0].inputs
	if len(w.reqs) > 1 {
		if inputs, err = w.concat(rows); err != nil {
			return nil, err
		}
	}
	defer func() {
		if p := recover(); p != nil {
			outs, err = nil, errorf(CodeInternal, "the model's run failed: %v", p)
		}
	}()
	outs, err = b.exec(ctx, inputs)
	if err != nil {
		return nil, err
	}
	for i, o := range outs {
		if o == nil || o.Dim() == 0 || o.Size(0) != rows {
			shape := "no tensor"
			if o != nil {
				shape = fmt.Sprintf("shape %v", o.Sizes())
			}
			return nil, errorf(CodeInternal, "%s of a batch of %d requests (%d rows) has %s; dynamic batching needs the batch in dim 0",
				tensorName(b.o.OutputNames, "output", i), len(w.reqs), rows, shape)
		}
	}
	return outs, nil
}

// concat writes the inputs of w's requests one after another along dim 0
// into w's tensors, a whole request's bytes at a time.
func (w *batchWorker) concat(rows int) ([]*ivalue.Tensor, error) {
	first := w.reqs[0].inputs
	for len(w.ins) < len(first) {
		w.ins = append(w.ins, &ivalue.Tensor{})
	}
	for j, x := range first {
		w.sizes = append(append(w.sizes[:0], rows), x.Sizes()[1:]...)
		t := w.ins[j]
		if err := t.ResizeErr(x.DType(), w.sizes); err != nil {
			return nil, errorf(CodeInternal, "batching input %d (%s, %v): %w", j, x.DType(), w.sizes, err)
		}
		dst, off := rawBytes(t), 0
		for _, r := range w.reqs {
			src, err := contiguous(r.inputs[j])
			if err != nil {
				return nil, errorf(CodeInternal, "batching input %d: %w", j, err)
			}
			off += copy(dst[off:], rawBytes(src))
		}
	}
	return w.ins[:len(first)], nil
}

// splitRows returns views of rows [off, off+rows) of outs.
func splitRows(outs []*ivalue.Tensor, off, rows int) []*ivalue.Tensor {
	views := make([]*ivalue.Tensor, len(outs))
	var buf [8]int
	for i, o := range outs {
		sizes := append(buf[:0], o.Sizes()...)
		sizes[0] = rows
		v := &ivalue.Tensor{}
		v.SetView(o, o.Offset()+off*o.Strides()[0], sizes, o.Strides())
		views[i] = v
	}
	return views
}
