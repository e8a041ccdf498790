package registry

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"sync/atomic"
)

// zipDirBytesPerEntry is the central-directory room allowed per entry of
// MaxArchiveEntries: the 46-byte fixed header and, on average, 466 bytes of
// name, extra field and comment (real archives use a tenth of that).
// archive/zip keeps all of the directory in memory, so this bounds what it
// retains to about MaxArchiveEntries × (512 bytes + a File struct).
const zipDirBytesPerEntry = 512

// Zip record signatures and sizes (APPNOTE.TXT 4.3).
const (
	zipDirHeaderSig  = "PK\x01\x02"
	zipDirEndSig     = "PK\x05\x06"
	zipDir64LocSig   = "PK\x06\x07"
	zipDir64EndSig   = "PK\x06\x06"
	zipDirHeaderLen  = 46
	zipDirEndLen     = 22
	zipDir64LocLen   = 20
	zipDir64EndLen   = 56
	zipMaxCommentLen = 1<<16 - 1
)

// checkZipDirectory bounds a zip's central directory before archive/zip
// reads it, which it does whole, keeping a File per entry: 11 million
// empty entries (under MaxArchiveBytes) cost 2 GiB of memory before its
// entry count could be checked. It reads the end-of-central-directory
// record (and the zip64 one) for the entry count and directory size the
// archive claims, then walks the directory's fixed-size headers without
// keeping them, as archive/zip will read them, counting entries and bytes.
// It returns the directory's size as walked.
func checkZipDirectory(r io.ReaderAt, size int64, maxEntries int) (int64, error) {
	maxDir := int64(maxEntries) * zipDirBytesPerEntry
	tail := min(size, zipDirEndLen+zipMaxCommentLen)
	buf := make([]byte, tail)
	if _, err := r.ReadAt(buf, size-tail); err != nil {
		return 0, err
	}
	i := bytes.LastIndex(buf, []byte(zipDirEndSig))
	if i < 0 || len(buf)-i < zipDirEndLen {
		return 0, nil // not a zip archive/zip can read; it says why
	}
	end := buf[i:]
	endOffset := size - tail + int64(i)
	records := uint64(binary.LittleEndian.Uint16(end[10:]))
	dirSize := uint64(binary.LittleEndian.Uint32(end[12:]))
	dirOffset := uint64(binary.LittleEndian.Uint32(end[16:]))
	if records == 0xffff || dirSize == 0xffffffff || dirOffset == 0xffffffff {
		if r64, s64, o64, ok := zipDir64End(r, endOffset); ok {
			records, dirSize, dirOffset = r64, s64, o64
		}
	}
	if records > uint64(maxEntries) {
		return 0, limitExceeded("zip archive claims %d entries, more than MaxArchiveEntries (%d)", records, maxEntries)
	}
	if dirSize > uint64(maxDir) {
		return 0, limitExceeded("zip archive claims a %d-byte directory, more than %d bytes (MaxArchiveEntries × %d)", dirSize, maxDir, zipDirBytesPerEntry)
	}

	// Where archive/zip starts reading: the offset is relative to the
	// archive's start, which data prepended to it moves (a self-extracting
	// archive); archive/zip trusts the offset as is when a header is there.
	start := int64(dirOffset)
	if base := endOffset - int64(dirSize) - int64(dirOffset); base > 0 && !zipHeaderAt(r, start) {
		start += base
	}
	if start < 0 || start >= size {
		return 0, nil
	}
	br := bufio.NewReaderSize(io.NewSectionReader(r, start, size-start), 64<<10)
	var hdr [zipDirHeaderLen]byte
	var entries int
	var walked int64
	for {
		if _, err := io.ReadFull(br, hdr[:]); err != nil || string(hdr[:4]) != zipDirHeaderSig {
			return walked, nil
		}
		rest := int(binary.LittleEndian.Uint16(hdr[28:])) + int(binary.LittleEndian.Uint16(hdr[30:])) + int(binary.LittleEndian.Uint16(hdr[32:]))
		if _, err := br.Discard(rest); err != nil {
			return walked, nil
		}
		entries++
		walked += int64(zipDirHeaderLen + rest)
		if entries > maxEntries {
			return 0, limitExceeded("zip archive has more than MaxArchiveEntries (%d) entries", maxEntries)
		}
		if walked > maxDir {
			return 0, limitExceeded("zip archive's directory is larger than %d bytes (MaxArchiveEntries × %d)", maxDir, zipDirBytesPerEntry)
		}
	}
}

// zipDir64End reads the zip64 end-of-central-directory record that the
// locator before the end record at endOffset points to.
func zipDir64End(r io.ReaderAt, endOffset int64) (records, size, offset uint64, ok bool) {
	if endOffset < zipDir64LocLen {
		return 0, 0, 0, false
	}
	var loc [zipDir64LocLen]byte
	if _, err := r.ReadAt(loc[:], endOffset-zipDir64LocLen); err != nil || string(loc[:4]) != zipDir64LocSig {
		return 0, 0, 0, false
	}
	at := binary.LittleEndian.Uint64(loc[8:])
	if at > uint64(endOffset) {
		return 0, 0, 0, false
	}
	var rec [zipDir64EndLen]byte
	if _, err := r.ReadAt(rec[:], int64(at)); err != nil || string(rec[:4]) != zipDir64EndSig {
		return 0, 0, 0, false
	}
	return binary.LittleEndian.Uint64(rec[32:]), binary.LittleEndian.Uint64(rec[40:]), binary.LittleEndian.Uint64(rec[48:]), true
}

func zipHeaderAt(r io.ReaderAt, off int64) bool {
	var sig [4]byte
	_, err := r.ReadAt(sig[:], off)
	return err == nil && string(sig[:]) == zipDirHeaderSig
}

// budgetReaderAt fails reads once budget bytes were read while armed: it
// bounds what archive/zip reads of the directory to what
// checkZipDirectory walked (plus its end-record search and buffering), in
// case the two ever disagree on where the directory starts.
type budgetReaderAt struct {
	r      io.ReaderAt
	budget atomic.Int64 // negative: disarmed
}

var errZipDirGrew = errors.New("zip archive's directory is larger than it was when checked")

func (b *budgetReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if b.budget.Load() >= 0 && b.budget.Add(-int64(len(p))) < 0 {
		return 0, errZipDirGrew
	}
	return b.r.ReadAt(p, off)
}
