package bolt

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	gojson "github.com/goccy/go-json"
	bbolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"payouts/rules"
)

// Buckets. Keys are sortable: big-endian integers, or strings joined by a NUL byte (no
// merchant id or order id may contain one).
var (
	bMeta        = []byte("meta")
	bMerchants   = []byte("merchants")    // merchantId → Merchant JSON
	bPayouts     = []byte("payout_core")  // be64(id) → payoutCore JSON (record.go); its sequence numbers payouts
	bPayoutState = []byte("payout_state") // be64(id) → payoutState JSON
	bPayoutsV1   = []byte("payouts")      // be64(id) → whole Payout JSON: the format before record.go, migrated on Open
	bOrders      = []byte("orders")       // merchantId 0 orderId → be64(id)
	bLists       = []byte("payout_lists") // merchantId 0 stage 0 status 0 be64(id) → nil: the list index (lists.go)
	bByMerch     = []byte("idx_merchant") // merchantId 0 be64(id) → nil: before payout_lists, upgraded on Open
	bByStage     = []byte("idx_stage")    // merchantId 0 stage 0 be64(id) → nil: the same
	bByStatus    = []byte("idx_status")   // merchantId 0 status 0 be64(id) → nil: the same
	bBalances    = []byte("balances")     // merchantId 0 country 0 currency → Balance JSON
	bDue         = []byte("due")          // be64(unix nanos) be64(id) → status: the lifecycle queue before due.go, dropped on Open
	bDueByID     = []byte("due_by_id")    // be64(id) → the key in bDue: before record.go, migrated on Open
	bOutbox      = []byte("outbox")       // be64(seq) → Event JSON
	bSessions    = []byte("sessions")     // token → expiry + data (scs)
	bCards       = []byte("cards")        // merchantId 0 docType 0 docNumber → sealed card JSON
	bCardByPay   = []byte("cards_payout") // be64(payoutId) token → a card entered for one payout
	bMisc        = []byte("misc")         // small per-feature records
	allBuckets   = [][]byte{bMeta, bMerchants, bPayouts, bPayoutState, bOrders, bLists,
		bBalances, bOutbox, bSessions, bCards, bCardByPay, bMisc, bOutboxSent, bOutboxDead, bMailbox, bOutboxDue,
		bEntries, bUsers, bUserEmails, bAudit, bBatches, bBatchIDs, bBatchMerch, bBatchItems, bBatchRun}
)

// ErrNotFound is returned when a record does not exist.
var ErrNotFound = rules.ErrNotFound

// DB is the service's database.
type DB struct {
	bdb  *bbolt.DB
	path string
	// pageSize is the file's page size, read at open: bbolt's Info reads the map's address,
	// which a writer growing the file replaces, so it is not for a reader outside a
	// transaction.
	pageSize int
	writer   *committer
	grower   *grower  // extends the file ahead of the writer (grow.go); nil without fsync
	trimmer  *trimmer // gives back the map's pages past a budget (trim.go); nil without one
	cores    coreCache
	due      *dueQueue // the lifecycle's queue, in memory (due.go)

	// stepClaims and eventClaims are the claims of the lifecycle queue (by payout id) and of
	// the outbox (by seq): claims.go.
	stepClaims  claimTable[int64]
	eventClaims claimTable[uint64]
}

// Options tune Open.
type Options struct {
	// NoSync turns fsync off: only for tests that do not test durability.
	NoSync bool
	// ReadOnly opens the file to read (payouts check): nothing is created or migrated, and
	// every write fails.
	ReadOnly bool
	// Fault, for tests only, runs in each group commit's transaction before it commits: its
	// error fails the commit (a full disk), its wait stalls the writer.
	Fault func() error

	// Trace, when set, spans the group writer's commits and the writes waiting for them
	// (trace.go); nil traces nothing.
	Trace rules.Tracer

	// MappedBudget, when above zero, is how much of the file's pages the process may hold
	// mapped before they are given back (trim.go): a part of the machine's memory.
	MappedBudget int64

	// Now, when set (tests), is the clock the writer's watchdog reads instead of time.Now: a
	// test moves it past StallAfter while a commit waits, instead of waiting that long.
	Now func() time.Time
}

