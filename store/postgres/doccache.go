package postgres

import (
	"bytes"
	"sync"

	"payouts/rules"
)

// readDocs keeps the payouts PayoutsByID decoded, with the documents they were decoded from,
// and those a lifecycle claim read (DueRead), with the version of the row it read (xmin),
// until the lifecycle round that read them locks them (UpdatePayouts): a payout whose locked
// row is the version read is not sent again, and one whose document is byte for byte the one
// read is not decoded again. A round reads the payouts before its transaction (to ask the
// rails) and then locks and steps them, so each was read and decoded twice a round; decoding
// is most of a round's CPU, and the documents most of what it reads.
type readDocs struct {
	mu sync.Mutex
	m  map[int64]readDoc
}

type readDoc struct {
	doc     []byte
	version int64         // the row's xmin when read by a claim (doc is then nil), else 0
	p       *rules.Payout // a copy of its own: the caller of PayoutsByID may change what it got
}

// maxReadDocs bounds the payouts kept: reads that no round follows (the API's) are
// forgotten when it is reached.
const maxReadDocs = 4096

func (r *readDocs) put(id int64, doc []byte, p *rules.Payout) {
	r.keep(id, readDoc{doc: doc, p: p.Clone()})
}

// putVersion keeps p as read from the row version version.
func (r *readDocs) putVersion(id, version int64, p *rules.Payout) {
	r.keep(id, readDoc{version: version, p: p.Clone()})
}

func (r *readDocs) keep(id int64, d readDoc) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.m == nil || len(r.m) >= maxReadDocs {
		r.m = make(map[int64]readDoc)
	}
	r.m[id] = d
}

// versions takes the payouts of ids kept with the row version they were read from.
func (r *readDocs) versions(ids []int64) map[int64]readDoc {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out map[int64]readDoc
	for _, id := range ids {
		if d, ok := r.m[id]; ok && d.version != 0 {
			if out == nil {
				out = make(map[int64]readDoc, len(ids))
			}
			out[id] = d
			delete(r.m, id)
		}
	}
	return out
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
