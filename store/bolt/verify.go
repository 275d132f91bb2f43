package bolt

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"runtime/debug"
	"syscall"
	"time"

	bbolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// A damaged file must be a clear error, never a panic in the middle of serving (a
// truncated file or zeroed pages once ended the process with a raw bbolt panic; a damaged
// branch page was served until a page panicked). QuickCheck reads the file's structure with
// plain reads before bbolt maps it; Check runs bbolt's full consistency check.

// The file format's constants (go.etcd.io/bbolt/internal/common, not importable).
const (
	pageHeaderSize  = 16
	elementSize     = 16 // branch and leaf page elements alike
	metaMagic       = 0xED0CDAED
	metaVersion     = 2
	flagBranch      = 0x01
	flagLeaf        = 0x02
	flagFreelist    = 0x10
	bucketLeafFlag  = 0x01
	noFreelist      = ^uint64(0)
	metaChecksumEnd = 56 // the meta's bytes the checksum covers
)

// errInUse is QuickCheck's answer while another process holds the file.
var errInUse = errors.New("in use by another process")

var ne = binary.NativeEndian // bbolt writes the machine's byte order

type fileMeta struct {
	pageSize           uint64
	root, freelist, hw uint64 // hw: the high-water mark, the first page id past the file's pages
	txid               uint64
}

// readMeta reads and validates the meta page at off.
func readMeta(f io.ReaderAt, off int64) (fileMeta, error) {
	buf := make([]byte, pageHeaderSize+64)
	if _, err := f.ReadAt(buf, off); err != nil {
		return fileMeta{}, err
	}
	m := buf[pageHeaderSize:]
	if ne.Uint32(m[0:]) != metaMagic {
		return fileMeta{}, errors.New("not a bbolt meta page (magic)")
	}
	if ne.Uint32(m[4:]) != metaVersion {
		return fileMeta{}, fmt.Errorf("format version %d", ne.Uint32(m[4:]))
	}
	h := fnv.New64a()
	h.Write(m[:metaChecksumEnd])
	if h.Sum64() != ne.Uint64(m[56:]) {
		return fileMeta{}, errors.New("checksum mismatch")
	}
	return fileMeta{pageSize: uint64(ne.Uint32(m[8:])), root: ne.Uint64(m[16:]), freelist: ne.Uint64(m[32:]),
		hw: ne.Uint64(m[40:]), txid: ne.Uint64(m[48:])}, nil
}

// QuickCheck reads the structure of the database file at path without trusting it: a meta
// page that validates, a file as long as its pages, and every page of every bucket's tree
// where its parent says (a branch or leaf page carrying its own id, within the file); the
// records in the leaves are not read. It takes a read of each page header: about a second
// for a file of several GiB. A missing or empty file passes: it is a new database.
func QuickCheck(path string) (err error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	// The lock bbolt takes, shared: a server writing the file holds it exclusively, and its
	// pages in the middle of a commit are no finding.
	for start := time.Now(); ; time.Sleep(50 * time.Millisecond) {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) || time.Since(start) > time.Second {
			return errInUse
		}
	}
	defer syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	st, err := f.Stat()
	if err != nil || st.Size() == 0 {
		return err
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("unreadable structure: %v", p)
		}
	}()
	m0, err0 := readMeta(f, 0)
	var meta fileMeta
	var err1 error
	for _, ps := range []uint64{m0.pageSize, uint64(os.Getpagesize()), 4096, 16384, 65536} {
		if ps == 0 {
			continue
		}
		var m1 fileMeta
		if m1, err1 = readMeta(f, int64(ps)); err1 == nil {
			meta = m1
			break
		}
	}
	switch {
	case err0 != nil && err1 != nil:
		return fmt.Errorf("neither meta page is valid (page 0: %v; page 1: %v)", err0, err1)
	case err0 == nil && (err1 != nil || m0.txid > meta.txid):
		meta = m0
	}
	if meta.pageSize < 512 || meta.pageSize > 1<<20 {
		return fmt.Errorf("meta page: page size %d", meta.pageSize)
	}
	if need := int64(meta.hw * meta.pageSize); st.Size() < need {
		return fmt.Errorf("truncated: the file is %d bytes, its pages reach %d", st.Size(), need)
	}
	w := walker{f: f, meta: meta, seen: map[uint64]bool{}}
	if meta.freelist != noFreelist {
		if err := w.page(meta.freelist, "the freelist", false, flagFreelist); err != nil {
			return err
		}
	}
	return w.page(meta.root, "the root bucket", true, flagBranch|flagLeaf)
}