// openError says why bbolt could not open path: another process holds it, or what bbolt said.
func openError(path string, err error) error {
	if errors.Is(err, berrors.ErrTimeout) {
		return fmt.Errorf("database %s is in use by another process (is a payouts server already running on this data directory?)", path)
	}
	return fmt.Errorf("open database %s: %w", path, err)
}

// Open opens (or creates) the database file. A file held by another process fails after a
// second with a clear message rather than hanging (bbolt locks the file).
func Open(path string, opt Options) (*DB, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	// The map of the file grows as bbolt chooses (doubling to 1 GiB, then by 1 GiB). A page
	// read through the map stays in the process's resident set until the map is replaced;
	// mapped at 1 GiB from the start, every page the server ever read stayed (RSS followed the
	// file: 358 MiB after ratio.sh); growing, each remap starts afresh (149 MiB), at no cost
	// measured in throughput.
	if err := QuickCheck(path); errors.Is(err, errInUse) {
		return nil, openError(path, berrors.ErrTimeout)
	} else if err != nil {
		return nil, fmt.Errorf("database %s is damaged: %v. Restore it from a backup with the server stopped "+
			"(`payouts backup --out FILE` writes one); `payouts check --data %s` runs the full check", path, err, filepath.Dir(path))
	}
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{
		Timeout:      time.Second,
		NoSync:       opt.NoSync,
		FreelistType: bbolt.FreelistMapType,
		ReadOnly:     opt.ReadOnly,
	})
	if err != nil {
		return nil, openError(path, err)
	}
	if opt.ReadOnly {
		return &DB{bdb: db, path: path, pageSize: db.Info().PageSize, writer: newCommitter(db, nil, nil, nil), due: newDueQueue()}, nil
	}
	err = db.Update(func(tx *bbolt.Tx) error {
		for _, b := range allBuckets {
			if _, err := tx.CreateBucketIfNotExists(b); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil {
		err = migratePayouts(db)
	}
	if err == nil {
		_, err = upgradeLists(db, migrationChunk, -1)
	}
	if err == nil {
		err = db.Update(func(tx *bbolt.Tx) error { return openEntries(tx, time.Now()) })
	}
	var due *dueQueue
	if err == nil {
		due, _, err = loadDue(db)
	}
	if err != nil {
		db.Close()
		return nil, err
	}
	s := &DB{bdb: db, path: path, pageSize: db.Info().PageSize, writer: newCommitter(db, opt.Fault, opt.Trace, opt.Now), due: due}
	if !opt.NoSync {
		s.grower = startGrower(db, path)
	}
	if opt.MappedBudget > 0 {
		s.trimmer = startTrimmer(db, opt.MappedBudget)
	}
	return s, nil
}

// WriterStalled says why the group writer cannot be relied on, or "" (rules.WriterHealth).
func (s *DB) WriterStalled() string { return s.writer.stalled(s.writer.now()) }

// Gauges are the writer's state and the file's size for /metrics (rules.GaugeSource).
func (s *DB) Gauges() []rules.Gauge {
	stalled := 0.0
	if s.WriterStalled() != "" {
		stalled = 1
	}
	return []rules.Gauge{
		{Name: "payouts_writer_stalled", Help: "1 while the database writer has not committed for 5 s with writes waiting, or its last commit failed for lack of space (/readyz says why).", Value: stalled},
		{Name: "payouts_writer_waiting", Help: "Payout writes handed to the database writer and not yet answered.", Value: float64(s.writer.waiting.Load())},
		{Name: "payouts_db_file_bytes", Help: "Size of the database file: it grows as the data does and never shrinks.", Value: s.fileBytes()},
		{Name: "payouts_db_free_bytes", Help: "Space inside the database file that was freed and that writes reuse before the file grows.", Value: s.freeBytes()},
	}
}

// fileBytes is the size of the database file; 0 when it cannot be read.
func (s *DB) fileBytes() float64 {
	fi, err := os.Stat(s.path)
	if err != nil {
		return 0
	}
	return float64(fi.Size())
}

// freeBytes is the space of the file's free pages, those pending release to older readers
// included, as of the last commit.
func (s *DB) freeBytes() float64 {
	st := s.bdb.Stats()
	return float64(st.FreePageN+st.PendingPageN) * float64(s.pageSize)
}

// Close stops the writer and closes the file.
func (s *DB) Close(ctx context.Context) error {
	if s.grower != nil {
		s.grower.stop()
	}
	if s.trimmer != nil {
		s.trimmer.stop()
	}
	s.writer.close()
	var err error
	if !s.bdb.IsReadOnly() {
		// A queue not saved (a full disk) is found again in the states at the next Open.
		if err = s.due.save(s.bdb); errors.Is(err, berrors.ErrDatabaseNotOpen) {
			err = nil // closed before
		}
	}
	if cerr := s.bdb.Close(); err == nil {
		err = cerr
	}
	return err
}

// Ping reports whether the database is open and readable.
func (s *DB) Ping(ctx context.Context) error {
	return s.bdb.View(func(tx *bbolt.Tx) error {
		if tx.Bucket(bMeta) == nil {
			return errors.New("database not initialised")
		}
		return nil
	})
}

// Backup writes a consistent copy of the whole database to w while the server runs.
func (s *DB) Backup(ctx context.Context, w io.Writer) (int64, error) {
	var n int64
	err := s.bdb.View(func(tx *bbolt.Tx) error {
		var err error
		n, err = tx.WriteTo(w)
		return err
	})
	return n, err
}

// TakeMeta reads and removes a value of the meta bucket in one transaction; nil when absent.
func (s *DB) TakeMeta(key string) ([]byte, error) {
	var v []byte
	err := s.bdb.Update(func(tx *bbolt.Tx) error {
		b := tx.Bucket(bMeta)
		v = bytes.Clone(b.Get([]byte(key)))
		return b.Delete([]byte(key))
	})
	return v, err
}

func be64(n uint64) []byte {
	b := make([]byte, 8)
	binary.BigEndian.PutUint64(b, n)
	return b
}

func key(parts ...string) []byte {
	n := 0
	for _, p := range parts {
		n += len(p) + 1
	}
	b := make([]byte, 0, n+8)
	for i, p := range parts {
		if i > 0 {
			b = append(b, 0)
		}
		b = append(b, p...)
	}
	return b
}

// indexKey is key(parts...) 0 be64(id), built in one allocation: the list indexes' keys,
// written at every create and step.
func indexKey(id int64, parts ...string) []byte {
	n := 9
	for _, p := range parts {
		n += len(p) + 1
	}
	b := make([]byte, 0, n)
	for i, p := range parts {
		if i > 0 {
			b = append(b, 0)
		}
		b = append(b, p...)
	}
	b = append(b, 0)
	return binary.BigEndian.AppendUint64(b, uint64(id))
}

func keyID(prefix []byte, id int64) []byte {
	b := make([]byte, 0, len(prefix)+9)
	b = append(b, prefix...)
	b = append(b, 0)
	return binary.BigEndian.AppendUint64(b, uint64(id))
}

// Records are JSON. goccy/go-json encodes and decodes them about 3.5 times faster than
// encoding/json (BenchmarkCodec*), which is most of the lifecycle worker's CPU; the format
// is the same, and TestCodecRoundTripsPayouts holds the two to it.
func marshal(v any) ([]byte, error) { return gojson.Marshal(v) }

// unmarshal copies what it keeps, so nothing points into the mmap after the transaction.
func unmarshal(raw []byte, v any) error { return gojson.Unmarshal(raw, v) }

func getJSON(b *bbolt.Bucket, k []byte, v any) error {
	raw := b.Get(k)
	if raw == nil {
		return ErrNotFound
	}
	return unmarshal(raw, v)
}

func putJSON(b *bbolt.Bucket, k []byte, v any) error {
	raw, err := marshal(v)
	if err != nil {
		return err
	}
	return b.Put(k, raw)
}

var _ rules.Storage = (*DB)(nil)
