package inmem

// Test hooks.

// WithParallelMin makes every scan of at least n floats parallel, so small
// test databases exercise the split-and-merge path.
func WithParallelMin(n int) Option {
	return func(db *DB) error {
		db.parallelMin = n
		return nil
	}
}

// SetGeneric switches the assembly kernel off (on amd64) and returns a
// function that restores it.
func SetGeneric() (restore func()) {
	old := useAVX2
	useAVX2 = false
	return func() { useAVX2 = old }
}

// Cap returns how many vectors fit before the next reallocation.
func (db *DB) Cap() int {
	db.mu.RLock()
	defer db.mu.RUnlock()
	return min(cap(db.ids), db.rowCap())
}

// SetPortableIO makes Export and Import encode element by element, as they
// do on big-endian machines, and returns a function that restores the fast
// path.
func SetPortableIO() (restore func()) {
	old := littleEndian
	littleEndian = false
	return func() { littleEndian = old }
}

// Rescored returns how many rows codes scans have rescored in float32 so far.
func (db *DB) Rescored() int64 { return db.rescored.Load() }

// ResetRescored zeroes the rescoring counter.
func (db *DB) ResetRescored() { db.rescored.Store(0) }

// AdviseHugePages is adviseHugePages, for the bandwidth benchmark's buffer.
func AdviseHugePages(s []float32) { adviseHugePages(s) }

// SegmentRows is the number of rows of a full segment at dimension dim.
func SegmentRows(dim int) int { return segmentRows(dim) }

// RowAddr is the address of row r's first float, to see whether growth
// moved it.
func (db *DB) RowAddr(r int) *float32 {
	db.mu.RLock()
	defer db.mu.RUnlock()
	return &db.row(r)[0]
}

// SetNoVNNI switches the AVX-512 VNNI kernels off (the AVX2 ones stay) and
// returns a function that restores them.
func SetNoVNNI() (restore func()) {
	old := useVNNI
	useVNNI = false
	return func() { useVNNI = old }
}

// WithCodesAlways makes every search of a database with codes scan them,
// however few its rows.
func WithCodesAlways() Option {
	return func(db *DB) error {
		db.codesMin = -1
		return nil
	}
}

// SetNoAVX512 switches the AVX-512 float32 batch tile off (the AVX2 one
// stays) and returns a function that restores it.
func SetNoAVX512() (restore func()) {
	old := useAVX512
	useAVX512 = false
	return func() { useAVX512 = old }
}

// FMAPeak runs n rounds of 768 float32 flops of 512-bit fused
// multiply-adds and nothing else, and reports whether the CPU could
// (AVX-512): the peak the batch benchmark compares the float32 tile with.
func FMAPeak(n int) bool { return fmaPeak(n) }

// ColumnBlocks returns how many (query, block) pairs searches have scored
// from the column codes (WithColumns) so far.
func (db *DB) ColumnBlocks() int64 { return db.colBlocks.Load() }

// SetNoBF16 switches the float32 batch tile's bfloat16 pass off (the
// float32 tiles stay) and returns a function that restores it.
func SetNoBF16() (restore func()) {
	old := useBF16
	useBF16 = false
	return func() { useBF16 = old }
}

// HasBF16 reports whether the float32 batch tile takes the bfloat16 pass
// on this CPU.
func HasBF16() bool { return useBF16 && useAVX512 && useAVX2 }