type walker struct {
	f    io.ReaderAt
	meta fileMeta
	seen map[uint64]bool
}

// page checks page id of a tree and what it points to. Leaves are read whole only in the
// root bucket (to find the buckets); elsewhere their header is enough.
func (w *walker) page(id uint64, where string, readLeaves bool, want uint16) error {
	if id < 2 || id >= w.meta.hw {
		return fmt.Errorf("%s: page %d is outside the file's pages (2 to %d)", where, id, w.meta.hw-1)
	}
	if w.seen[id] {
		return fmt.Errorf("%s: page %d is reached twice", where, id)
	}
	w.seen[id] = true
	ps := w.meta.pageSize
	hdr := make([]byte, pageHeaderSize)
	if _, err := w.f.ReadAt(hdr, int64(id*ps)); err != nil {
		return fmt.Errorf("%s: page %d: %v", where, id, err)
	}
	gotID, flags, count, overflow := ne.Uint64(hdr), ne.Uint16(hdr[8:]), int(ne.Uint16(hdr[10:])), uint64(ne.Uint32(hdr[12:]))
	if gotID != id {
		return fmt.Errorf("%s: page %d says it is page %d (overwritten or zeroed)", where, id, gotID)
	}
	if flags&want == 0 || flags&^want != 0 {
		return fmt.Errorf("%s: page %d has type flags %#x, want %#x", where, id, flags, want)
	}
	if id+overflow >= w.meta.hw {
		return fmt.Errorf("%s: page %d overflows past the file's pages", where, id)
	}
	if flags == flagFreelist || flags == flagLeaf && !readLeaves {
		return nil
	}
	buf := make([]byte, (1+overflow)*ps)
	if _, err := w.f.ReadAt(buf, int64(id*ps)); err != nil {
		return fmt.Errorf("%s: page %d: %v", where, id, err)
	}
	if pageHeaderSize+count*elementSize > len(buf) {
		return fmt.Errorf("%s: page %d claims %d elements", where, id, count)
	}
	for i := range count {
		e := pageHeaderSize + i*elementSize
		if flags == flagBranch {
			if err := w.page(ne.Uint64(buf[e+8:]), where, readLeaves, flagBranch|flagLeaf); err != nil {
				return err
			}
			continue
		}
		eflags, pos, ksize, vsize := ne.Uint32(buf[e:]), int(ne.Uint32(buf[e+4:])), int(ne.Uint32(buf[e+8:])), int(ne.Uint32(buf[e+12:]))
		if e+pos+ksize+vsize > len(buf) {
			return fmt.Errorf("%s: page %d: element %d lies past the page", where, id, i)
		}
		if eflags&bucketLeafFlag == 0 {
			continue
		}
		key, val := buf[e+pos:e+pos+ksize], buf[e+pos+ksize:e+pos+ksize+vsize]
		if len(val) < 16 {
			return fmt.Errorf("%s: page %d: bucket %q has a short header", where, id, key)
		}
		if root := ne.Uint64(val); root != 0 { // 0: an inline bucket, inside this page
			if err := w.page(root, fmt.Sprintf("bucket %q", key), false, flagBranch|flagLeaf); err != nil {
				return err
			}
		}
	}
	return nil
}

// Check runs bbolt's full consistency check (every page reachable once, none both used and
// free, keys in order) on the file at path, opened read-only: the server must be stopped.
// It returns every finding.
func Check(path string) (findings []string, err error) {
	if err := QuickCheck(path); errors.Is(err, errInUse) {
		return nil, openError(path, berrors.ErrTimeout)
	} else if err != nil {
		return []string{err.Error()}, nil
	}
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		return nil, openError(path, err)
	}
	defer db.Close()
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	err = db.View(func(tx *bbolt.Tx) error {
		for e := range tx.Check() {
			findings = append(findings, e.Error())
		}
		return nil
	})
	return findings, err
}
