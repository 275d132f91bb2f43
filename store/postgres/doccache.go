package postgres

import (
	"bytes"
	"sync"

	"payouts/rules"
)

// readDocs keeps the payouts PayoutsByID decoded, with the documents they were decoded from,
// until the lifecycle round that read them locks them (UpdatePayouts): a payout whose locked
// document is byte for byte the one read is not decoded again. A round reads the payouts
// waiting on a rail before its transaction (to ask the rail) and then locks and steps them,
// so each such payout was decoded twice a round; decoding is most of a round's CPU.
type readDocs struct {
	mu sync.Mutex
	m  map[int64]readDoc
}

type readDoc struct {
	doc []byte
	p   *rules.Payout // a copy of its own: the caller of PayoutsByID may change what it got
}

// maxReadDocs bounds the payouts kept: reads that no round follows (the API's) are
// forgotten when it is reached.
const maxReadDocs = 4096

func (r *readDocs) put(id int64, doc []byte, p *rules.Payout) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.m == nil || len(r.m) >= maxReadDocs {
		r.m = make(map[int64]readDoc)
	}
	r.m[id] = readDoc{doc: doc, p: p.Clone()}
}

// decode is the payout of doc: the one read with the same document (taken), else decoded.
func (r *readDocs) decode(id int64, doc []byte) (*rules.Payout, error) {
	r.mu.Lock()
	d, ok := r.m[id]
	if ok {
		delete(r.m, id)
	}
	r.mu.Unlock()
	if ok && bytes.Equal(d.doc, doc) {
		return d.p, nil
	}
	return decodePayout(id, doc)
}
