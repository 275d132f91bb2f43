package bolt

import (
	"bytes"
	"encoding/binary"

	bbolt "go.etcd.io/bbolt"

	"payouts/rules"
)

// The list index (bLists) holds one key per payout, merchantId 0 stage 0 status 0 be64(id):
// a merchant's payouts in one stage and status make a run of keys in id order. A create
// writes one key and a step that changes the status moves it. A listing by status walks
// that status's runs, by stage the stage's runs, and of all a merchant's payouts every run of
// the merchant, merged by id: a handful of runs, the pairs of stage and status the merchant's
// payouts are in.
//
// It replaced three indexes (a merchant's payouts, by stage, by status), each written by
// every create and moved by the steps: bbolt copies each leaf page a write touches into
// memory, about 64 bytes for each of its keys, and half again as much when the key is new,
// so that each index cost a payout about 11 KiB of garbage over its life
// (TestPayoutLifeAllocations).

// listKey is a payout's key in the list index.
func listKey(id int64, merchantID string, stage rules.Stage, status rules.Status) []byte {
	return indexKey(id, merchantID, string(stage), string(status))
}

// listRun is one run of keys, prefix be64(id), walked by its own cursor.
type listRun struct {
	c      *bbolt.Cursor
	prefix []byte
	k      []byte // the current key; nil past the run
}

// at makes k the run's current key if it is one of the run's.
func (r *listRun) at(k []byte) {
	if k != nil && len(k) == len(r.prefix)+8 && bytes.HasPrefix(k, r.prefix) {
		r.k = k
		return
	}
	r.k = nil
}

// listMerge walks the ids of several runs as one list, newest first (last, then step) or
// oldest first (first, then step).
type listMerge struct {
	runs []listRun
	cur  int // the run of the current id; -1 past the end
	desc bool
}

// newListMerge finds the runs of a merchant's payouts in the stage and the status given
// (either empty: any).
func newListMerge(tx *bbolt.Tx, merchantID string, stage rules.Stage, status rules.Status) *listMerge {
	m := &listMerge{cur: -1}
	if old := oldListRun(tx, merchantID, stage, status); old != nil {
		m.runs = append(m.runs, *old)
		return m
	}
	b := tx.Bucket(bLists)
	base := append([]byte(merchantID), 0)
	c := b.Cursor()
	for k, _ := c.Seek(base); k != nil && bytes.HasPrefix(k, base); {
		g, rest, ok := bytes.Cut(k[len(base):], []byte{0})
		st, id, ok2 := bytes.Cut(rest, []byte{0})
		if !ok || !ok2 || len(id) != 8 { // not a key this file writes: passed over
			k, _ = c.Next()
			continue
		}
		run := k[:len(k)-8] // merchantId 0 stage 0 status 0
		if (stage == "" || string(g) == string(stage)) && (status == "" || string(st) == string(status)) {
			m.runs = append(m.runs, listRun{c: b.Cursor(), prefix: bytes.Clone(run)})
		}
		// Past the run: its prefix with the last NUL made 1 sorts after all its keys and
		// before the next pair's.
		past := bytes.Clone(run)
		past[len(past)-1] = 1
		k, _ = c.Seek(past)
	}
	return m
}

// oldListRun is the run that serves a listing in a file of the layout before the list
// index, opened read-only (the upgrade runs when the server opens it), or whose upgrade a
// crash interrupted: the old indexes stay whole until the upgrade ends. nil in a file of
// this layout.
func oldListRun(tx *bbolt.Tx, merchantID string, stage rules.Stage, status rules.Status) *listRun {
	b := tx.Bucket(bByStatus)
	if b == nil {
		return nil
	}
	prefix := key(merchantID, string(status))
	switch {
	case status != "":
	case stage != "":
		b, prefix = tx.Bucket(bByStage), key(merchantID, string(stage))
	default:
		b, prefix = tx.Bucket(bByMerch), []byte(merchantID)
	}
	if b == nil {
		return nil
	}
	return &listRun{c: b.Cursor(), prefix: append(prefix, 0)}
}

// last places each run on its newest id below before (0: its newest), and returns the
// newest of them; ok is false when there is none.
func (m *listMerge) last(before int64) (id int64, ok bool) {
	m.desc = true
	for i := range m.runs {
		r := &m.runs[i]
		var k []byte
		if before > 0 {
			k, _ = r.c.Seek(binary.BigEndian.AppendUint64(bytes.Clone(r.prefix), uint64(before)))
		} else {
			k, _ = r.c.Seek(append(bytes.Clone(r.prefix), 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff))
		}
		if k == nil {
			k, _ = r.c.Last()
		} else {
			k, _ = r.c.Prev()
		}
		r.at(k)
	}
	return m.pick()
}

// first places each run on its oldest id, and returns the oldest of them.
func (m *listMerge) first() (id int64, ok bool) {
	m.desc = false
	for i := range m.runs {
		r := &m.runs[i]
		k, _ := r.c.Seek(r.prefix)
		r.at(k)
	}
	return m.pick()
}

// step moves past the current id and returns the next, in the direction of last or first.
func (m *listMerge) step() (id int64, ok bool) {
	if m.cur < 0 {
		return 0, false
	}
	r := &m.runs[m.cur]
	var k []byte
	if m.desc {
		k, _ = r.c.Prev()
	} else {
		k, _ = r.c.Next()
	}
	r.at(k)
	return m.pick()
}

// pick makes the run with the newest (or oldest) current id the current run.
func (m *listMerge) pick() (int64, bool) {
	m.cur = -1
	var best uint64
	for i := range m.runs {
		k := m.runs[i].k
		if k == nil {
			continue
		}
		id := binary.BigEndian.Uint64(k[len(k)-8:])
		if m.cur < 0 || m.desc && id > best || !m.desc && id < best {
			m.cur, best = i, id
		}
	}
	return int64(best), m.cur >= 0
}
