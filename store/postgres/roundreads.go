package postgres

import (
	"bytes"

	"payouts/rules"
)

// roundReads takes, from a lifecycle round's reads (rules.RoundReads), what the round read
// of ids: by its claim (DueRead), with the row's version (xmin), or by PayoutsByID, with the
// document. A round reads its payouts before its transaction (to ask the rails) and then
// locks and steps them: a locked row still at the version read is not sent again, and one
// whose document is byte for byte the one read is not decoded again. Decoding is most of a
// round's CPU, and the documents most of what it reads. Nil outside a round.
func roundReads(round *rules.RoundReads, ids []int64) map[int64]rules.RoundRead {
	if round == nil {
		return nil
	}
	var out map[int64]rules.RoundRead
	for _, id := range ids {
		if r, ok := round.Take(id); ok {
			if out == nil {
				out = make(map[int64]rules.RoundRead, len(ids))
			}
			out[id] = r
		}
	}
	return out
}

// readPayout is the payout of the document locked (nil: the row is at the version read):
// the round's own when it read the same, else decoded.
func readPayout(id int64, doc []byte, read map[int64]rules.RoundRead) (*rules.Payout, error) {
	if r, ok := read[id]; ok && (doc == nil && r.Version != 0 || doc != nil && r.Version == 0 && bytes.Equal(r.Record, doc)) {
		return r.Payout, nil // handed over by the round: no copy
	}
	return decodePayout(id, doc)
}
